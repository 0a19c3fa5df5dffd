// AutoAnchor (utils/autoanchor.py): before training, check how well the
// model's anchors fit the dataset's box shapes, and when the best possible
// recall is 0.98 or less, propose anchors by k-means and a genetic evolution
// and keep them if they fit better. Box sizes come from the split's label
// index (no image reads). Plain C++: the trainer converts to and from the
// Detect layer's anchor tensor. The random draws (scale jitter, k-means
// starts, mutations) use a seeded Mersenne twister, so a run is reproducible,
// but they are not numpy's: proposed anchors are YOLOv5's procedure, not its
// exact numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ffyolo/label_index.h"

namespace ffyolo {

struct AnchorWh {
  float w = 0, h = 0;
};

// Every non-crowd box's size in pixels once its image's longest side is
// `img_size`; with `scales`, each image's sizes are multiplied by scales[i].
std::vector<AnchorWh> LabelSizes(const LabelIndex& index, int img_size, const std::vector<double>* scales = nullptr);

// check_anchors' metric: a box fits an anchor when neither side ratio exceeds
// anchor_t. bpr: the share of boxes some anchor fits (best possible recall);
// anchors_per_target: how many anchors fit a box, on average.
struct AnchorFit {
  double bpr = 0, anchors_per_target = 0;
};
AnchorFit FitAnchors(const std::vector<AnchorWh>& wh, const std::vector<AnchorWh>& anchors, double anchor_t);

// kmean_anchors: n anchors for the sizes `wh` (boxes under 2 pixels on both
// sides left out): k-means on whitened sizes (30 restarts, the lowest
// distortion kept; random anchors when k-means finds fewer than n clusters),
// then `generations` mutations kept when they raise the fitness (mean best
// ratio over boxes above 1/anchor_t). Sorted by area, small to large.
std::vector<AnchorWh> EvolveAnchors(const std::vector<AnchorWh>& wh, size_t n, int img_size, double anchor_t,
                                    int generations, uint64_t seed);

// check_anchors on `anchors` (pixels, level-major): replaces them when new
// ones give a higher recall. `report` gets YOLOv5's log lines.
struct AutoAnchorResult {
  AnchorFit before, after;
  bool replaced = false;
  std::string report;
};
AutoAnchorResult CheckAnchors(const LabelIndex& index, int img_size, double anchor_t, uint64_t seed,
                              std::vector<AnchorWh>* anchors);

}  // namespace ffyolo
