#include "ffyolo/perspective.h"

#include <gtest/gtest.h>

#include <cmath>
#include <opencv2/imgproc.hpp>

namespace ffyolo {
namespace {

PerspectiveHyp ScratchLow() { return PerspectiveHyp{0, 0.1, 0.5, 0, 0}; }

TEST(DrawPerspectiveTest, ScaleAndTranslateOnly) {
  // The mosaic: a 1280 x 1280 canvas warped to 640 x 640. M = T * R * C, so
  // M = [[s, 0, tx - 640 s], [0, s, ty - 640 s], [0, 0, 1]] with s in [0.5, 1.5]
  // and tx, ty in [0.4, 0.6] * 640.
  for (uint64_t i = 0; i < 200; ++i) {
    SampleRandom rng({7, i});
    double s = 0;
    const cv::Matx33d m = DrawPerspective(&rng, ScratchLow(), 1280, 1280, 640, 640, &s);
    ASSERT_TRUE(IsAffine(m));
    ASSERT_GE(s, 0.5);
    ASSERT_LE(s, 1.5);
    EXPECT_EQ(m(0, 0), s);
    EXPECT_EQ(m(1, 1), s);
    EXPECT_EQ(m(0, 1), 0);
    EXPECT_EQ(m(1, 0), 0);
    const double tx = m(0, 2) + 640 * s, ty = m(1, 2) + 640 * s;
    EXPECT_GE(tx, 256 - 1e-9);
    EXPECT_LE(tx, 384 + 1e-9);
    EXPECT_GE(ty, 256 - 1e-9);
    EXPECT_LE(ty, 384 + 1e-9);
  }
}

TEST(DrawPerspectiveTest, CentresTheInputAndTranslatesByTheOutput) {
  // No randomness left: M = T * C with C = -in / 2 and T = 0.5 * out.
  const PerspectiveHyp fixed{0, 0, 0, 0, 0};
  SampleRandom rng({1});
  double s = 0;
  const cv::Matx33d m = DrawPerspective(&rng, fixed, 1280, 1000, 640, 480, &s);
  EXPECT_EQ(s, 1);
  EXPECT_EQ(m, cv::Matx33d(1, 0, -640 + 320, 0, 1, -500 + 240, 0, 0, 1));
}

TEST(DrawPerspectiveTest, RotationTimesScale) {
  PerspectiveHyp hyp = ScratchLow();
  hyp.degrees = 10;
  hyp.translate = 0;
  int rotated = 0;
  for (uint64_t i = 0; i < 100; ++i) {
    SampleRandom rng({3, i});
    double s = 0;
    const cv::Matx33d m = DrawPerspective(&rng, hyp, 640, 640, 640, 640, &s);
    // getRotationMatrix2D(centre 0, a, s) = [[s cos a, s sin a], [-s sin a, s cos a]].
    const double a = std::atan2(m(0, 1), m(0, 0));
    EXPECT_LE(std::abs(a), 10 * CV_PI / 180 + 1e-12);
    EXPECT_NEAR(m(0, 0), s * std::cos(a), 1e-12);
    EXPECT_NEAR(m(0, 1), s * std::sin(a), 1e-12);
    EXPECT_NEAR(m(1, 0), -s * std::sin(a), 1e-12);
    EXPECT_NEAR(m(1, 1), s * std::cos(a), 1e-12);
    // The input centre (320, 320) lands on the output centre whatever a and s.
    EXPECT_NEAR(m(0, 0) * 320 + m(0, 1) * 320 + m(0, 2), 320, 1e-9);
    EXPECT_NEAR(m(1, 0) * 320 + m(1, 1) * 320 + m(1, 2), 320, 1e-9);
    if (std::abs(a) > 1 * CV_PI / 180) ++rotated;
  }
  EXPECT_GT(rotated, 50);
}

TEST(DrawPerspectiveTest, PerspectiveIsNotAffine) {
  PerspectiveHyp hyp = ScratchLow();
  hyp.perspective = 0.001;
  SampleRandom rng({5});
  double s = 0;
  EXPECT_FALSE(IsAffine(DrawPerspective(&rng, hyp, 640, 640, 640, 640, &s)));
}

TEST(DrawPerspectiveTest, DependsOnlyOnTheKey) {
  PerspectiveHyp hyp{5, 0.1, 0.5, 2, 0.0005};
  double s1 = 0, s2 = 0, s3 = 0;
  SampleRandom a({42, 3, 17}), b({42, 3, 17}), c({42, 3, 18});
  const cv::Matx33d m1 = DrawPerspective(&a, hyp, 1280, 1280, 640, 640, &s1);
  const cv::Matx33d m2 = DrawPerspective(&b, hyp, 1280, 1280, 640, 640, &s2);
  const cv::Matx33d m3 = DrawPerspective(&c, hyp, 1280, 1280, 640, 640, &s3);
  EXPECT_EQ(m1, m2);
  EXPECT_EQ(s1, s2);
  EXPECT_NE(m1, m3);
}

cv::Mat RandomImage(int w, int h, uint64_t seed) {
  cv::Mat img(h, w, CV_8UC3);
  cv::RNG rng(seed);
  rng.fill(img, cv::RNG::UNIFORM, 0, 256);
  return img;
}

TEST(WarpImageTest, IntegerShiftIntoAView) {
  const cv::Mat src = RandomImage(40, 30, 1);
  cv::Mat buffer(50, 60, CV_8UC3, cv::Scalar::all(7));
  const cv::Rect view(5, 4, 40, 30);
  cv::Mat dst = buffer(view);
  WarpImage(src, cv::Matx33d(1, 0, 5, 0, 1, 3, 0, 0, 1), &dst);
  ASSERT_EQ(dst.data, buffer.ptr(4, 5));
  for (int y = 0; y < buffer.rows; ++y) {
    for (int x = 0; x < buffer.cols; ++x) {
      const cv::Vec3b px = buffer.at<cv::Vec3b>(y, x);
      if (!view.contains({x, y})) {
        ASSERT_EQ(px, cv::Vec3b(7, 7, 7));
        continue;
      }
      const int sx = x - view.x - 5, sy = y - view.y - 3;
      if (sx < 0 || sy < 0) {
        ASSERT_EQ(px, cv::Vec3b(114, 114, 114)) << x << "," << y;
      } else {
        ASSERT_EQ(px, src.at<cv::Vec3b>(sy, sx)) << x << "," << y;
      }
    }
  }
}

TEST(WarpImageTest, ScaleByHalfSamplesEveryOtherPixel) {
  // M maps input to output, so output (x, y) samples the input at (2x, 2y): exactly on pixels.
  const cv::Mat src = RandomImage(64, 64, 3);
  cv::Mat dst(32, 32, CV_8UC3);
  WarpImage(src, cv::Matx33d(0.5, 0, 0, 0, 0.5, 0, 0, 0, 1), &dst);
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 32; ++x) ASSERT_EQ(dst.at<cv::Vec3b>(y, x), src.at<cv::Vec3b>(2 * y, 2 * x)) << x << "," << y;
}

TEST(WarpImageTest, PerspectiveUsesWarpPerspective) {
  const cv::Mat src = RandomImage(64, 48, 2);
  const cv::Matx33d m(1.1, 0.05, -3, -0.02, 0.9, 4, 0.0004, -0.0003, 1);
  cv::Mat dst(40, 50, CV_8UC3);
  WarpImage(src, m, &dst);
  cv::Mat expected;
  cv::warpPerspective(src, expected, m, cv::Size(50, 40), cv::INTER_LINEAR, cv::BORDER_CONSTANT,
                      cv::Scalar::all(114));
  EXPECT_EQ(cv::norm(dst, expected, cv::NORM_INF), 0);
}

}  // namespace
}  // namespace ffyolo
