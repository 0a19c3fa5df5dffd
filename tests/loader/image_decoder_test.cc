#include "ffyolo/image_decoder.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#ifdef FFYOLO_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif

#include "ffr/format.h"
#include "ffyolo/exif.h"
#include "ffyolo/orientation.h"
#include "testing/test_env.h"
#include "tiny_images.h"

namespace ffyolo {
namespace {

using Bytes = std::vector<uint8_t>;

// A smooth colour picture with some edges: JPEG keeps it well above 30 dB at
// quality 95, and every channel differs so that a channel swap shows.
cv::Mat MakeBgr(int width, int height) {
  cv::Mat img(height, width, CV_8UC3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      auto& px = img.at<cv::Vec3b>(y, x);
      px[0] = static_cast<uint8_t>(255 * x / std::max(1, width - 1));
      px[1] = static_cast<uint8_t>(255 * y / std::max(1, height - 1));
      px[2] = static_cast<uint8_t>(128 + 100 * std::sin(x * 0.05) * std::cos(y * 0.07));
    }
  }
  cv::rectangle(img, cv::Rect(width / 4, height / 4, width / 3, height / 3), cv::Scalar(20, 200, 60), cv::FILLED);
  return img;
}

cv::Mat MakeGrey(int width, int height) {
  cv::Mat grey;
  cv::cvtColor(MakeBgr(width, height), grey, cv::COLOR_BGR2GRAY);
  return grey;
}

// The Adobe (inverted) CMYK that prints as `bgr`: each stored value is 255
// minus the ink, K the brightest channel, so R = C * K / 255 and so on.
cv::Mat BgrToInvertedCmyk(const cv::Mat& bgr) {
  cv::Mat cmyk(bgr.rows, bgr.cols, CV_8UC4);
  for (int y = 0; y < bgr.rows; ++y) {
    for (int x = 0; x < bgr.cols; ++x) {
      const cv::Vec3b p = bgr.at<cv::Vec3b>(y, x);
      const int k = std::max({p[0], p[1], p[2]});
      auto ink = [k](int v) { return static_cast<uint8_t>(k == 0 ? 0 : (v * 255 + k / 2) / k); };
      cmyk.at<cv::Vec4b>(y, x) = cv::Vec4b(ink(p[2]), ink(p[1]), ink(p[0]), static_cast<uint8_t>(k));
    }
  }
  return cmyk;
}

Bytes EncodeJpeg(const cv::Mat& pixels, int pixel_format, int subsamp, int flags = 0) {
  tjhandle tj = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(tj, pixels.data, pixels.cols, static_cast<int>(pixels.step), pixels.rows, pixel_format,
                             &buf, &size, subsamp, 95, flags);
  EXPECT_EQ(rc, 0) << tjGetErrorStr2(tj);
  Bytes out(buf, buf + size);
  tjFree(buf);
  tjDestroy(tj);
  return out;
}

Bytes EncodeBgrJpeg(const cv::Mat& bgr, int subsamp = TJSAMP_420, int flags = 0) {
  return EncodeJpeg(bgr, TJPF_BGR, subsamp, flags);
}

// The colour space TurboJPEG reads from a JPEG's header.
int JpegColorspace(const Bytes& jpeg) {
  tjhandle tj = tjInitDecompress();
  int w = 0, h = 0, subsamp = 0, colorspace = -1;
  EXPECT_EQ(tjDecompressHeader3(tj, jpeg.data(), jpeg.size(), &w, &h, &subsamp, &colorspace), 0);
  tjDestroy(tj);
  return colorspace;
}

struct Decoded {
  ffr::Status status;
  cv::Mat image;
  int scale = 0;
};

Decoded Decode(ImageDecoder* decoder, const Bytes& bytes, int min_w = 0, int min_h = 0,
               ImageEncoding encoding = ImageEncoding::kJpeg) {
  Decoded d;
  DecodeOptions options;
  options.min_w = min_w, options.min_h = min_h;
  d.status = decoder->Decode(bytes.data(), bytes.size(), encoding, "sample 7 (test.ffr)", options, &d.image, &d.scale);
  return d;
}

void ExpectDecodesTo(const Bytes& jpeg, const cv::Mat& expected_bgr) {
  ImageDecoder decoder;
  Decoded d = Decode(&decoder, jpeg);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_EQ(d.scale, 1);
  ASSERT_EQ(d.image.type(), CV_8UC3);
  ASSERT_EQ(d.image.size(), expected_bgr.size());
  EXPECT_GT(cv::PSNR(d.image, expected_bgr), 30.0);
}

struct ColourCase {
  const char* name;
  int subsamp;
  int flags;
};

class ColourJpegTest : public ::testing::TestWithParam<ColourCase> {};

TEST_P(ColourJpegTest, DecodesToSourcePixels) {
  const cv::Mat src = MakeBgr(203, 117);  // odd sizes exercise partial MCUs
  ExpectDecodesTo(EncodeBgrJpeg(src, GetParam().subsamp, GetParam().flags), src);
}

INSTANTIATE_TEST_SUITE_P(Subsampling, ColourJpegTest,
                         ::testing::Values(ColourCase{"s420", TJSAMP_420, 0}, ColourCase{"s444", TJSAMP_444, 0},
                                           ColourCase{"s422", TJSAMP_422, 0},
                                           ColourCase{"progressive420", TJSAMP_420, TJFLAG_PROGRESSIVE},
                                           ColourCase{"progressive444", TJSAMP_444, TJFLAG_PROGRESSIVE}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ImageDecoder, GreyJpegComesOutAsThreeEqualChannels) {
  const cv::Mat grey = MakeGrey(150, 99);
  const Bytes jpeg = EncodeJpeg(grey, TJPF_GRAY, TJSAMP_GRAY);
  ASSERT_EQ(JpegColorspace(jpeg), TJCS_GRAY);
  ImageDecoder decoder;
  Decoded d = Decode(&decoder, jpeg);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(d.image.type(), CV_8UC3);
  ASSERT_EQ(d.image.size(), grey.size());
  std::vector<cv::Mat> channels;
  cv::split(d.image, channels);
  EXPECT_EQ(cv::norm(channels[0], channels[1], cv::NORM_INF), 0);
  EXPECT_EQ(cv::norm(channels[0], channels[2], cv::NORM_INF), 0);
  EXPECT_GT(cv::PSNR(channels[0], grey), 30.0);
}

TEST(ImageDecoder, CmykJpegComesOutAsBgr) {
  const cv::Mat src = MakeBgr(160, 96);
  const Bytes jpeg = EncodeJpeg(BgrToInvertedCmyk(src), TJPF_CMYK, TJSAMP_444);
  const int colorspace = JpegColorspace(jpeg);
  ASSERT_TRUE(colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) << colorspace;
  ExpectDecodesTo(jpeg, src);
#ifdef FFYOLO_HAVE_IMGCODECS
  // OpenCV's reading of the same file (what cv2.imread gives Ultralytics).
  const cv::Mat reference = cv::imdecode(jpeg, cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION);
  ImageDecoder decoder;
  Decoded d = Decode(&decoder, jpeg);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  ASSERT_EQ(reference.size(), d.image.size());
  EXPECT_LE(cv::norm(reference, d.image, cv::NORM_INF), 2);
#endif
}

TEST(ImageDecoder, ScaledDecodePicksTheSmallestScaleThatKeepsTheMinimum) {
  const cv::Mat src = MakeBgr(640, 480);
  const Bytes jpeg = EncodeBgrJpeg(src);
  struct Case {
    int min_w, min_h, denominator;
  };
  const Case cases[] = {{320, 240, 2}, {321, 240, 1}, {320, 241, 1}, {80, 60, 8},
                        {81, 60, 4},   {160, 120, 4}, {0, 0, 1},     {640, 480, 1}};
  ImageDecoder decoder;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.min_w) + "x" + std::to_string(c.min_h));
    Decoded d = Decode(&decoder, jpeg, c.min_w, c.min_h);
    ASSERT_TRUE(d.status.ok()) << d.status.ToString();
    EXPECT_EQ(d.scale, c.denominator);
    const tjscalingfactor factor = {1, c.denominator};
    EXPECT_EQ(d.image.cols, TJSCALED(640, factor));
    EXPECT_EQ(d.image.rows, TJSCALED(480, factor));
    cv::Mat shrunk;
    cv::resize(src, shrunk, d.image.size(), 0, 0, cv::INTER_AREA);
    EXPECT_GT(cv::PSNR(d.image, shrunk), 25.0);
  }
}

