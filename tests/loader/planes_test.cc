#include "ffyolo/planes.h"

#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>
#include <vector>

#include "ffyolo/hsv.h"
#include "ffyolo/letterbox.h"

namespace ffyolo {
namespace {

cv::Mat RandomImage(int w, int h, uint64_t seed) {
  cv::Mat img(h, w, CV_8UC3);
  cv::RNG rng(seed);
  rng.fill(img, cv::RNG::UNIFORM, 0, 256);
  return img;
}

// The steps one at a time, as YOLOv5 does them: full-image cvtColor, the
// tables, cvtColor back, cv::flip, then planes pixel by pixel (R, G, B, or
// with `bgr_planes` B, G, R as Ultralytics 8's Format leaves them).
std::vector<uint8_t> Reference(const cv::Mat& bgr, const HsvLuts* luts, bool flip_ud, bool flip_lr,
                               bool bgr_planes = false) {
  cv::Mat img = bgr.clone();
  if (luts) {
    cv::Mat hsv;
    cv::cvtColor(img, hsv, cv::COLOR_BGR2HSV);
    for (auto it = hsv.begin<cv::Vec3b>(); it != hsv.end<cv::Vec3b>(); ++it)
      *it = cv::Vec3b(luts->h[(*it)[0]], luts->s[(*it)[1]], luts->v[(*it)[2]]);
    cv::cvtColor(hsv, img, cv::COLOR_HSV2BGR);
  }
  if (flip_ud) cv::flip(img, img, 0);
  if (flip_lr) cv::flip(img, img, 1);
  const size_t plane = img.total();
  std::vector<uint8_t> out(3 * plane);
  for (int y = 0; y < img.rows; ++y) {
    for (int x = 0; x < img.cols; ++x) {
      const cv::Vec3b p = img.at<cv::Vec3b>(y, x);
      const size_t i = static_cast<size_t>(y) * img.cols + x;
      out[i] = p[bgr_planes ? 0 : 2];
      out[plane + i] = p[1];
      out[2 * plane + i] = p[bgr_planes ? 2 : 0];
    }
  }
  return out;
}

TEST(WriteRgbPlanesTest, FusedHsvFlipsAndBgrEqualTheStepsOneByOne) {
  const HsvLuts luts = BuildHsvLuts({1.013, 1.6, 0.7});
  // Widths around the 16-pixel vector step, heights around the 8-row strips.
  const cv::Size sizes[] = {{640, 640}, {97, 61}, {16, 8}, {15, 9}, {33, 17}, {1, 1}, {320, 7}};
  for (const cv::Size size : sizes) {
    const cv::Mat image = RandomImage(size.width, size.height, size.area());
    for (int mask = 0; mask < 16; ++mask) {
      const bool hsv = mask & 1, ud = mask & 2, lr = mask & 4, bgr = mask & 8;
      PlaneAugment augment;
      augment.hsv = hsv ? &luts : nullptr;
      augment.flip_up_down = ud;
      augment.flip_left_right = lr;
      augment.bgr = bgr;
      const size_t bytes = 3 * image.total();
      std::vector<uint8_t> out(bytes + 16, 0xA5);  // guard bytes after the planes
      const cv::Mat before = image.clone();
      WriteRgbPlanes(image, augment, out.data());
      const std::vector<uint8_t> expected = Reference(image, augment.hsv, ud, lr, bgr);
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out.begin()))
          << size << " hsv " << hsv << " flipud " << ud << " fliplr " << lr << " bgr " << bgr;
      for (size_t i = bytes; i < out.size(); ++i) ASSERT_EQ(out[i], 0xA5) << size << " wrote past the planes";
      EXPECT_EQ(cv::norm(image, before, cv::NORM_INF), 0) << "the source must stay unchanged";
    }
  }
}

TEST(WriteRgbPlanesTest, ReadsAView) {
  const cv::Mat big = RandomImage(120, 80, 5);
  const cv::Mat view = big(cv::Rect(11, 9, 97, 61));
  const HsvLuts luts = BuildHsvLuts({0.987, 0.5, 1.2});
  PlaneAugment augment;
  augment.hsv = &luts;
  augment.flip_left_right = true;
  std::vector<uint8_t> out(3 * view.total());
  WriteRgbPlanes(view, augment, out.data());
  EXPECT_EQ(out, Reference(view.clone(), &luts, false, true));
}

TEST(WriteRgbPlanesTest, PlainPlanesAreRgbOrder) {
  cv::Mat img(2, 3, CV_8UC3);
  for (int i = 0; i < 18; ++i) img.data[i] = static_cast<uint8_t>(i);
  std::vector<uint8_t> out(18);
  WriteRgbPlanes(img, out.data());
  // Pixel i holds (B, G, R) = (3i, 3i + 1, 3i + 2).
  const std::vector<uint8_t> expected = {2, 5, 8, 11, 14, 17, 1, 4, 7, 10, 13, 16, 0, 3, 6, 9, 12, 15};
  EXPECT_EQ(out, expected);
}

TEST(WriteLetterboxedPlanesTest, EqualsApplyLetterboxThenPlanes) {
  struct Case {
    cv::Size image, target;
  } cases[] = {
      {{640, 480}, {640, 480}},  // fits exactly: no border
      {{640, 427}, {640, 448}},  // odd padding: 10 above, 11 below
      {{500, 375}, {512, 384}},  // padding on all sides
      {{37, 640}, {64, 672}},    // narrow, padding left and right
      {{800, 600}, {640, 480}},  // resized (shrunk) first
      {{300, 200}, {320, 352}},  // no scale-up for validation: padded only
  };
  for (const Case& c : cases) {
    const cv::Mat image = RandomImage(c.image.width, c.image.height, c.image.area());
    const LetterboxPlan plan =
        PlanLetterbox(image.cols, image.rows, c.target.width, c.target.height, /*scaleup=*/false);
    cv::Mat boxed(c.target, CV_8UC3);
    ApplyLetterbox(image, plan, &boxed);
    const size_t bytes = 3 * boxed.total();
    std::vector<uint8_t> out(bytes + 16, 0xA5);
    WriteLetterboxedPlanes(image, plan, out.data());
    const std::vector<uint8_t> expected = Reference(boxed, nullptr, false, false);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out.begin())) << c.image << " into " << c.target;
    for (size_t i = bytes; i < out.size(); ++i) ASSERT_EQ(out[i], 0xA5) << c.image << " wrote past the planes";
  }
}

}  // namespace
}  // namespace ffyolo
