#include "ffyolo/val_matching.h"

#include <algorithm>

#include "ffyolo/numpy_math.h"

namespace ffyolo {

const std::array<double, kNumValIouThresholds>& ValIouThresholds() {
  static const std::array<double, kNumValIouThresholds> thresholds = [] {
    const std::vector<double> values = NumpyLinspace(0.5, 0.95, kNumValIouThresholds);
    std::array<double, kNumValIouThresholds> out{};
    std::copy(values.begin(), values.end(), out.begin());
    return out;
  }();
  return thresholds;
}

double ValBoxIou(const ValLabel& label, const ValPrediction& prediction) {
  const double w = std::max(std::min(label.x2, prediction.x2) - std::max(label.x1, prediction.x1), 0.0);
  const double h = std::max(std::min(label.y2, prediction.y2) - std::max(label.y1, prediction.y1), 0.0);
  const double inter = w * h;
  const double label_area = (label.x2 - label.x1) * (label.y2 - label.y1);
  const double prediction_area = (prediction.x2 - prediction.x1) * (prediction.y2 - prediction.y1);
  return inter / (label_area + prediction_area - inter + 1e-7);
}

// val.py sorts the candidate pairs by IoU (ascending argsort, reversed), keeps
// the first pair of each prediction (np.unique), then the first pair of each
// label in prediction order. Equivalently: best label per prediction, where a
// tie goes to the pair that came later in (label, prediction) order, then the
// lowest prediction index per label.
std::vector<IouHits> ProcessBatch(const std::vector<ValPrediction>& predictions,
                                  const std::vector<ValLabel>& labels) {
  const size_t n = predictions.size();
  const size_t num_labels = labels.size();
  std::vector<IouHits> correct(n, IouHits{});
  std::vector<double> iou(num_labels * n);
  for (size_t i = 0; i < num_labels; ++i) {
    for (size_t j = 0; j < n; ++j) iou[i * n + j] = ValBoxIou(labels[i], predictions[j]);
  }

  std::vector<int> best_label(n);
  std::vector<char> label_taken(num_labels);
  for (int t = 0; t < kNumValIouThresholds; ++t) {
    const double threshold = ValIouThresholds()[t];
    for (size_t j = 0; j < n; ++j) {
      best_label[j] = -1;
      for (size_t i = 0; i < num_labels; ++i) {
        if (labels[i].cls != predictions[j].cls || iou[i * n + j] < threshold) continue;
        if (best_label[j] < 0 || iou[i * n + j] >= iou[best_label[j] * n + j]) best_label[j] = static_cast<int>(i);
      }
    }
    std::fill(label_taken.begin(), label_taken.end(), 0);
    for (size_t j = 0; j < n; ++j) {
      if (best_label[j] < 0 || label_taken[best_label[j]]) continue;
      label_taken[best_label[j]] = 1;
      correct[j][t] = true;
    }
  }
  return correct;
}

}  // namespace ffyolo
