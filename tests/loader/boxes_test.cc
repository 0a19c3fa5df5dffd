#include "ffyolo/boxes.h"

#include <gtest/gtest.h>

#include "ffyolo/perspective.h"

namespace ffyolo {
namespace {

PixelBox Box(int cls, float x1, float y1, float x2, float y2) { return PixelBox{cls, x1, y1, x2, y2}; }

void ExpectBox(const PixelBox& b, int cls, float x1, float y1, float x2, float y2) {
  EXPECT_EQ(b.cls, cls);
  EXPECT_FLOAT_EQ(b.x1, x1);
  EXPECT_FLOAT_EQ(b.y1, y1);
  EXPECT_FLOAT_EQ(b.x2, x2);
  EXPECT_FLOAT_EQ(b.y2, y2);
}

cv::Matx33d Translation(double tx, double ty) { return cv::Matx33d(1, 0, tx, 0, 1, ty, 0, 0, 1); }

TEST(TransformBoxesTest, IdentityKeepsBoxes) {
  std::vector<PixelBox> boxes = {Box(3, 10, 20, 110, 220), Box(5, 300.5f, 100.25f, 400, 180)};
  TransformBoxes(cv::Matx33d::eye(), 1, 640, 640, &boxes);
  ASSERT_EQ(boxes.size(), 2u);
  ExpectBox(boxes[0], 3, 10, 20, 110, 220);
  ExpectBox(boxes[1], 5, 300.5f, 100.25f, 400, 180);
}

TEST(TransformBoxesTest, ScaleAboutTheOrigin) {
  std::vector<PixelBox> boxes = {Box(1, 100, 100, 300, 200)};
  TransformBoxes(cv::Matx33d(0.5, 0, 0, 0, 0.5, 0, 0, 0, 1), 0.5, 640, 640, &boxes);
  ASSERT_EQ(boxes.size(), 1u);
  ExpectBox(boxes[0], 1, 50, 50, 150, 100);
}

TEST(TransformBoxesTest, RotationTakesTheCornersExtent) {
  // x' = y, y' = 640 - x: a quarter turn.
  std::vector<PixelBox> boxes = {Box(2, 100, 200, 300, 260)};
  TransformBoxes(cv::Matx33d(0, 1, 0, -1, 0, 640, 0, 0, 1), 1, 640, 640, &boxes);
  ASSERT_EQ(boxes.size(), 1u);
  ExpectBox(boxes[0], 2, 200, 340, 260, 540);
}

TEST(TransformBoxesTest, DividesByTheHomogeneousCoordinateWhenNotAffine) {
  std::vector<PixelBox> boxes = {Box(0, 100, 100, 300, 200)};
  TransformBoxes(cv::Matx33d(1, 0, 0, 0, 1, 0, 0, 0, 2), 0.5, 640, 640, &boxes);
  ASSERT_EQ(boxes.size(), 1u);
  ExpectBox(boxes[0], 0, 50, 50, 150, 100);
}

TEST(TransformBoxesTest, ClipsToTheOutput) {
  // Clipped to (0, 0, 50, 60): 3000 / 4900 of the area is left, kept.
  std::vector<PixelBox> boxes = {Box(4, -20, -10, 50, 60), Box(6, 600, 400, 700, 500)};
  TransformBoxes(cv::Matx33d::eye(), 1, 640, 480, &boxes);
  ASSERT_EQ(boxes.size(), 2u);
  ExpectBox(boxes[0], 4, 0, 0, 50, 60);
  ExpectBox(boxes[1], 6, 600, 400, 640, 480);
}

TEST(TransformBoxesTest, AreaRuleDropsBoxesPushedOutside) {
  // A 100 x 100 box shifted right by 629: 11 columns remain (area ratio 0.11,
  // kept); by 631: 9 columns (0.09, dropped).
  std::vector<PixelBox> kept = {Box(0, 0, 0, 100, 100)};
  TransformBoxes(Translation(629, 0), 1, 640, 640, &kept);
  ASSERT_EQ(kept.size(), 1u);
  ExpectBox(kept[0], 0, 629, 0, 640, 100);
  std::vector<PixelBox> dropped = {Box(0, 0, 0, 100, 100)};
  TransformBoxes(Translation(631, 0), 1, 640, 640, &dropped);
  EXPECT_TRUE(dropped.empty());
}

TEST(TransformBoxesTest, AreaRuleComparesWithTheScaledOriginal) {
  // Scaled by 0.5 the box is 50 x 50, its clipped remainder 6 x 50: 0.12 of
  // the scaled area (kept) though only 0.03 of the original.
  std::vector<PixelBox> boxes = {Box(0, 0, 0, 100, 100)};
  TransformBoxes(cv::Matx33d(0.5, 0, 634, 0, 0.5, 0, 0, 0, 1), 0.5, 640, 640, &boxes);
  ASSERT_EQ(boxes.size(), 1u);
  ExpectBox(boxes[0], 0, 634, 0, 640, 50);
}

TEST(TransformBoxesTest, ThinAndElongatedBoxesAreDropped) {
  std::vector<PixelBox> boxes = {
      Box(0, 10, 10, 12, 110),    // 2 px wide: not > wh_thr
      Box(1, 10, 10, 110, 12),    // 2 px high
      Box(2, 10, 10, 12.5f, 110), // 2.5 x 100: kept (aspect 40)
      Box(3, 10, 10, 14, 500),    // 4 x 490: aspect 122.5 >= 100
      Box(4, 20, 30, 40, 50),     // kept
  };
  TransformBoxes(cv::Matx33d::eye(), 1, 640, 640, &boxes);
  ASSERT_EQ(boxes.size(), 2u);
  ExpectBox(boxes[0], 2, 10, 10, 12.5f, 110);
  ExpectBox(boxes[1], 4, 20, 30, 40, 50);
}

TEST(BoxCandidateTest, Thresholds) {
  const PixelBox before = Box(0, 0, 0, 100, 100);
  EXPECT_TRUE(BoxCandidate(before, Box(0, 0, 0, 11, 100)));
  EXPECT_FALSE(BoxCandidate(before, Box(0, 0, 0, 10, 100)));  // ratio 0.1 is not > 0.1
  EXPECT_TRUE(BoxCandidate(before, Box(0, 0, 0, 10, 100), 2, 100, 0.01));  // the segments' threshold
  EXPECT_FALSE(BoxCandidate(before, Box(0, 0, 0, 3, 300), 2, 100, 0.01));  // aspect exactly 100
  EXPECT_TRUE(BoxCandidate(before, Box(0, 0, 0, 3, 299), 2, 100, 0.01));
  EXPECT_FALSE(BoxCandidate(before, Box(0, 0, 0, 50, 50), 60));           // wh_thr
}

TEST(ToNormalizedTest, CentreAndSize) {
  const std::vector<NormBox> n = ToNormalized({Box(7, 100, 50, 300, 250)}, 640, 480);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].cls, 7);
  EXPECT_FLOAT_EQ(n[0].cx, 200.f / 640);
  EXPECT_FLOAT_EQ(n[0].cy, 150.f / 480);
  EXPECT_FLOAT_EQ(n[0].w, 200.f / 640);
  EXPECT_FLOAT_EQ(n[0].h, 200.f / 480);
}

TEST(ToNormalizedTest, ClipsOneThousandthInside) {
  // x in [0, 639.999], y in [0, 479.999]: a box covering the image gets w, h < 1.
  const std::vector<NormBox> n = ToNormalized({Box(1, -5, -1, 700, 490)}, 640, 480);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_NEAR(n[0].cx, 639.999 / 2 / 640, 1e-7);
  EXPECT_NEAR(n[0].cy, 479.999 / 2 / 480, 1e-7);
  EXPECT_NEAR(n[0].w, 639.999 / 640, 1e-7);
  EXPECT_NEAR(n[0].h, 479.999 / 480, 1e-7);
  EXPECT_LT(n[0].w, 1.f);
  EXPECT_LT(n[0].h, 1.f);
}

}  // namespace
}  // namespace ffyolo
