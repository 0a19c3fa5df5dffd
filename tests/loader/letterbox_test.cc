#include "ffyolo/letterbox.h"

#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

namespace ffyolo {
namespace {

TEST(PyRoundTest, HalvesGoToEven) {
  EXPECT_EQ(PyRound(0.5), 0);
  EXPECT_EQ(PyRound(1.5), 2);
  EXPECT_EQ(PyRound(2.5), 2);
  EXPECT_EQ(PyRound(166.5), 166);
  EXPECT_EQ(PyRound(-0.5), 0);
  EXPECT_EQ(PyRound(-1.5), -2);
  EXPECT_EQ(PyRound(-2.5), -2);
  EXPECT_EQ(PyRound(2.4), 2);
  EXPECT_EQ(PyRound(2.6), 3);
  EXPECT_EQ(PyRound(106.4), 106);
  EXPECT_EQ(PyRound(106.6), 107);
}

TEST(LoadResizeSizeTest, LongestSideToImgSize) {
  EXPECT_EQ(LoadResizeSize(640, 427, 640), cv::Size(640, 427));  // r == 1: untouched
  EXPECT_EQ(LoadResizeSize(500, 375, 640), cv::Size(640, 480));
  EXPECT_EQ(LoadResizeSize(375, 500, 640), cv::Size(480, 640));
  EXPECT_EQ(LoadResizeSize(320, 240, 640), cv::Size(640, 480));  // small images are upscaled
  // 667 * 0.64 = 426.88: int() truncates where rounding would give 427.
  EXPECT_EQ(LoadResizeSize(1000, 667, 640), cv::Size(640, 426));
}

TEST(LoadResizeSizeTest, ReproducesV7FloatTruncation) {
  // In double, 581 * (640 / 581) = 639.9999999999999 and 154 * (640 / 154) too:
  // v7.0's int() gives 639 (HEAD's ceil gives 640).
  EXPECT_EQ(LoadResizeSize(581, 400, 640), cv::Size(639, 440));  // 400 * 640 / 581 = 440.62
  EXPECT_EQ(LoadResizeSize(100, 154, 640), cv::Size(415, 639));  // 100 * 640 / 154 = 415.58
}

// More elongated than img_size:1: v7.0 would resize to a side of 0 and
// cv::resize throw (it aborted yolo-train and yolo-val); a side of 1 is kept.
TEST(LoadResizeSizeTest, ExtremeAspectKeepsOnePixel) {
  EXPECT_EQ(LoadResizeSize(3000, 2, 64), cv::Size(64, 1));
  EXPECT_EQ(LoadResizeSize(2, 3000, 64), cv::Size(1, 64));
}

// Pixels outside ResizeSourceRegion, garbled, leave the resized region
// unchanged: shrinking, enlarging, exact halving (OpenCV's INTER_AREA
// shortcut) and odd ratios, regions at every edge.
TEST(ResizeSourceRegionTest, ResizedRegionDependsOnlyOnIt) {
  cv::RNG rng(5);
  const cv::Size pairs[][2] = {{{640, 480}, {416, 312}}, {{640, 480}, {320, 240}}, {{333, 251}, {640, 482}},
                               {{581, 400}, {639, 440}}, {{100, 154}, {415, 639}}, {{1000, 667}, {640, 426}}};
  double sources = 0, wholes = 0;
  for (const auto& pair : pairs) {
    const cv::Size src_size = pair[0], dst_size = pair[1];
    cv::Mat src(src_size, CV_8UC3);
    rng.fill(src, cv::RNG::UNIFORM, 0, 256);
    cv::Mat expected;
    cv::resize(src, expected, dst_size, 0, 0, cv::INTER_LINEAR);
    for (int i = 0; i < 30; ++i) {
      const int x = rng.uniform(0, dst_size.width), y = rng.uniform(0, dst_size.height);
      const cv::Rect region(x, y, rng.uniform(1, dst_size.width - x + 1), rng.uniform(1, dst_size.height - y + 1));
      SCOPED_TRACE(::testing::PrintToString(src_size) + " -> " + ::testing::PrintToString(dst_size) + " " +
                   ::testing::PrintToString(region));
      const cv::Rect source = ResizeSourceRegion(region, src_size, dst_size);
      ASSERT_EQ(source & cv::Rect({0, 0}, src_size), source);
      cv::Mat garbled = cv::Scalar::all(255) - src;
      src(source).copyTo(garbled(source));
      cv::Mat actual;
      cv::resize(garbled, actual, dst_size, 0, 0, cv::INTER_LINEAR);
      ASSERT_EQ(cv::norm(actual(region), expected(region), cv::NORM_INF), 0);
      sources += source.area();
      wholes += src_size.area();
    }
  }
  EXPECT_LT(sources, 0.7 * wholes);  // regions are not the whole image
}

TEST(LoadResizeSizeTest, Interpolation) {
  EXPECT_EQ(LoadResizeInterpolation(false, 1000, 667, 640), cv::INTER_AREA);  // val downscale
  EXPECT_EQ(LoadResizeInterpolation(true, 1000, 667, 640), cv::INTER_LINEAR);
  EXPECT_EQ(LoadResizeInterpolation(false, 320, 240, 640), cv::INTER_LINEAR);  // upscale
}

void ExpectPlan(const LetterboxPlan& p, double ratio, int new_w, int new_h, int top, int bottom, int left, int right,
                double dw, double dh) {
  EXPECT_DOUBLE_EQ(p.ratio, ratio);
  EXPECT_EQ(p.new_w, new_w);
  EXPECT_EQ(p.new_h, new_h);
  EXPECT_EQ(p.top, top);
  EXPECT_EQ(p.bottom, bottom);
  EXPECT_EQ(p.left, left);
  EXPECT_EQ(p.right, right);
  EXPECT_DOUBLE_EQ(p.dw, dw);
  EXPECT_DOUBLE_EQ(p.dh, dh);
}

TEST(PlanLetterboxTest, OddPaddingGoesBottomRight) {
  // 213 rows of padding: dh = 106.5, top = round(106.4), bottom = round(106.6).
  ExpectPlan(PlanLetterbox(640, 427, 640, 640, true), 1, 640, 427, 106, 107, 0, 0, 0, 106.5);
  // Rect val shape 448 x 640: 21 rows.
  ExpectPlan(PlanLetterbox(640, 427, 640, 448, false), 1, 640, 427, 10, 11, 0, 0, 0, 10.5);
  ExpectPlan(PlanLetterbox(427, 640, 640, 640, true), 1, 427, 640, 0, 0, 106, 107, 106.5, 0);
  ExpectPlan(PlanLetterbox(480, 640, 640, 640, true), 1, 480, 640, 0, 0, 80, 80, 80, 0);
}

TEST(PlanLetterboxTest, ScaleupOnlyWhenAllowed) {
  ExpectPlan(PlanLetterbox(500, 375, 640, 640, true), 1.28, 640, 480, 80, 80, 0, 0, 0, 80);
  // scaleup=False (val): r = min(1.28, 1) = 1, 140 and 265 pixels of padding.
  ExpectPlan(PlanLetterbox(500, 375, 640, 640, false), 1, 500, 375, 132, 133, 70, 70, 70, 132.5);
  // Downscaling is allowed either way.
  ExpectPlan(PlanLetterbox(1000, 500, 640, 640, false), 0.64, 640, 320, 160, 160, 0, 0, 0, 160);
}

TEST(PlanLetterboxTest, BankersRoundingOfTheNewSize) {
  // r = 0.5: 333 * 0.5 = 166.5 rounds to 166 (std::round would say 167).
  ExpectPlan(PlanLetterbox(1000, 333, 500, 500, false), 0.5, 500, 166, 167, 167, 0, 0, 0, 167);
  // 5 * 0.5 = 2.5 -> 2, 7 * 0.5 = 3.5 -> 4.
  ExpectPlan(PlanLetterbox(4, 5, 2, 10, true), 0.5, 2, 2, 4, 4, 0, 0, 0, 4);
  ExpectPlan(PlanLetterbox(4, 7, 2, 10, true), 0.5, 2, 4, 3, 3, 0, 0, 0, 3);
}

TEST(PlanLetterboxTest, ExtremeAspectKeepsOnePixel) {
  // A 1x64 image into a 64-wide, 32-high rect shape: r = 0.5, and 1 * 0.5 rounds to 0.
  const LetterboxPlan plan = PlanLetterbox(1, 64, 64, 32, true);
  EXPECT_EQ(plan.new_w, 1);
  EXPECT_EQ(plan.new_h, 32);
  cv::Mat src(64, 1, CV_8UC3, cv::Scalar(9, 9, 9)), dst(32, 64, CV_8UC3);
  ApplyLetterbox(src, plan, &dst);
  EXPECT_EQ(dst.at<cv::Vec3b>(16, plan.left)[0], 9);
}

TEST(PlanLetterboxTest, AutoKeepsOnlyThePaddingToTheStride) {
  // detect.py's LoadImages (auto=True, stride 32): Ultralytics' zidane.jpg, 1280 x 720 -> 640 x 360,
  // 280 rows of padding mod 32 = 24: a 640 x 384 input.
  ExpectPlan(PlanLetterbox(1280, 720, 640, 640, true, 32), 0.5, 640, 360, 12, 12, 0, 0, 0, 12);
  // bus.jpg, 810 x 1080: r = 640 / 1080, 480 columns, 160 mod 32 = 0: no padding at all.
  ExpectPlan(PlanLetterbox(810, 1080, 640, 640, true, 32), 640.0 / 1080, 480, 640, 0, 0, 0, 0, 0, 0);
  // 213 rows mod 32 = 21: dh = 10.5, the odd row at the bottom, 448 rows in all.
  ExpectPlan(PlanLetterbox(640, 427, 640, 640, true, 32), 1, 640, 427, 10, 11, 0, 0, 0, 10.5);
  // Upscaled 100 x 50 -> 640 x 320 (r = 6.4); 320 mod 64 = 0.
  ExpectPlan(PlanLetterbox(100, 50, 640, 640, true, 64), 6.4, 640, 320, 0, 0, 0, 0, 0, 0);
  // auto_stride 0 is auto=False: the full square.
  ExpectPlan(PlanLetterbox(1280, 720, 640, 640, true, 0), 0.5, 640, 360, 140, 140, 0, 0, 0, 140);
}

cv::Mat RandomImage(int w, int h, uint64_t seed) {
  cv::Mat img(h, w, CV_8UC3);
  cv::RNG rng(seed);
  rng.fill(img, cv::RNG::UNIFORM, 0, 256);
  return img;
}

// Checks the letterbox written into a view of a larger buffer filled with 7:
// the surroundings stay 7, the borders are 114 and the content is `expected`.
void ExpectLetterbox(const cv::Mat& buffer, const cv::Rect& view, const LetterboxPlan& plan, const cv::Mat& expected) {
  const cv::Rect content(view.x + plan.left, view.y + plan.top, plan.new_w, plan.new_h);
  for (int y = 0; y < buffer.rows; ++y) {
    for (int x = 0; x < buffer.cols; ++x) {
      const cv::Vec3b px = buffer.at<cv::Vec3b>(y, x);
      const cv::Point pt(x, y);
      if (!view.contains(pt)) {
        ASSERT_EQ(px, cv::Vec3b(7, 7, 7)) << "outside the view at " << pt;
      } else if (!content.contains(pt)) {
        ASSERT_EQ(px, cv::Vec3b(114, 114, 114)) << "border at " << pt;
      } else {
        ASSERT_EQ(px, expected.at<cv::Vec3b>(y - content.y, x - content.x)) << "content at " << pt;
      }
    }
  }
}

TEST(ApplyLetterboxTest, ResizesIntoAViewAndPads) {
  const cv::Mat src = RandomImage(100, 60, 1);
  const LetterboxPlan plan = PlanLetterbox(100, 60, 64, 64, true);
  // r = min(64 / 60, 64 / 100) = 0.64: 64 x round(38.4) = 38, 26 rows of padding.
  ASSERT_EQ(plan.new_w, 64);
  ASSERT_EQ(plan.new_h, 38);
  ASSERT_EQ(plan.top, 13);
  ASSERT_EQ(plan.bottom, 13);
  cv::Mat buffer(80, 90, CV_8UC3, cv::Scalar::all(7));
  const cv::Rect view(10, 5, 64, 64);
  cv::Mat dst = buffer(view);
  ApplyLetterbox(src, plan, &dst);
  EXPECT_EQ(dst.data, buffer.ptr(5, 10)) << "dst was reallocated instead of written through";
  cv::Mat expected;
  cv::resize(src, expected, cv::Size(64, 38), 0, 0, cv::INTER_LINEAR);
  ExpectLetterbox(buffer, view, plan, expected);
}

TEST(ApplyLetterboxTest, CopiesWhenTheSizeIsKept) {
  const cv::Mat src = RandomImage(61, 40, 2);
  const LetterboxPlan plan = PlanLetterbox(61, 40, 64, 48, false);
  ASSERT_EQ(plan.left, 1);
  ASSERT_EQ(plan.right, 2);
  ASSERT_EQ(plan.top, 4);
  ASSERT_EQ(plan.bottom, 4);
  cv::Mat buffer(60, 70, CV_8UC3, cv::Scalar::all(7));
  const cv::Rect view(3, 2, 64, 48);
  cv::Mat dst = buffer(view);
  ApplyLetterbox(src, plan, &dst);
  ExpectLetterbox(buffer, view, plan, src);
}

}  // namespace
}  // namespace ffyolo
