// Photos stored sideways or mirrored with an EXIF orientation train as viewed (issue #32): real coco128
// photos, each stored turned by the inverse of its tag and tagged (six JPEGs, a TIFF, a PNG with an eXIf chunk), packed from a YOLO-txt tree with
// coco128's own labels (drawn on the upright view), give the loader's validation letterboxes and training
// mosaics, decoded or from the pixel cache, byte for byte those of the same views re-saved upright as PNGs.
// Packed with --exif ignore they do not: the test fails with the tag ignored.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "ffyolo/dataset.h"
#include "ffyolo/exif.h"
#include "ffyolo/loader.h"
#include "ffyolo/orientation.h"
#include "ffyolo/pack.h"
#include "ffyolo/pixel_cache.h"
#include "testing/test_env.h"
#include "tiny_images.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;

std::string EncodeJpeg(const cv::Mat& bgr) {
  tjhandle h = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(h, bgr.data, bgr.cols, static_cast<int>(bgr.step), bgr.rows, TJPF_BGR, &buf, &size,
                        TJSAMP_420, 95, 0),
            0);
  std::string out(reinterpret_cast<char*>(buf), size);
  tjFree(buf);
  tjDestroy(h);
  return out;
}

// A baseline uncompressed RGB TIFF of `bgr` whose IFD0 gives `orientation` (OpenCV's imread turns a TIFF by it),
// as one SHORT or as `count` values of another TIFF type.
std::string MakeTiff(const cv::Mat& bgr, int orientation, uint16_t type = 3, uint32_t count = 1) {
  std::string t("II*\0\x08\0\0\0", 8);
  const auto u16 = [&](uint32_t v) { t += static_cast<char>(v & 0xFF), t += static_cast<char>(v >> 8 & 0xFF); };
  const auto u32 = [&](uint32_t v) { u16(v & 0xFFFF), u16(v >> 16); };
  const auto entry = [&](uint16_t tag, uint16_t type, uint32_t count, uint32_t value) {
    u16(tag), u16(type), u32(count);
    if (type == 3 && count == 1) {
      u16(value), u16(0);
    } else {
      u32(value);
    }
  };
  constexpr uint32_t kEntries = 10, kBits = 8 + 2 + 12 * kEntries + 4, kPixels = kBits + 6;
  const uint32_t w = bgr.cols, h = bgr.rows;
  u16(kEntries);
  entry(256, 3, 1, w);                // ImageWidth
  entry(257, 3, 1, h);                // ImageLength
  entry(258, 3, 3, kBits);            // BitsPerSample: 8, 8, 8 at kBits
  entry(259, 3, 1, 1);                // Compression: none
  entry(262, 3, 1, 2);                // PhotometricInterpretation: RGB
  entry(273, 4, 1, kPixels);          // StripOffsets
  entry(274, type, count, orientation);  // Orientation
  entry(277, 3, 1, 3);                // SamplesPerPixel
  entry(278, 3, 1, h);                // RowsPerStrip
  entry(279, 4, 1, w * h * 3);        // StripByteCounts
  u32(0);                             // no next IFD
  u16(8), u16(8), u16(8);
  for (int y = 0; y < bgr.rows; ++y)
    for (int x = 0; x < bgr.cols; ++x) {
      const cv::Vec3b p = bgr.at<cv::Vec3b>(y, x);
      t += static_cast<char>(p[2]), t += static_cast<char>(p[1]), t += static_cast<char>(p[0]);
    }
  return t;
}

// Two YOLO-txt trees of the same photos and labels: "tagged" stores each photo turned with a tag that
// turns it back, "upright" holds what OpenCV reads from the tagged one, as a PNG.
void WriteTrees(const std::string& coco128, const std::string& root) {
  // The last two a TIFF with its own orientation tag and a PNG with an eXIf chunk.
  const int orientations[] = {6, 3, 4, 5, 2, 7, 8, 6};
  std::vector<cv::String> files;
  cv::glob(coco128 + "/images/train2017/*.jpg", files);
  ASSERT_GE(files.size(), 8u);
  for (const char* tree : {"tagged", "upright"}) {
    fs::create_directories(root + "/" + tree + "/images/train");
    fs::create_directories(root + "/" + tree + "/labels/train");
    fs::copy_file(coco128 + "/names.yaml", root + "/" + tree + "/names.yaml");
  }
  for (size_t i = 0; i < 8; ++i) {
    const std::string stem = fs::path(files[i]).stem();
    const cv::Mat upright = cv::imread(files[i], cv::IMREAD_COLOR);
    cv::Mat stored;
    OrientImage(upright, InverseOrientation(orientations[i]), &stored);
    const auto o = static_cast<uint8_t>(orientations[i]);
    std::string tagged;
    std::string file = root + "/tagged/images/train/" + stem;
    if (i == 6) {
      tagged = MakeTiff(stored, o);
      file += ".tiff";
    } else if (i == 7) {
      std::vector<uint8_t> png;
      ASSERT_TRUE(cv::imencode(".png", stored, png));
      tagged = testing::WithPngExifOrientation(std::string(png.begin(), png.end()), o);
      file += ".png";
    } else {
      tagged = testing::WithExifOrientation(EncodeJpeg(stored), o);
      file += ".jpg";
    }
    ASSERT_TRUE(testing::WriteStringToFile(file, tagged));
    const cv::Mat viewed = cv::imread(file, cv::IMREAD_COLOR);
    ASSERT_EQ(viewed.size(), upright.size()) << stem;
    ASSERT_TRUE(cv::imwrite(root + "/upright/images/train/" + stem + ".png", viewed));
    const std::string labels = testing::ReadFileToString(coco128 + "/labels/train2017/" + stem + ".txt");
    for (const char* tree : {"tagged", "upright"})
      ASSERT_TRUE(testing::WriteStringToFile(root + "/" + tree + "/labels/train/" + stem + ".txt", labels));
  }
}

