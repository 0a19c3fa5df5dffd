#include "ffyolo/image_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#ifdef FFYOLO_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif
#include <turbojpeg.h>
#include <zlib.h>

#include <cmath>
#include <limits>

#include "tiny_images.h"

namespace ffyolo {
namespace {

using ::testing::HasSubstr;
using testing::MakeJpeg;
using testing::FindIdat;
using testing::IdatSpan;
using testing::MakePng;
using testing::WithJunkIdat;

Box MakeBox(uint16_t cls, float cx, float cy, float w, float h) {
  Box box;
  box.class_index = cls;
  box.cx = cx, box.cy = cy, box.w = w, box.h = h;
  box.area = 10;
  return box;
}

RecordInfo SizedInfo(uint32_t width, uint32_t height, std::vector<Box> boxes) {
  RecordInfo info;
  info.width = width;
  info.height = height;
  info.boxes = std::move(boxes);
  return info;
}

TEST(ImageInspectorTest, JpegHeaderGivesSizeAndComponents) {
  ImageInspector inspector;
  ImageFacts facts;
  ASSERT_TRUE(inspector.Inspect(MakeJpeg(40, 30, 3), "a.jpg", true, &facts).ok());
  EXPECT_EQ(facts.encoding, ImageEncoding::kJpeg);
  EXPECT_EQ(facts.width, 40u);
  EXPECT_EQ(facts.height, 30u);
  EXPECT_EQ(facts.components, 3);
  EXPECT_EQ(facts.jpeg_subsampling, TJSAMP_420);

  ASSERT_TRUE(inspector.Inspect(MakeJpeg(17, 9, 1), "gray.jpg", true, &facts).ok());
  EXPECT_EQ(facts.width, 17u);
  EXPECT_EQ(facts.height, 9u);
  EXPECT_EQ(facts.components, 1);
}

TEST(ImageInspectorTest, TruncatedJpegDetectedWithoutDecoding) {
  const std::string jpeg = MakeJpeg(64, 48, 3);
  ImageInspector inspector;
  ImageFacts facts;
  const Status s = inspector.Inspect(jpeg.substr(0, jpeg.size() / 2), "half.jpg", false, &facts);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("half.jpg"));
  EXPECT_THAT(s.message(), HasSubstr("truncated JPEG"));
}

TEST(ImageInspectorTest, PaddingAfterEndOfImageIsAccepted) {
  ImageInspector inspector;
  ImageFacts facts;
  EXPECT_TRUE(inspector.Inspect(MakeJpeg(16, 16, 3) + std::string(10, '\0'), "padded.jpg", true, &facts).ok());
}

TEST(ImageInspectorTest, CorruptJpegBodyDetectedOnlyByFullDecode) {
  std::string jpeg = MakeJpeg(64, 64, 3);
  const size_t scan = jpeg.find("\xFF\xDA");
  ASSERT_NE(scan, std::string::npos);
  // A marker in the middle of the entropy-coded data: the header and the end
  // marker stay intact, the pixels do not.
  const size_t middle = scan + (jpeg.size() - scan) / 2;
  jpeg.replace(middle, 4, "\xFF\xD3\xFF\xC4", 4);

  // Half the data and an end marker: libjpeg only warns ("premature end").
  const std::string whole = MakeJpeg(64, 48, 3);
  const std::string short_body = whole.substr(0, whole.size() / 2) + "\xFF\xD9";

  ImageInspector inspector;
  ImageFacts facts;
  for (const std::string& bad : {jpeg, short_body}) {
    EXPECT_TRUE(inspector.Inspect(bad, "corrupt.jpg", false, &facts).ok());
    const Status s = inspector.Inspect(bad, "corrupt.jpg", true, &facts);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("corrupt.jpg: JPEG does not decode cleanly"));
  }
  EXPECT_TRUE(inspector.Inspect(whole, "whole.jpg", true, &facts).ok());
}