TEST(ImageDecoder, ScaledSizesRoundUp) {
  // 641 / 8 and 481 / 8 round up to 81 x 61, which still meets an 81 x 61 minimum.
  ImageDecoder decoder;
  Decoded d = Decode(&decoder, EncodeBgrJpeg(MakeBgr(641, 481)), 81, 61);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_EQ(d.scale, 8);
  EXPECT_EQ(d.image.size(), cv::Size(81, 61));
}

void ExpectCorruptionNamingSample(const Decoded& d) {
  EXPECT_TRUE(d.status.IsCorruption()) << d.status.ToString();
  EXPECT_NE(d.status.message().find("sample 7 (test.ffr)"), std::string::npos) << d.status.message();
}

TEST(ImageDecoder, TruncatedJpegIsCorruption) {
  Bytes jpeg = EncodeBgrJpeg(MakeBgr(320, 240));
  jpeg.resize(jpeg.size() / 2);
  ImageDecoder decoder;
  ExpectCorruptionNamingSample(Decode(&decoder, jpeg));
}

// Offset of the first entropy-coded byte: just past the SOS segment.
size_t EntropyDataStart(const Bytes& jpeg) {
  for (size_t i = 2; i + 3 < jpeg.size(); ++i)
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA) return i + 2 + (jpeg[i + 2] << 8 | jpeg[i + 3]);
  ADD_FAILURE() << "no SOS marker";
  return 0;
}

