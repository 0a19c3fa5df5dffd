// Per-image matching of predictions to labels as YOLOv5 v7.0 val.py does it
// (process_batch), quirk included, so the internal mAP equals the repo's.
#pragma once

#include <array>
#include <vector>

namespace ffyolo {

// One NMS output row in original-image pixels.
struct ValPrediction {
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  double conf = 0;
  int cls = 0;
};

// One label in original-image pixels.
struct ValLabel {
  int cls = 0;
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
};

inline constexpr int kNumValIouThresholds = 10;
// Whether a prediction is a true positive at each IoU threshold.
using IouHits = std::array<bool, kNumValIouThresholds>;

// iouv = linspace(0.5, 0.95, 10), in double precision.
const std::array<double, kNumValIouThresholds>& ValIouThresholds();

// utils/metrics.py box_iou: inter / (area_label + area_pred - inter + 1e-7).
double ValBoxIou(const ValLabel& label, const ValPrediction& prediction);

// process_batch: one IouHits per prediction. At each threshold the candidate
// (label, prediction) pairs have IoU >= t and equal classes; each prediction
// keeps its best label (ties: the later label), then each label goes to the
// lowest-index prediction among those that chose it. A prediction whose best
// label was taken is not offered its second choice: that is v7.0's quirk.
// Predictions are expected in NMS order (descending confidence).
std::vector<IouHits> ProcessBatch(const std::vector<ValPrediction>& predictions,
                                  const std::vector<ValLabel>& labels);

}  // namespace ffyolo