// Ultralytics restores a JPEG with bytes after its end marker; it was refused as truncated.
TEST(ImageInspectorTest, JpegWithBytesAfterItsEndIsWhole) {
  const std::string jpeg = MakeJpeg(64, 48, 3);
  ImageInspector inspector;
  ImageFacts facts;
  const Status s = inspector.Inspect(jpeg + std::string(200, '\0'), "padded.jpg", /*full_decode=*/true, &facts);
  EXPECT_TRUE(s.ok()) << s.ToString();
  // Cut inside its scan, with the same 200 bytes after: still truncated.
  const Status cut = inspector.Inspect(jpeg.substr(0, jpeg.size() - 300) + std::string(200, '\0'), "cut.jpg", false, &facts);
  EXPECT_TRUE(cut.IsCorruption()) << cut.ToString();
  EXPECT_THAT(cut.message(), HasSubstr("cut.jpg: truncated JPEG"));
}

TEST(ImageInspectorTest, UnreadableJpegHeaderFails) {
  ImageInspector inspector;
  ImageFacts facts;
  const Status s = inspector.Inspect(std::string("\xFF\xD8\xFF\xE0garbage\xFF\xD9", 13), "bad.jpg", false, &facts);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("bad.jpg: unreadable JPEG header"));
}

// TurboJPEG 2.1 leaves its handle mid-header after a failed header read; the
// inspector must not let that fail the next, good image (--skip-bad skipped both).
// Cut anywhere in its headers: which cuts leave the handle stuck depends on the segment.
TEST(ImageInspectorTest, GoodJpegAfterAnUnreadableHeaderIsRead) {
  const std::string good = MakeJpeg(64, 48, 3);
  ImageInspector inspector;
  ImageFacts facts;
  for (size_t cut = 4; cut < 700; ++cut) {
    if (inspector.Inspect(good.substr(0, cut), "cut.jpg", false, &facts).ok()) continue;
    const Status s = inspector.Inspect(good, "good.jpg", true, &facts);
    ASSERT_TRUE(s.ok()) << "after a JPEG cut at byte " << cut << ": " << s.ToString();
    EXPECT_EQ(facts.width, 64u);
    EXPECT_EQ(facts.height, 48u);
  }
}

TEST(ImageInspectorTest, CmykJpegDecodes) {
  ImageInspector inspector;
  ImageFacts facts;
  const Status s = inspector.Inspect(MakeJpeg(40, 30, 4), "cmyk.jpg", /*full_decode=*/true, &facts);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(facts.components, 4);
  EXPECT_EQ(facts.width, 40u);
}

// "BM" and text after it used to pass as an image of unknown size, even with --check.
TEST(ImageInspectorTest, TextStartingLikeABmpIsNotAnImage) {
  ImageInspector inspector;
  ImageFacts facts;
  const Status s = inspector.Inspect("BM this is a text file", "x.jpg", false, &facts);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("x.jpg: unreadable BMP header"));
}

// Found by image_check_fuzz (heap reads past the end, tests/fuzz/corpus/image_check_fuzz/crash-*):
// a big-endian TIFF whose first IFD is its last 2 bytes, and a VP8X WebP of 30 bytes.
TEST(ImageInspectorTest, OtherHeadersCutShortAreUnreadable) {
  ImageInspector inspector;
  ImageFacts facts;
  const std::string tiff("MM\0*\0\0\0\x08\0\0", 10);
  Status s = inspector.Inspect(tiff, "cut.tiff", false, &facts);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("cut.tiff: unreadable TIFF header"));
  std::string webp("RIFF\x3c\0\0\0WEBPVP8X", 16);
  webp.resize(30, 'X');
  s = inspector.Inspect(webp, "cut.webp", false, &facts);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("cut.webp: unreadable WebP header"));
}

