// AutoAnchor (utils/autoanchor.py): label sizes from the label index, the
// BPR / anchors-per-target metric on hand-computed cases, k-means + evolution
// finding clustered box shapes, and check_anchors keeping good anchors and
// replacing poor ones.
#include "ffyolo/autoanchor.h"

#include <gtest/gtest.h>

#include <random>

namespace ffyolo {
namespace {

// An index of `images` images of w x h, each with the boxes (normalized w, h).
LabelIndex Index(int images, uint32_t w, uint32_t h, const std::vector<std::pair<float, float>>& boxes,
                 bool crowd_extra = false) {
  LabelIndex index;
  for (int i = 0; i < images; ++i) {
    RecordInfo info;
    info.width = w;
    info.height = h;
    info.image_id = i;
    for (const auto& [bw, bh] : boxes) {
      Box b;
      b.cx = b.cy = 0.5f;
      b.w = bw;
      b.h = bh;
      info.boxes.push_back(b);
    }
    if (crowd_extra) {
      Box crowd;
      crowd.iscrowd = true;
      crowd.w = crowd.h = 0.9f;
      info.boxes.push_back(crowd);
    }
    index.Add(info, 0);
  }
  return index;
}

TEST(AutoAnchorTest, LabelSizesScaleTheLongestSideToTheImageSize) {
  const LabelIndex index = Index(2, 200, 100, {{0.5f, 0.25f}}, /*crowd_extra=*/true);
  const std::vector<AnchorWh> wh = LabelSizes(index, 640);
  ASSERT_EQ(wh.size(), 2u) << "crowd regions are not training targets";
  EXPECT_FLOAT_EQ(wh[0].w, 320);  // 0.5 of 640
  EXPECT_FLOAT_EQ(wh[0].h, 80);   // 0.25 of 320
  const std::vector<double> scales = {1.0, 1.1};
  EXPECT_FLOAT_EQ(LabelSizes(index, 640, &scales)[1].w, 352);
}

TEST(AutoAnchorTest, MetricCountsBoxesWithinTheRatioThreshold) {
  // (10, 10) fits anchor (10, 10) exactly; (100, 50) has ratios 10 and 5 to it: beyond 4.
  const std::vector<AnchorWh> wh = {{10, 10}, {100, 50}};
  AnchorFit fit = FitAnchors(wh, {{10, 10}}, 4.0);
  EXPECT_DOUBLE_EQ(fit.bpr, 0.5);
  EXPECT_DOUBLE_EQ(fit.anchors_per_target, 0.5);
  // Anchor (30, 20): ratios 3 and 2 to the first box, 3.33 and 2.5 to the second: both fit.
  fit = FitAnchors(wh, {{10, 10}, {30, 20}}, 4.0);
  EXPECT_DOUBLE_EQ(fit.bpr, 1.0);
  EXPECT_DOUBLE_EQ(fit.anchors_per_target, 1.5);
  EXPECT_DOUBLE_EQ(FitAnchors(wh, {{30, 20}}, 3.2).bpr, 0.5);  // 3 fits within 3.2, 3.33 does not
}

TEST(AutoAnchorTest, EvolutionFindsClusteredShapes) {
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(1.0f, 0.03f);
  const std::vector<AnchorWh> centers = {{12, 20}, {60, 40}, {200, 300}};
  std::vector<AnchorWh> wh;
  for (int i = 0; i < 300; ++i) {
    const AnchorWh& c = centers[i % 3];
    wh.push_back({c.w * noise(rng), c.h * noise(rng)});
  }
  const std::vector<AnchorWh> k = EvolveAnchors(wh, 3, 640, 4.0, 200, 7);
  ASSERT_EQ(k.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {  // sorted by area, as the centers are
    EXPECT_NEAR(k[i].w / centers[i].w, 1.0, 0.15) << i;
    EXPECT_NEAR(k[i].h / centers[i].h, 1.0, 0.15) << i;
  }
  EXPECT_EQ(FitAnchors(wh, k, 4.0).bpr, 1.0);
  // Reproducible from its seed.
  const std::vector<AnchorWh> again = EvolveAnchors(wh, 3, 640, 4.0, 200, 7);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(again[i].w, k[i].w);
}

TEST(AutoAnchorTest, CheckAnchorsKeepsAGoodFitAndReplacesAPoorOne) {
  // 640-pixel images of 64 x 64 and 128 x 96 boxes; YOLOv5's P3 anchors fit them.
  const LabelIndex index = Index(50, 640, 640, {{0.1f, 0.1f}, {0.2f, 0.15f}});
  std::vector<AnchorWh> anchors = {{10, 13}, {16, 30}, {33, 23}, {30, 61}, {62, 45},
                                   {59, 119}, {116, 90}, {156, 198}, {373, 326}};
  const std::vector<AnchorWh> original = anchors;
  AutoAnchorResult r = CheckAnchors(index, 640, 4.0, 0, &anchors);
  EXPECT_FALSE(r.replaced);
  EXPECT_GT(r.before.bpr, 0.98);
  EXPECT_NE(r.report.find("Current anchors are a good fit"), std::string::npos) << r.report;
  EXPECT_EQ(anchors[8].w, original[8].w);

  // Tiny anchors for large boxes: recall 0, replaced by anchors that fit.
  std::vector<AnchorWh> tiny(9, AnchorWh{2, 2});
  r = CheckAnchors(index, 640, 4.0, 0, &tiny);
  EXPECT_LT(r.before.bpr, 0.98);
  EXPECT_TRUE(r.replaced) << r.report;
  EXPECT_GT(r.after.bpr, 0.98) << r.report;
  EXPECT_NE(r.report.find("attempting to improve"), std::string::npos) << r.report;
  EXPECT_GT(tiny[8].w, 32);
}

}  // namespace
}  // namespace ffyolo
