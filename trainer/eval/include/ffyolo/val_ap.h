// YOLOv5 v7.0 utils/metrics.py: compute_ap and ap_per_class, the average
// precision behind val.py's P, R, mAP50 and mAP50-95 (the "internal" numbers,
// slightly below pycocotools' because of the trapezoid rule).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ffyolo/val_matching.h"

namespace ffyolo {

// compute_ap: the area under the precision envelope of a recall/precision
// curve, sampled at 101 recall points (np.interp) and integrated with the
// trapezoid rule. A single perfect prediction scores 0.995, not 1: the
// envelope drops to 0 at recall 1, halving the last trapezoid.
double ComputeAp(const std::vector<double>& recall, const std::vector<double>& precision);

// ap_per_class's result for one class present in the labels.
struct ClassAp {
  int cls = 0;
  int64_t num_labels = 0;
  // At the confidence that maximizes the smoothed F1 averaged over classes.
  double precision = 0;
  double recall = 0;
  double f1 = 0;
  std::array<double, kNumValIouThresholds> ap{};  // per IoU threshold
};

// ap_per_class over all predictions of a validation run: `tp`, `conf` and
// `pred_cls` are per prediction, `target_cls` per label. One ClassAp per class
// of target_cls, ascending. A class without predictions scores 0.
// Predictions are ordered by descending confidence with a stable sort (NumPy's
// quicksort orders equal confidences arbitrarily beyond 16 elements).
std::vector<ClassAp> ApPerClass(const std::vector<IouHits>& tp, const std::vector<double>& conf,
                                const std::vector<int>& pred_cls, const std::vector<int>& target_cls);

}  // namespace ffyolo