// Found by image_check_fuzz (an abort inside gdcm, corpus/image_check_fuzz/crash-webp-read-as-dicom): a
// lossless WebP header that libwebp rejects, with "DICM" at byte 128, went from cv::imdecode to GDCM.
std::string WebpReadAsDicom() {
  std::string bytes("RIFF\x3c\0\0\0WEBPVP8LV\0\x29\x3a\x2f\0\0\0\0\0\xff\0", 28);
  bytes.resize(128, 'T');
  return bytes + std::string("DICM\0", 5);
}

TEST(ImageInspectorTest, WhatOpenCvWouldReadAsDicomIsRefusedBeforeDecoding) {
  ImageInspector inspector;
  ImageFacts facts;
  const std::string bytes = WebpReadAsDicom();
  Status s = inspector.Inspect(bytes, "odd.webp", /*full_decode=*/false, &facts);
  ASSERT_TRUE(s.ok()) << s.ToString();  // the header gives a size
  s = inspector.Inspect(bytes, "odd.webp", /*full_decode=*/true, &facts);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("odd.webp: WebP file with \"DICM\" at byte 128"));
  std::string pfm = "PFx" + bytes.substr(3);
  EXPECT_TRUE(CheckOpenCvWouldNotReadAsDicom(pfm, "odd.pfm").IsCorruption());
  EXPECT_TRUE(CheckOpenCvWouldNotReadAsDicom(bytes.substr(0, 131), "short.webp").ok());
}

