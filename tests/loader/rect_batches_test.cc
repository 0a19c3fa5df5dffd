#include "ffyolo/rect_batches.h"

#include <gtest/gtest.h>

namespace ffyolo {
namespace {

using Shapes = std::vector<std::pair<int, int>>;

// Aspect ratios h / w: 0.75, 1.333, 1, 0.75, 0.667, 1.333, 3.
const std::vector<int> kWidths = {640, 480, 640, 500, 640, 375, 300};
const std::vector<int> kHeights = {480, 640, 640, 375, 427, 500, 900};

TEST(PlanRectBatchesTest, SortsStablyByAspectRatio) {
  const RectBatches rb = PlanRectBatches(kWidths, kHeights, 2, 640, 32, 0.5);
  EXPECT_EQ(rb.order, (std::vector<int64_t>{4, 0, 3, 2, 1, 5, 6}));
}

TEST(PlanRectBatchesTest, ValPadding) {
  // Batches {0.667, 0.75} -> [0.75, 1]; {0.75, 1} -> [1, 1]; {1.333, 1.333} -> [1, 0.75];
  // {3} -> [1, 1/3]. Side = ceil(shape * 640 / 32 + 0.5) * 32: 0.75 -> ceil(15.5) = 16 -> 512,
  // 1 -> ceil(20.5) = 21 -> 672, 1/3 -> ceil(7.17) = 8 -> 256.
  const RectBatches rb = PlanRectBatches(kWidths, kHeights, 2, 640, 32, 0.5);
  EXPECT_EQ(rb.shapes, (Shapes{{512, 672}, {672, 672}, {672, 512}, {672, 256}}));
}

TEST(PlanRectBatchesTest, TrainPadding) {
  // pad 0: 0.75 -> 15 * 32 = 480, 1 -> 640, 1/3 -> ceil(6.67) = 7 -> 224.
  const RectBatches rb = PlanRectBatches(kWidths, kHeights, 2, 640, 32, 0.0);
  EXPECT_EQ(rb.shapes, (Shapes{{480, 640}, {640, 640}, {640, 480}, {640, 224}}));
}

TEST(PlanRectBatchesTest, BatchBoundaries) {
  // Batches of 3: {0.667, 0.75, 0.75} -> [0.75, 1]; {1, 1.333, 1.333} -> [1, 1] (mini is not > 1);
  // {3} -> [1, 1/3].
  const RectBatches rb = PlanRectBatches(kWidths, kHeights, 3, 640, 32, 0.5);
  EXPECT_EQ(rb.shapes, (Shapes{{512, 672}, {672, 672}, {672, 256}}));
  // One batch holding everything spans both sides of 1.
  EXPECT_EQ(PlanRectBatches(kWidths, kHeights, 16, 640, 32, 0.0).shapes, (Shapes{{640, 640}}));
  // 427 / 640 alone: ceil(13.34 + 0.5) = 14 -> 448 (the familiar val shape).
  EXPECT_EQ(PlanRectBatches({640}, {427}, 1, 640, 32, 0.5).shapes, (Shapes{{448, 672}}));
}

TEST(PlanRectBatchesTest, Empty) {
  const RectBatches rb = PlanRectBatches({}, {}, 4, 640, 32, 0.5);
  EXPECT_TRUE(rb.order.empty());
  EXPECT_TRUE(rb.shapes.empty());
}

// Ultralytics 8's ContiguousDistributedSampler: the 4 batches of 2 (7 images) over 3 ranks are runs of 2, 1
// and 1 batches; a split inside one batch (batch 8) goes out in unit runs of 3, 2 and 2 samples.
TEST(ContiguousRankShareTest, RunsOfWholeBatchesTheFirstRanksOneMore) {
  const RectBatches plan = PlanRectBatches(kWidths, kHeights, 2, 640, 32, 0.5);
  const RectBatches r0 = ContiguousRankShare(plan, 2, 0, 3), r1 = ContiguousRankShare(plan, 2, 1, 3),
                    r2 = ContiguousRankShare(plan, 2, 2, 3);
  EXPECT_EQ(r0.order, (std::vector<int64_t>{4, 0, 3, 2}));
  EXPECT_EQ(r0.shapes, (Shapes{{512, 672}, {672, 672}}));
  EXPECT_EQ(r1.order, (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(r1.shapes, (Shapes{{672, 512}}));
  EXPECT_EQ(r2.order, (std::vector<int64_t>{6}));
  EXPECT_EQ(r2.shapes, (Shapes{{672, 256}}));

  const RectBatches whole = PlanRectBatches(kWidths, kHeights, 8, 640, 32, 0.5);
  ASSERT_EQ(whole.shapes.size(), 1u);
  std::vector<int64_t> all;
  for (int rank = 0; rank < 3; ++rank) {
    const RectBatches share = ContiguousRankShare(whole, 8, rank, 3);
    EXPECT_EQ(share.order.size(), rank == 0 ? 3u : 2u);
    EXPECT_EQ(share.shapes, whole.shapes);
    all.insert(all.end(), share.order.begin(), share.order.end());
  }
  EXPECT_EQ(all, whole.order);
  EXPECT_TRUE(ContiguousRankShare(plan, 2, 7, 8).order.empty());  // more ranks than batches: none for the last
}

}  // namespace
}  // namespace ffyolo