std::string PackTree(const std::string& source, const std::string& output, ExifPolicy exif) {
  PackOptions o;
  o.source = source;
  o.output = output;
  o.exif = exif;
  PackSummary summary;
  const Status s = Pack(o, &summary);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return output;
}

// Every batch of an epoch: images and targets; from the pixel cache ("ram" or "disk", built first) or decoding.
std::vector<std::pair<std::string, std::vector<float>>> Epoch(const std::string& data, bool training,
                                                              const std::string& cache = "") {
  std::unique_ptr<Dataset> d;
  EXPECT_TRUE(Dataset::Open(data, &d).ok());
  LoaderOptions o;
  o.training = training;
  o.img_size = 640;
  o.batch_size = 4;
  o.workers = 2;
  o.seed = 3;
  o.hyp.mosaic = 1.0;
  if (!cache.empty()) {
    const Status cached = UsePixelCache(*d, cache, &o);
    EXPECT_TRUE(cached.ok()) << cached.ToString();
  }
  std::unique_ptr<Loader> loader;
  const Status s = Loader::Open(*d, o, &loader);
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<std::pair<std::string, std::vector<float>>> out;
  if (!loader) return out;
  EXPECT_TRUE(loader->Start(0, 0).ok());
  const Batch* b = nullptr;
  for (;;) {
    const Status next = loader->Next(&b);
    EXPECT_TRUE(next.ok()) << data << ": " << next.ToString();
    if (!next.ok() || !b) break;
    out.emplace_back(std::string(reinterpret_cast<const char*>(b->images), b->image_bytes()), b->targets);
    loader->Release(b);
  }
  return out;
}

TEST(ExifOrientationTest, TaggedPhotosTrainAsTheirUprightViews) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  testing::ScratchDir dir("exif_loader");
  ASSERT_NO_FATAL_FAILURE(WriteTrees(coco128, dir.path()));
  const std::string tagged = PackTree(dir / "tagged", dir / "tagged.ffr", ExifPolicy::kAuto);
  const std::string upright = PackTree(dir / "upright", dir / "upright.ffr", ExifPolicy::kAuto);
  const std::string ignored = PackTree(dir / "tagged", dir / "ignored.ffr", ExifPolicy::kIgnore);
  for (const bool training : {false, true}) {
    SCOPED_TRACE(training ? "training mosaics" : "validation letterboxes");
    const auto want = Epoch(upright, training);
    const auto got = Epoch(tagged, training);
    ASSERT_EQ(got.size(), 2u);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(got[i].first == want[i].first) << "batch " << i << ": the images differ";
      EXPECT_EQ(got[i].second, want[i].second) << "batch " << i;
    }
    const auto cached = Epoch(tagged, training, "disk");  // the pixel cache holds the views
    ASSERT_EQ(cached.size(), want.size());
    for (size_t i = 0; i < cached.size(); ++i)
      EXPECT_TRUE(cached[i].first == want[i].first) << "batch " << i << ": the cached images differ";
    const auto as_stored = Epoch(ignored, training);
    ASSERT_EQ(as_stored.size(), want.size());
    EXPECT_FALSE(as_stored[0].first == want[0].first) << "--exif ignore: the stored pixels, not the views";
  }
}

// libtiff reads a TIFF's orientation as one integer of any width (OpenCV's EXIF reader is not involved), and
// ImageExifOrientation as it does: each of these decodes with cv::imdecode as the same picture carrying the
// plain SHORT of the orientation it gives.
TEST(ExifOrientationTest, TiffOrientationOfEachTypeTurnsAsOpenCvDoes) {
  cv::Mat picture(5, 7, CV_8UC3);
  cv::randu(picture, cv::Scalar::all(0), cv::Scalar::all(256));
  const auto decode = [](const std::string& tiff) {
    return cv::imdecode(std::vector<uint8_t>(tiff.begin(), tiff.end()), cv::IMREAD_COLOR);
  };
  const auto same = [](const cv::Mat& a, const cv::Mat& b) {
    return a.size() == b.size() && cv::norm(a, b, cv::NORM_INF) == 0;
  };
  for (int o = 2; o <= 8; ++o) ASSERT_FALSE(same(decode(MakeTiff(picture, o)), decode(MakeTiff(picture, o - 1))));
  struct Case {
    uint16_t type;
    uint32_t count;
    int value;
  };
  for (const Case c : {Case{1, 1, 6}, Case{3, 1, 6}, Case{4, 1, 6}, Case{8, 1, 7}, Case{9, 1, 5}, Case{3, 2, 6},
                       Case{4, 1, 9}, Case{4, 1, 0}}) {
    SCOPED_TRACE("type " + std::to_string(c.type) + ", count " + std::to_string(c.count) + ", value " +
                 std::to_string(c.value));
    const std::string tiff = MakeTiff(picture, c.value, c.type, c.count);
    const int o = ImageExifOrientation(reinterpret_cast<const uint8_t*>(tiff.data()), tiff.size());
    const cv::Mat by_opencv = decode(tiff);
    ASSERT_FALSE(by_opencv.empty());
    EXPECT_TRUE(same(by_opencv, decode(MakeTiff(picture, o)))) << "turned by " << o;
  }
}

}  // namespace
}  // namespace ffyolo