#ifdef FFYOLO_HAVE_IMGCODECS
// The formats OpenCV always hands to their own decoder keep decoding with "DICM" in their pixels at byte 128.
TEST(ImageInspectorTest, DicomMagicInsideABmpTiffOrPngIsOnlyPixels) {
  cv::Mat image(30, 40, CV_8UC3, cv::Scalar(10, 200, 30));
  for (const char* ext : {".bmp", ".tiff", ".png"}) {
    SCOPED_TRACE(ext);
    std::vector<uchar> encoded;
    ASSERT_TRUE(cv::imencode(ext, image, encoded, {cv::IMWRITE_PNG_COMPRESSION, 0}));
    std::string bytes(encoded.begin(), encoded.end());
    if (std::string_view(ext) == ".png") {
      EXPECT_TRUE(CheckOpenCvWouldNotReadAsDicom(bytes.substr(0, 128) + "DICM" + bytes.substr(132), "a.png").ok());
      continue;  // its pixels are behind zlib's framing: the check alone says it
    }
    bytes.replace(128, 4, "DICM");
    ImageInspector inspector;
    ImageFacts facts;
    const Status s = inspector.Inspect(bytes, "a.img", /*full_decode=*/true, &facts);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
}

// OpenCV reads an uncompressed BMP's or a PFM's rows whole and prints
// "imdecode_(''): can't read data" to stderr on a file one byte short: the
// header tells how long the file must be, and a shorter one is refused first.
TEST(ImageInspectorTest, BmpAndPfmShorterThanTheirHeadersSayAreTruncatedAndNothingIsPrinted) {
  const std::pair<const char*, int> formats[] = {
      {".bmp", CV_8UC3}, {".bmp", CV_8UC1}, {".pfm", CV_32FC3}, {".pfm", CV_32FC1}};
  for (const auto& [ext, type] : formats) {
    SCOPED_TRACE(std::string(ext) + " of type " + std::to_string(type));
    const cv::Mat image(30, 41, type, cv::Scalar(10, 200, 30));  // 41: BMP rows end in padding
    std::vector<uchar> encoded;
    ASSERT_TRUE(cv::imencode(ext, image, encoded));
    const std::string bytes(encoded.begin(), encoded.end());
    ImageInspector inspector;
    ImageFacts facts;
    EXPECT_TRUE(inspector.Inspect(bytes, "a.img", /*full_decode=*/false, &facts).ok());
    EXPECT_TRUE(inspector.Inspect(bytes, "a.img", /*full_decode=*/true, &facts).ok());
    for (const bool full_decode : {false, true}) {
      ::testing::internal::CaptureStderr();
      const Status s = inspector.Inspect(bytes.substr(0, bytes.size() - 1), "cut.img", full_decode, &facts);
      EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_THAT(s.message(), HasSubstr("cut.img: truncated " + std::string(ext[1] == 'b' ? "BMP" : "PFM") +
                                         ": its header needs " + std::to_string(bytes.size()) + " bytes, the file has " +
                                         std::to_string(bytes.size() - 1)));
    }
  }
}

// BMP, WebP (lossless and lossy) and TIFF as OpenCV writes them: the header
// gives the size (YOLO sources have no other), and --check decodes them.
TEST(ImageInspectorTest, OtherFormatsGiveTheirSizeAndDecode) {
  const cv::Mat image(30, 40, CV_8UC3, cv::Scalar(10, 200, 30));
  const std::pair<const char*, std::vector<int>> formats[] = {
      {".bmp", {}}, {".webp", {}}, {".webp", {cv::IMWRITE_WEBP_QUALITY, 80}}, {".tiff", {}}};
  for (const auto& [ext, params] : formats) {
    SCOPED_TRACE(ext);
    std::vector<uchar> encoded;
    ASSERT_TRUE(cv::imencode(ext, image, encoded, params));
    const std::string bytes(encoded.begin(), encoded.end());
    ImageInspector inspector;
    ImageFacts facts;
    Status s = inspector.Inspect(bytes, "a.img", /*full_decode=*/false, &facts);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(facts.encoding, ImageEncoding::kOther);
    EXPECT_EQ(facts.width, 40u);
    EXPECT_EQ(facts.height, 30u);
    s = inspector.Inspect(bytes, "a.img", /*full_decode=*/true, &facts);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(facts.components, 3);
    s = inspector.Inspect(bytes.substr(0, bytes.size() / 2), "cut.img", /*full_decode=*/true, &facts);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  }
}
#endif

TEST(ImageInspectorTest, PngAcceptedWithItsSize) {
  const std::string png = MakePng(23, 11);
  ImageInspector inspector;
  ImageFacts facts;
  ASSERT_TRUE(inspector.Inspect(png, "a.png", true, &facts).ok());
  EXPECT_EQ(facts.encoding, ImageEncoding::kPng);
  EXPECT_EQ(facts.width, 23u);
  EXPECT_EQ(facts.height, 11u);
  EXPECT_EQ(facts.components, 3);

  const Status s = inspector.Inspect(png.substr(0, png.size() - 20), "cut.png", false, &facts);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cut.png: truncated PNG"));
}

TEST(ImageInspectorTest, PngWithDamagedDataFailsItsChunkCrc) {
  std::string png = MakePng(23, 11);
  const IdatSpan idat = FindIdat(png);
  png[idat.data + idat.length / 2] ^= 0x20;
  ImageInspector inspector;
  ImageFacts facts;
  const Status s = inspector.Inspect(png, "bad.png", /*full_decode=*/false, &facts);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_THAT(s.message(), HasSubstr("bad.png: PNG IDAT chunk at byte 33 fails its CRC"));
}

TEST(ImageInspectorTest, PngWhoseDataDoesNotInflateFailsTheFullCheckOnly) {
  const std::string png = WithJunkIdat(MakePng(23, 11));
  ImageInspector inspector;
  ImageFacts facts;
  EXPECT_TRUE(inspector.Inspect(png, "junk.png", /*full_decode=*/false, &facts).ok());
  const Status s = inspector.Inspect(png, "junk.png", /*full_decode=*/true, &facts);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_THAT(s.message(), HasSubstr("junk.png: PNG image data does not decode"));
}

// Whole chunks and zlib data that inflates to the right size, but rows the
// loader cannot decode: the full check decodes them as the loader does.
TEST(ImageInspectorTest, PngRowsWithAnUnknownFilterFailTheFullCheckOnly) {
  const std::string png = MakePng(23, 11, /*row_filter=*/9);
  ImageInspector inspector;
  ImageFacts facts;
  EXPECT_TRUE(inspector.Inspect(png, "rows.png", /*full_decode=*/false, &facts).ok());
  const Status s = inspector.Inspect(png, "rows.png", /*full_decode=*/true, &facts);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_THAT(s.message(), HasSubstr("rows.png: PNG image data does not decode (libpng: bad adaptive filter value)"));
}

TEST(ImageInspectorTest, AJpegHeaderOverPilsPixelLimitIsNotDecoded) {
  std::string jpeg = MakeJpeg(64, 48, 3);
  const size_t sof = jpeg.find("\xFF\xC0");  // baseline frame: length (2), precision (1), height (2), width (2)
  ASSERT_NE(sof, std::string::npos);
  for (const size_t at : {sof + 5, sof + 7}) jpeg[at] = '\x40', jpeg[at + 1] = '\x00';  // 16384 x 16384
  ImageInspector inspector;
  ImageFacts facts;
  EXPECT_TRUE(inspector.Inspect(jpeg, "bomb.jpg", /*full_decode=*/false, &facts).ok());
  EXPECT_EQ(facts.width, 16384u);
  const Status s = inspector.Inspect(jpeg, "bomb.jpg", /*full_decode=*/true, &facts);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_THAT(s.message(), HasSubstr("bomb.jpg: JPEG of 16384x16384 pixels is over the 178956970"));
}

TEST(ImageInspectorTest, APngHeaderOverPilsPixelLimitFailsTheFullCheckOnly) {
  std::string png = MakePng(23, 11);
  for (const size_t at : {16, 20}) {  // IHDR's width and height: 20000 x 10000
    const uint32_t side = at == 16 ? 20000 : 10000;
    for (int k = 0; k < 4; ++k) png[at + k] = static_cast<char>(side >> (24 - 8 * k));
  }
  const uint32_t crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(png.data() + 12), 17));
  for (int k = 0; k < 4; ++k) png[29 + k] = static_cast<char>(crc >> (24 - 8 * k));  // IHDR's CRC matches again
  ImageInspector inspector;
  ImageFacts facts;
  EXPECT_TRUE(inspector.Inspect(png, "bomb.png", /*full_decode=*/false, &facts).ok());
  EXPECT_EQ(facts.width, 20000u);
  const Status s = inspector.Inspect(png, "bomb.png", /*full_decode=*/true, &facts);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_THAT(s.message(), HasSubstr("bomb.png: PNG of 20000x10000 pixels is over the 178956970"));
}