TEST(ImageDecoder, GarbageInEntropyDataIsCorruption) {
  const Bytes clean = EncodeBgrJpeg(MakeBgr(320, 240));
  const size_t start = EntropyDataStart(clean);
  ASSERT_GT(clean.size(), start + 600);
  // Random bytes desynchronise the Huffman decoder, which then runs out of data
  // or leaves some over: libjpeg warnings. Not every garbling shows: Huffman
  // codes resynchronise, and about one in five random patches decodes silently
  // to wrong pixels (as with cv2.imread); this one is caught.
  Bytes noise = clean;
  std::mt19937 rng(7);
  for (size_t i = start + 200; i < start + 400; ++i) noise[i] = static_cast<uint8_t>(rng());
  // Stray markers in the middle of a scan.
  Bytes markers = clean;
  for (size_t i = start + 200; i < start + 400; i += 2) {
    markers[i] = 0xFF;
    markers[i + 1] = 0xD3;
  }
  ImageDecoder decoder;
  ExpectCorruptionNamingSample(Decode(&decoder, noise));
  ExpectCorruptionNamingSample(Decode(&decoder, markers));
  // The decoder is still usable afterwards.
  EXPECT_TRUE(Decode(&decoder, clean).status.ok());
}

TEST(ImageDecoder, EmptyAndNonJpegBytesAreCorruption) {
  ImageDecoder decoder;
  ExpectCorruptionNamingSample(Decode(&decoder, Bytes()));
  ExpectCorruptionNamingSample(Decode(&decoder, Bytes{'n', 'o', 't', ' ', 'a', ' ', 'j', 'p', 'e', 'g'}));
}

TEST(ImageDecoder, TablesOnlyJpegIsCorruption) {
  // SOI, APP0 and DQT, then EOI: a valid abbreviated datastream with no image.
  const Bytes jpeg = EncodeBgrJpeg(MakeBgr(32, 32));
  size_t sof = 2;
  while (sof + 1 < jpeg.size() && !(jpeg[sof] == 0xFF && jpeg[sof + 1] == 0xC0)) ++sof;
  ASSERT_LT(sof + 1, jpeg.size());
  Bytes tables(jpeg.begin(), jpeg.begin() + sof);
  tables.push_back(0xFF);
  tables.push_back(0xD9);
  ImageDecoder decoder;
  const Decoded d = Decode(&decoder, tables);
  ExpectCorruptionNamingSample(d);
  EXPECT_NE(d.status.message().find("only tables"), std::string::npos) << d.status.message();
}

TEST(ImageDecoder, DecodesAGoodImageAfterABrokenHeader) {
  const cv::Mat src = MakeBgr(64, 48);
  const Bytes good = EncodeBgrJpeg(src);
  ImageDecoder decoder;
  for (size_t cut : {size_t{20}, good.size() / 3}) {
    SCOPED_TRACE(cut);
    ExpectCorruptionNamingSample(Decode(&decoder, Bytes(good.begin(), good.begin() + cut)));
    Decoded d = Decode(&decoder, good);
    ASSERT_TRUE(d.status.ok()) << d.status.ToString();
    ASSERT_EQ(d.image.size(), src.size());
    EXPECT_GT(cv::PSNR(d.image, src), 30.0);
  }
}

TEST(ImageDecoder, ReusesItsBufferAcrossSizes) {
  const cv::Mat big = MakeBgr(400, 300);
  const cv::Mat small = MakeBgr(120, 90);
  const Bytes big_jpeg = EncodeBgrJpeg(big);
  const Bytes small_jpeg = EncodeBgrJpeg(small);
  ImageDecoder decoder;
  Decoded first = Decode(&decoder, big_jpeg);
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  const uint8_t* data = first.image.data;
  Decoded second = Decode(&decoder, small_jpeg);
  ASSERT_TRUE(second.status.ok()) << second.status.ToString();
  EXPECT_EQ(second.image.data, data);
  EXPECT_EQ(second.image.size(), small.size());
  EXPECT_GT(cv::PSNR(second.image, small), 30.0);
  Decoded third = Decode(&decoder, big_jpeg);
  ASSERT_TRUE(third.status.ok()) << third.status.ToString();
  EXPECT_EQ(third.image.data, data);
  EXPECT_GT(cv::PSNR(third.image, big), 30.0);
}

// Region decodes against full decodes of the same bytes: every pixel inside
// the region equal to the bit, for each JPEG variant, DCT scale and region
// shape (edges on and off iMCU boundaries, one pixel, touching each image
// edge). The buffer first holds another image of the same size, so pixels
// the region decode did not write still show it: some must, or nothing was
// saved.
struct RegionCase {
  const char* name;
  Bytes jpeg;
};

