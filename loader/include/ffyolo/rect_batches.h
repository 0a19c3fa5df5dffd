// Rectangular batches (YOLOv5 rect=True, always used for validation): images
// sorted by aspect ratio, one padded shape per batch, computed from sizes alone.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace ffyolo {

struct RectBatches {
  std::vector<int64_t> order;  // dataset indices sorted by h/w (stable)
  // (height, width) of each batch of `batch_size` consecutive entries of `order`.
  std::vector<std::pair<int, int>> shapes;
};

// widths/heights: original image sizes. shapes = ceil(shape * img_size / stride + pad) * stride.
RectBatches PlanRectBatches(const std::vector<int>& widths, const std::vector<int>& heights, int batch_size,
                            int img_size, int stride, double pad);

// Rank `rank`'s share of `plan` (batches of `batch_size`) among `world_size` ranks: the plan's batches rank,
// rank + world_size, ... in that order, each whole. Validation over ranks: every batch is the one-rank plan's,
// and the ranks together read every sample once (no padding, unlike training's sampler).
RectBatches RankShare(const RectBatches& plan, int batch_size, int rank, int world_size);

// Ultralytics 8's share (its ContiguousDistributedSampler, for validation and for rect training over ranks): a
// run of the plan's consecutive batches, batches / world_size each and one more for the first batches %
// world_size ranks, each batch its plan shape; when one batch holds the whole split, a run of its samples
// instead (unit batches), in one batch of the plan's shape. Together the ranks read every sample once.
RectBatches ContiguousRankShare(const RectBatches& plan, int batch_size, int rank, int world_size);

}  // namespace ffyolo