TEST(ImageInspectorTest, TextNamedJpgIsNotAnImage) {
  ImageInspector inspector;
  ImageFacts facts;
  const Status s = inspector.Inspect("hello, world\n", "photo.jpg", false, &facts);
  ASSERT_TRUE(s.IsCorruption());
  EXPECT_THAT(s.message(), HasSubstr("photo.jpg: not an image"));
  EXPECT_THAT(s.message(), HasSubstr("\"hello, w\""));
}

TEST(ImageInspectorTest, EmptyFileIsNotAnImage) {
  ImageInspector inspector;
  ImageFacts facts;
  const Status s = inspector.Inspect("", "empty.jpg", false, &facts);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("empty.jpg: empty"));
}

TEST(ApplyImageFactsTest, SizeMustMatchTheAnnotations) {
  ImageFacts facts;
  facts.encoding = ImageEncoding::kJpeg;
  facts.width = 40;
  facts.height = 30;

  RecordInfo from_json = SizedInfo(30, 40, {});
  const Status s = ApplyImageFacts(facts, "images/x.jpg", true, &from_json);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("images/x.jpg"));
  EXPECT_THAT(s.message(), HasSubstr("the image is 40x30 but the annotations say 30x40"));

  RecordInfo matching = SizedInfo(40, 30, {});
  EXPECT_TRUE(ApplyImageFacts(facts, "x", true, &matching).ok());

  RecordInfo from_yolo;  // no size in the source: the image's own
  ASSERT_TRUE(ApplyImageFacts(facts, "x", true, &from_yolo).ok());
  EXPECT_EQ(from_yolo.width, 40u);
  EXPECT_EQ(from_yolo.height, 30u);
  EXPECT_EQ(from_yolo.encoding, ImageEncoding::kJpeg);
}