std::vector<RegionCase> RegionCases() {
  const cv::Mat src = MakeBgr(333, 251);  // odd sizes: partial iMCUs on the right and bottom
  return {{"s420", EncodeBgrJpeg(src, TJSAMP_420)},
          {"s422", EncodeBgrJpeg(src, TJSAMP_422)},
          {"s444", EncodeBgrJpeg(src, TJSAMP_444)},
          {"s440", EncodeBgrJpeg(src, TJSAMP_440)},
          {"progressive420", EncodeBgrJpeg(src, TJSAMP_420, TJFLAG_PROGRESSIVE)},
          {"grey", EncodeJpeg(MakeGrey(333, 251), TJPF_GRAY, TJSAMP_GRAY)},
          {"cmyk", EncodeJpeg(BgrToInvertedCmyk(src), TJPF_CMYK, TJSAMP_444)}};
}

std::vector<cv::Rect> RegionsOf(cv::Size size, std::mt19937* rng) {
  const int w = size.width, h = size.height;
  std::vector<cv::Rect> regions = {{0, 0, w, 1},          {0, h - 1, w, 1},      {0, 0, 1, h},
                                   {w - 1, 0, 1, h},      {w / 2, h / 2, 1, 1},  {16, 16, 16, 16},
                                   {15, 17, 2, 30},       {0, 0, w / 3, h / 3},  {w / 3, h / 3, w - w / 3, h - h / 3},
                                   {8, 0, w - 16, h - 8}, {0, 32, w, h / 4}};
  for (int i = 0; i < 40; ++i) {
    const int x = static_cast<int>((*rng)() % w), y = static_cast<int>((*rng)() % h);
    regions.push_back({x, y, 1 + static_cast<int>((*rng)() % (w - x)), 1 + static_cast<int>((*rng)() % (h - y))});
  }
  return regions;
}

TEST(ImageDecoder, RegionDecodeEqualsFullDecodeInsideTheRegion) {
  std::mt19937 rng(3);
  for (const RegionCase& c : RegionCases()) {
    for (const int min_side : {0, 160, 80}) {  // scales 1, 1/2, 1/4
      SCOPED_TRACE(std::string(c.name) + " min side " + std::to_string(min_side));
      ImageDecoder decoder;
      Decoded full = Decode(&decoder, c.jpeg, min_side, min_side);
      ASSERT_TRUE(full.status.ok()) << full.status.ToString();
      const cv::Mat reference = full.image.clone();
      // Another picture of the same scaled size, to show unwritten pixels.
      const cv::Mat other_src = cv::Scalar::all(255) - MakeBgr(333, 251);
      const Bytes other = EncodeBgrJpeg(other_src, TJSAMP_444);
      int64_t untouched = 0;
      for (const cv::Rect& region : RegionsOf(reference.size(), &rng)) {
        SCOPED_TRACE(::testing::PrintToString(region));
        Decoded before = Decode(&decoder, other, min_side, min_side);
        ASSERT_TRUE(before.status.ok()) << before.status.ToString();
        const cv::Mat previous = before.image.clone();
        DecodeOptions options;
        options.min_w = options.min_h = min_side;
        options.region = region;
        cv::Mat image;
        int scale = 0;
        const ffr::Status st =
            decoder.Decode(c.jpeg.data(), c.jpeg.size(), ImageEncoding::kJpeg, "sample 7", options, &image, &scale);
        ASSERT_TRUE(st.ok()) << st.ToString();
        EXPECT_EQ(scale, full.scale);
        ASSERT_EQ(image.size(), reference.size());
        ASSERT_EQ(cv::norm(image(region), reference(region), cv::NORM_INF), 0);
        cv::Mat same;
        cv::compare(image.reshape(1), previous.reshape(1), same, cv::CMP_EQ);
        untouched += cv::countNonZero(same);
      }
      // Small regions leave most of the image as it was.
      EXPECT_GT(untouched, static_cast<int64_t>(reference.total()) * 3 * 10);
    }
  }
}

TEST(ImageDecoder, RegionOutsideTheImageDecodesItAll) {
  const cv::Mat src = MakeBgr(64, 48);
  const Bytes jpeg = EncodeBgrJpeg(src);
  ImageDecoder decoder;
  DecodeOptions options;
  options.region = cv::Rect(100, 100, 10, 10);
  cv::Mat image;
  int scale = 0;
  ASSERT_TRUE(decoder.Decode(jpeg.data(), jpeg.size(), ImageEncoding::kJpeg, "sample 7", options, &image, &scale).ok());
  EXPECT_GT(cv::PSNR(image, src), 30.0);
}