// A phone photo stored 40x30 with orientation 6 is 30x40 as viewed (issue #32's COCO JSON policy). By
// default (--exif auto) a JSON giving 30x40 was drawn on the viewed image: packed, the record keeping the
// stored size; one giving 40x30 was drawn on the stored pixels: refused, naming --exif apply and ignore.
// With those (annotations on the stored pixels) the other way round. A 180° tag turns no sides: its size is the stored one either way.
TEST(ApplyImageFactsTest, TheJsonSizeSaysWhichFrameItsBoxesAreIn) {
  ImageFacts facts;
  facts.encoding = ImageEncoding::kJpeg;
  facts.width = 40;
  facts.height = 30;
  for (uint8_t orientation : {5, 6, 7, 8}) {
    SCOPED_TRACE(static_cast<int>(orientation));
    RecordInfo viewed = SizedInfo(30, 40, {});
    viewed.exif_orientation = orientation;
    ASSERT_TRUE(ApplyImageFacts(facts, "images/phone.jpg", /*annotations_viewed=*/true, &viewed).ok());
    EXPECT_EQ(viewed.width, 40u);  // the record's size: as stored
    EXPECT_EQ(viewed.height, 30u);

    RecordInfo stored = SizedInfo(40, 30, {});
    stored.exif_orientation = orientation;
    Status s = ApplyImageFacts(facts, "images/phone.jpg", /*annotations_viewed=*/true, &stored);
    EXPECT_TRUE(s.IsInvalidArgument());
    EXPECT_THAT(s.message(), HasSubstr("images/phone.jpg: the image is 30x40 as viewed with its EXIF orientation " +
                                       std::to_string(orientation) + " but the annotations give its stored size, 40x30"));
    EXPECT_THAT(s.message(), HasSubstr("Pack with --exif apply to turn these boxes with the pixels, with --exif "
                                       "ignore to train on the stored pixels"));

    RecordInfo stored_ignored = SizedInfo(40, 30, {});
    stored_ignored.exif_orientation = orientation;
    EXPECT_TRUE(ApplyImageFacts(facts, "x", /*annotations_viewed=*/false, &stored_ignored).ok());
    RecordInfo viewed_ignored = SizedInfo(30, 40, {});
    viewed_ignored.exif_orientation = orientation;
    s = ApplyImageFacts(facts, "images/phone.jpg", /*annotations_viewed=*/false, &viewed_ignored);
    EXPECT_TRUE(s.IsInvalidArgument());
    EXPECT_THAT(s.message(), HasSubstr("images/phone.jpg: the image is 40x30 as stored and 30x40 as viewed with its "
                                       "EXIF orientation " + std::to_string(orientation)));
  }
  for (const bool apply : {true, false}) {
    RecordInfo half_turn = SizedInfo(30, 40, {});
    half_turn.exif_orientation = 3;
    EXPECT_THAT(ApplyImageFacts(facts, "x", apply, &half_turn).message(), HasSubstr("but the annotations say 30x40"));
    RecordInfo half_turn_stored = SizedInfo(40, 30, {});
    half_turn_stored.exif_orientation = 3;
    EXPECT_TRUE(ApplyImageFacts(facts, "x", apply, &half_turn_stored).ok());
  }
}

TEST(ApplyImageFactsTest, OtherFormatNeedsSizeFromTheSource) {
  const ImageFacts other;  // kOther, size unknown
  RecordInfo unknown;
  const Status s = ApplyImageFacts(other, "a.webp", true, &unknown);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("a.webp: image size unknown"));

  RecordInfo from_json = SizedInfo(50, 60, {});
  ASSERT_TRUE(ApplyImageFacts(other, "a.webp", true, &from_json).ok());
  EXPECT_EQ(from_json.encoding, ImageEncoding::kOther);
  EXPECT_EQ(from_json.width, 50u);
}

TEST(CheckBoxesTest, BoxSlightlyOutsideIsClippedWithAWarning) {
  // 200 px wide: the left edge is 1 px (0.5%) outside, within the 1% tolerance.
  RecordInfo info = SizedInfo(200, 100, {MakeBox(1, 0.1f, 0.5f, 0.21f, 0.2f), MakeBox(0, 0.5f, 0.5f, 0.2f, 0.2f)});
  const Box inside = info.boxes[1];
  std::vector<std::string> warnings;
  ASSERT_TRUE(CheckBoxes(&info, 2, "img.jpg", &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("img.jpg: clipped 1 boxes"));
  const Box& clipped = info.boxes[0];
  EXPECT_NEAR(clipped.cx - clipped.w / 2, 0.0, 1e-7);
  EXPECT_NEAR(clipped.cx + clipped.w / 2, 0.1 + 0.105, 1e-6);
  EXPECT_FLOAT_EQ(clipped.cy, 0.5f);
  EXPECT_FLOAT_EQ(clipped.h, 0.2f);
  EXPECT_EQ(info.boxes[1], inside);
}

TEST(CheckBoxesTest, RoundingOverhangIsLeftAlone) {
  RecordInfo info = SizedInfo(640, 480, {MakeBox(0, 0.5f, 0.5f, 1.0000001f, 0.5f)});
  const Box before = info.boxes[0];
  std::vector<std::string> warnings;
  ASSERT_TRUE(CheckBoxes(&info, 1, "img.jpg", &warnings).ok());
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(info.boxes[0], before);
}

TEST(CheckBoxesTest, BoxFarOutsideIsRejected) {
  RecordInfo info = SizedInfo(200, 100, {MakeBox(0, 0.5f, 0.5f, 0.2f, 0.2f), MakeBox(3, 0.5f, 0.95f, 0.2f, 0.3f)});
  std::vector<std::string> warnings;
  const Status s = CheckBoxes(&info, 4, "far.jpg", &warnings);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("far.jpg: box 1 (class 3)"));
  EXPECT_THAT(s.message(), HasSubstr("10 px outside the 200x100 image"));
}

TEST(CheckBoxesTest, DegenerateAndNonFiniteBoxesAreRejected) {
  std::vector<std::string> warnings;
  RecordInfo zero_width = SizedInfo(100, 100, {MakeBox(0, 0.5f, 0.5f, 0.0f, 0.2f)});
  Status s = CheckBoxes(&zero_width, 1, "zero.jpg", &warnings);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("zero.jpg: box 0 (class 0): degenerate box"));

  RecordInfo nan = SizedInfo(100, 100, {MakeBox(0, std::numeric_limits<float>::quiet_NaN(), 0.5f, 0.1f, 0.2f)});
  s = CheckBoxes(&nan, 1, "nan.jpg", &warnings);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("nan.jpg: box 0 (class 0): non-finite"));
}

TEST(CheckBoxesTest, ClassOutOfRangeIsRejected) {
  RecordInfo info = SizedInfo(100, 100, {MakeBox(80, 0.5f, 0.5f, 0.1f, 0.1f)});
  std::vector<std::string> warnings;
  const Status s = CheckBoxes(&info, 80, "cls.jpg", &warnings);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cls.jpg: box 0 (class 80): class is out of range (nc=80)"));
}

TEST(SetAreaFromBoxesTest, AreaIsBoxSizeInPixels) {
  RecordInfo info = SizedInfo(640, 480, {MakeBox(0, 0.5f, 0.5f, 0.25f, 0.5f)});
  SetAreaFromBoxes(&info);
  EXPECT_FLOAT_EQ(info.boxes[0].area, 160.0f * 240.0f);
}

}  // namespace
}  // namespace ffyolo