TEST(ImageDecoder, RegionDecodeReportsDamageInTheRowsItReads) {
  const Bytes clean = EncodeBgrJpeg(MakeBgr(320, 240));
  const size_t start = EntropyDataStart(clean);
  Bytes markers = clean;  // stray markers early in the scan: the rows above any region
  for (size_t i = start + 200; i < start + 400; i += 2) {
    markers[i] = 0xFF;
    markers[i + 1] = 0xD3;
  }
  Bytes truncated = clean;
  truncated.resize(clean.size() / 2);
  ImageDecoder decoder;
  for (const Bytes* bad : {&markers, &truncated}) {
    DecodeOptions options;
    options.region = cv::Rect(100, 200, 50, 40);  // rows past the damage, in the lower half
    cv::Mat image;
    int scale = 0;
    Decoded d;
    d.status = decoder.Decode(bad->data(), bad->size(), ImageEncoding::kJpeg, "sample 7 (test.ffr)", options, &image,
                              &scale);
    ExpectCorruptionNamingSample(d);
  }
  // A libjpeg error unwinds cleanly: the decoder still works, region or not.
  EXPECT_TRUE(Decode(&decoder, clean).status.ok());
  DecodeOptions options;
  options.region = cv::Rect(10, 10, 20, 20);
  cv::Mat image;
  int scale = 0;
  EXPECT_TRUE(decoder.Decode(clean.data(), clean.size(), ImageEncoding::kJpeg, "sample 7", options, &image, &scale).ok());
}

TEST(ImageDecoder, GreyCocoImage) {
  FFYOLO_REQUIRE_SHARED(images, "data/coco128/images/train2017");
  const std::string bytes = testing::ReadFileToString(images + "/000000000086.jpg");
  ASSERT_FALSE(bytes.empty());
  const Bytes jpeg(bytes.begin(), bytes.end());
  ASSERT_EQ(JpegColorspace(jpeg), TJCS_GRAY);
  ImageDecoder decoder;
  Decoded d = Decode(&decoder, jpeg);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_EQ(d.image.type(), CV_8UC3);
  EXPECT_EQ(d.image.size(), cv::Size(512, 640));  // the file's JPEG header: 512 wide, 640 high
}

#ifdef FFYOLO_HAVE_IMGCODECS
// Ultralytics reads images with cv2.imread; the loader must see the same pixels.
TEST(ImageDecoder, MatchesOpenCvOnCoco128) {
  FFYOLO_REQUIRE_SHARED(images, "data/coco128/images/train2017");
  std::vector<cv::String> files;
  cv::glob(images + "/*.jpg", files);
  ASSERT_EQ(files.size(), 128u);
  ImageDecoder decoder;
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    const std::string bytes = testing::ReadFileToString(file);
    const Bytes jpeg(bytes.begin(), bytes.end());
    Decoded d = Decode(&decoder, jpeg);
    ASSERT_TRUE(d.status.ok()) << d.status.ToString();
    const cv::Mat reference = cv::imdecode(jpeg, cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION);
    ASSERT_EQ(reference.size(), d.image.size());
    EXPECT_EQ(cv::norm(reference, d.image, cv::NORM_INF), 0);
  }
}
#endif

// The baseline frame header's height and width (SOF0: length, precision,
// height, width) set to 16384: 268 Mpixels, over PIL's limit.
TEST(ImageDecoder, JpegOverPilsPixelLimitIsRefusedBeforeDecoding) {
  constexpr uint8_t kSof0[] = {0xFF, 0xC0};
  Bytes jpeg = EncodeBgrJpeg(MakeBgr(64, 48));
  const auto sof = std::search(jpeg.begin(), jpeg.end(), std::begin(kSof0), std::end(kSof0));
  ASSERT_NE(sof, jpeg.end());
  for (const int at : {5, 7}) sof[at] = 0x40, sof[at + 1] = 0x00;
  ImageDecoder decoder;
  for (const DecodeOptions& options : {DecodeOptions{}, DecodeOptions{640, 640, {}}, DecodeOptions{0, 0, {0, 0, 8, 8}}}) {
    cv::Mat image;
    int scale = 0;
    const ffr::Status s = decoder.Decode(jpeg.data(), jpeg.size(), ImageEncoding::kJpeg, "bomb.jpg", options, &image, &scale);
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.message().find("bomb.jpg: JPEG of 16384x16384 pixels is over the 178956970"), std::string::npos)
        << s.message();
  }
}

TEST(ImageDecoder, NonJpeg) {
  ImageDecoder decoder;
  if (!ImageDecoder::SupportsOtherEncodings()) {
    // A whole 1x1 24-bit BMP: file header (14 bytes), BITMAPINFOHEADER (40), one row padded to 4 bytes.
    Bytes bmp(58, 0);
    bmp[0] = 'B', bmp[1] = 'M', bmp[2] = 58, bmp[10] = 54, bmp[14] = 40, bmp[18] = 1, bmp[22] = 1, bmp[26] = 1,
    bmp[28] = 24;
    Decoded d = Decode(&decoder, bmp, 0, 0, ImageEncoding::kOther);
    EXPECT_TRUE(d.status.IsNotSupported()) << d.status.ToString();
    EXPECT_NE(d.status.message().find("imgcodecs"), std::string::npos) << d.status.message();
  }
#ifdef FFYOLO_HAVE_IMGCODECS
  const cv::Mat src = MakeBgr(97, 61);
  Bytes png;
  ASSERT_TRUE(cv::imencode(".png", src, png));
  // Grow the buffer first: the PNG must land in it without a reallocation.
  Decoded jpeg = Decode(&decoder, EncodeBgrJpeg(MakeBgr(200, 100)));
  ASSERT_TRUE(jpeg.status.ok()) << jpeg.status.ToString();
  Decoded d = Decode(&decoder, png, 0, 0, ImageEncoding::kPng);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  EXPECT_EQ(d.scale, 1);
  EXPECT_EQ(d.image.data, jpeg.image.data);
  ASSERT_EQ(d.image.type(), CV_8UC3);
  ASSERT_EQ(d.image.size(), src.size());
  EXPECT_EQ(cv::norm(d.image, src, cv::NORM_INF), 0);  // PNG is lossless

  cv::Mat grey_src = MakeGrey(33, 21);
  Bytes grey_png;
  ASSERT_TRUE(cv::imencode(".png", grey_src, grey_png));
  Decoded grey = Decode(&decoder, grey_png, 0, 0, ImageEncoding::kPng);
  ASSERT_TRUE(grey.status.ok()) << grey.status.ToString();
  ASSERT_EQ(grey.image.type(), CV_8UC3);
  cv::Mat expected;
  cv::cvtColor(grey_src, expected, cv::COLOR_GRAY2BGR);
  EXPECT_EQ(cv::norm(grey.image, expected, cv::NORM_INF), 0);

  // IHDR (chunk data from byte 16: width, height) set to 20000 x 10000, its CRC mended: refused from the header.
  Bytes bomb = png;
  for (const int at : {16, 20}) {
    const uint32_t side = at == 16 ? 20000 : 10000;
    for (int i = 0; i < 4; ++i) bomb[at + i] = static_cast<uint8_t>(side >> (24 - 8 * i));
  }
  const uint32_t crc = ffr::Crc32(bomb.data() + 12, 17);  // "IHDR" and its 13 bytes
  for (int i = 0; i < 4; ++i) bomb[29 + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  Decoded refused = Decode(&decoder, bomb, 0, 0, ImageEncoding::kPng);
  ASSERT_TRUE(refused.status.IsCorruption()) << refused.status.ToString();
  EXPECT_NE(refused.status.message().find("PNG of 20000x10000 pixels is over the 178956970"), std::string::npos)
      << refused.status.message();

  // Image data that does not inflate, behind a mended CRC: libpng's error is the Status, and nothing is
  // printed (OpenCV's decode lets libpng print "libpng error: ..." to stderr).
  Bytes junk = png;
  const size_t idat = std::search(junk.begin(), junk.end(), std::begin("IDAT"), std::end("IDAT") - 1) - junk.begin();
  const size_t idat_length = (size_t{junk[idat - 4]} << 24) | (size_t{junk[idat - 3]} << 16) |
                             (size_t{junk[idat - 2]} << 8) | junk[idat - 1];
  std::fill(junk.begin() + idat + 6, junk.begin() + idat + 4 + idat_length, 0xff);  // after zlib's 2-byte header
  const uint32_t idat_crc = ffr::Crc32(junk.data() + idat, 4 + idat_length);
  for (int i = 0; i < 4; ++i) junk[idat + 4 + idat_length + i] = static_cast<uint8_t>(idat_crc >> (24 - 8 * i));
  ::testing::internal::CaptureStderr();
  Decoded junk_decoded = Decode(&decoder, junk, 0, 0, ImageEncoding::kPng);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ExpectCorruptionNamingSample(junk_decoded);
  EXPECT_NE(junk_decoded.status.message().find("PNG image data does not decode (libpng: "), std::string::npos)
      << junk_decoded.status.message();

  png.resize(png.size() / 2);
  ExpectCorruptionNamingSample(Decode(&decoder, png, 0, 0, ImageEncoding::kPng));

  // A WebP header libwebp rejects, with "DICM" at byte 128: cv::imdecode would hand it to GDCM, which aborts.
  Bytes dicom = {'R', 'I', 'F', 'F', 0x3c, 0, 0, 0, 'W', 'E', 'B', 'P', 'V', 'P', '8', 'L', 'V', 0, 0x29, 0x3a, 0x2f};
  dicom.resize(128, 'T');
  dicom.insert(dicom.end(), {'D', 'I', 'C', 'M', 0});
  Decoded odd = Decode(&decoder, dicom, 0, 0, ImageEncoding::kOther);
  ExpectCorruptionNamingSample(odd);
  EXPECT_NE(odd.status.message().find("OpenCV would read it as DICOM"), std::string::npos) << odd.status.message();

  // A BMP one byte short, which OpenCV would report on stderr itself: refused from its header, and quietly.
  Bytes bmp;
  ASSERT_TRUE(cv::imencode(".bmp", MakeBgr(41, 30), bmp));
  bmp.pop_back();
  ::testing::internal::CaptureStderr();
  Decoded cut = Decode(&decoder, bmp, 0, 0, ImageEncoding::kOther);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ExpectCorruptionNamingSample(cut);
  EXPECT_NE(cut.status.message().find("truncated BMP"), std::string::npos) << cut.status.message();
#else
  GTEST_SKIP() << "the test itself was built without imgcodecs and cannot encode a PNG";
#endif
}


// --- EXIF orientation (orientation.h, DecodeOptions::orientation) -----------------------------------

Bytes Tagged(const Bytes& jpeg, int orientation) {
  const std::string tagged =
      testing::WithExifOrientation(std::string(jpeg.begin(), jpeg.end()), static_cast<uint8_t>(orientation));
  return Bytes(tagged.begin(), tagged.end());
}

Decoded DecodeViewed(ImageDecoder* decoder, const Bytes& bytes, int orientation, int min_side = 0,
                     const cv::Rect& region = cv::Rect()) {
  Decoded d;
  DecodeOptions options;
  options.min_w = options.min_h = min_side;
  options.region = region;
  options.orientation = orientation;
  d.status = decoder->Decode(bytes.data(), bytes.size(), ImageEncoding::kJpeg, "sample 7", options, &d.image, &d.scale);
  return d;
}

// A viewed region's stored pixels and back, and each stored pixel lands where OrientImage puts it.
TEST(Orientation, RegionsMapAsThePixelsMove) {
  const cv::Size stored(7, 5);
  std::mt19937 rng(5);
  for (int o = 1; o <= 8; ++o) {
    SCOPED_TRACE("orientation " + std::to_string(o));
    EXPECT_EQ(ViewedSize(stored, o), OrientationSwapsSides(o) ? cv::Size(5, 7) : stored);
    for (int y = 0; y < stored.height; ++y)
      for (int x = 0; x < stored.width; ++x) {
        cv::Mat marker = cv::Mat::zeros(stored, CV_8UC3);
        marker.at<cv::Vec3b>(y, x) = cv::Vec3b(255, 255, 255);
        cv::Mat viewed;
        OrientImage(marker, o, &viewed);
        ASSERT_EQ(viewed.size(), ViewedSize(stored, o));
        cv::Point at;
        cv::minMaxLoc(viewed.reshape(1, viewed.rows * viewed.cols), nullptr, nullptr, nullptr, &at);
        const cv::Point seen(at.y % viewed.cols, at.y / viewed.cols);
        EXPECT_EQ(ViewedRegion(cv::Rect(x, y, 1, 1), stored, o), cv::Rect(seen, cv::Size(1, 1))) << x << "," << y;
        EXPECT_EQ(StoredRegion(cv::Rect(seen, cv::Size(1, 1)), stored, o), cv::Rect(x, y, 1, 1));
      }
    for (const cv::Rect& r : RegionsOf(stored, &rng))
      EXPECT_EQ(StoredRegion(ViewedRegion(r, stored, o), stored, o), r);
    const cv::Mat picture = MakeBgr(stored.width, stored.height);
    cv::Mat viewed, back;
    OrientImage(picture, o, &viewed);
    OrientImage(viewed, InverseOrientation(o), &back);
    EXPECT_EQ(cv::norm(back, picture, cv::NORM_INF), 0) << "InverseOrientation undoes it";
    // A box on the stored pixels lands, turned by TurnBoxToViewed (yolo-pack --exif apply), where its pixels go.
    for (const cv::Rect& region : RegionsOf(stored, &rng)) {
      const cv::Rect r = region & cv::Rect(cv::Point(), stored);
      if (r.empty()) continue;
      cv::Mat marker = cv::Mat::zeros(stored, CV_8UC1);
      marker(r).setTo(255);
      cv::Mat turned;
      OrientImage(marker, o, &turned);
      double cx = r.x + r.width / 2.0, cy = r.y + r.height / 2.0, w = r.width, h = r.height;
      TurnBoxToViewed(o, stored.width, stored.height, &cx, &cy, &w, &h);
      std::vector<cv::Point> lit;
      cv::findNonZero(turned, lit);
      EXPECT_EQ(cv::boundingRect(lit), cv::Rect(static_cast<int>(cx - w / 2), static_cast<int>(cy - h / 2),
                                                   static_cast<int>(w), static_cast<int>(h)))
          << ::testing::PrintToString(r);
    }
  }
}

#ifdef FFYOLO_HAVE_IMGCODECS
// A photo tagged with each of the eight orientations decodes to what cv::imread(IMREAD_COLOR) gives for
// it, bit for bit: a picture with partial iMCUs in each subsampling, and real coco128 photos. (Not
// the CMYK one: OpenCV converts CMYK with other roundings, CmykJpegComesOutAsBgr.)
TEST(Orientation, EveryOrientationDecodesAsOpenCvReadsIt) {
  std::vector<std::pair<std::string, Bytes>> photos;
  for (const RegionCase& c : RegionCases())
    if (std::string(c.name) != "cmyk") photos.emplace_back(c.name, c.jpeg);
  const std::string images = testing::SharedPath("data/coco128/images/train2017");
  if (!images.empty()) {
    std::vector<cv::String> files;
    cv::glob(images + "/*.jpg", files);
    for (size_t i = 0; i < files.size() && i < 6; ++i) {
      const std::string bytes = testing::ReadFileToString(files[i]);
      photos.emplace_back(files[i], Bytes(bytes.begin(), bytes.end()));
    }
  }
  ImageDecoder decoder;
  for (const auto& [name, jpeg] : photos)
    for (int o = 1; o <= 8; ++o) {
      SCOPED_TRACE(name + ", orientation " + std::to_string(o));
      const Bytes tagged = Tagged(jpeg, o);
      ASSERT_EQ(JpegExifOrientation(tagged.data(), tagged.size()), o);
      const Decoded d = DecodeViewed(&decoder, tagged, o);
      ASSERT_TRUE(d.status.ok()) << d.status.ToString();
      const cv::Mat reference = cv::imdecode(tagged, cv::IMREAD_COLOR);
      ASSERT_EQ(d.image.size(), reference.size());
      EXPECT_EQ(cv::norm(reference, d.image, cv::NORM_INF), 0);
    }
}
#endif

#ifdef FFYOLO_HAVE_IMGCODECS
// A PNG with an eXIf chunk of each orientation decodes as cv::imread turns it (OpenCV 4.6 reads eXIf).
TEST(Orientation, TaggedPngDecodesAsOpenCvReadsIt) {
  std::vector<uint8_t> png;
  ASSERT_TRUE(cv::imencode(".png", MakeBgr(37, 23), png));
  ImageDecoder decoder;
  for (int o = 1; o <= 8; ++o) {
    SCOPED_TRACE("orientation " + std::to_string(o));
    const std::string tagged_text = testing::WithPngExifOrientation(std::string(png.begin(), png.end()),
                                                                    static_cast<uint8_t>(o));
    const Bytes tagged(tagged_text.begin(), tagged_text.end());
    ASSERT_EQ(ImageExifOrientation(tagged.data(), tagged.size()), o);
    DecodeOptions options;
    options.orientation = o;
    cv::Mat image;
    int scale = 0;
    const ffr::Status st =
        decoder.Decode(tagged.data(), tagged.size(), ImageEncoding::kPng, "sample 7", options, &image, &scale);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const cv::Mat reference = cv::imdecode(tagged, cv::IMREAD_COLOR);
    ASSERT_EQ(image.size(), reference.size());
    EXPECT_EQ(cv::norm(reference, image, cv::NORM_INF), 0);
  }
}
#endif

// At every DCT scale, the viewed decode is the stored decode turned, and a region decode of the view
// equals the whole view inside the region (so a mosaic tile reads the stored pixels its region needs).
TEST(Orientation, ScaledAndRegionDecodesAreTheStoredDecodeTurned) {
  std::mt19937 rng(9);
  const RegionCase c = RegionCases()[0];
  const Bytes other = EncodeBgrJpeg(cv::Scalar::all(255) - MakeBgr(333, 251));
  ImageDecoder decoder;
  for (int o = 1; o <= 8; ++o)
    for (const int min_side : {0, 160, 80}) {
      SCOPED_TRACE("orientation " + std::to_string(o) + ", min side " + std::to_string(min_side));
      const Decoded viewed = DecodeViewed(&decoder, c.jpeg, o, min_side);
      ASSERT_TRUE(viewed.status.ok()) << viewed.status.ToString();
      const cv::Mat whole = viewed.image.clone();
      const Decoded stored = DecodeViewed(&decoder, c.jpeg, 1, min_side);
      ASSERT_EQ(stored.scale, viewed.scale);
      cv::Mat turned;
      OrientImage(stored.image, o, &turned);
      ASSERT_EQ(cv::norm(turned, whole, cv::NORM_INF), 0);
      for (const cv::Rect& region : RegionsOf(whole.size(), &rng)) {
        SCOPED_TRACE(::testing::PrintToString(region));
        // The buffers first hold another picture, so that stored pixels the region decode did not read show.
        ASSERT_TRUE(DecodeViewed(&decoder, other, o, min_side).status.ok());
        const Decoded part = DecodeViewed(&decoder, c.jpeg, o, min_side, region);
        ASSERT_TRUE(part.status.ok()) << part.status.ToString();
        ASSERT_EQ(part.image.size(), whole.size());
        ASSERT_EQ(cv::norm(part.image(region), whole(region), cv::NORM_INF), 0);
      }
    }
}

}  // namespace
}  // namespace ffyolo
