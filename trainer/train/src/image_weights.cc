#include "ffyolo/image_weights.h"

namespace ffyolo {

std::vector<std::vector<int>> ImageLabelClasses(const LabelIndex& index, bool single_cls) {
  std::vector<std::vector<int>> out(index.size());
  for (size_t i = 0; i < index.size(); ++i)
    for (size_t k = 0; k < index.box_count(i); ++k) {
      const Box& b = index.boxes(i)[k];
      if (!b.iscrowd) out[i].push_back(single_cls ? 0 : b.class_index);
    }
  return out;
}

std::vector<float> ModelClassWeights(const std::vector<std::vector<int>>& labels, int nc) {
  std::vector<double> weights(nc, 0);
  for (const auto& image : labels)
    for (int c : image) weights[c] += 1;
  double sum = 0;
  for (double& w : weights) {
    w = 1 / (w == 0 ? 1 : w);  // weights[weights == 0] = 1; weights = 1 / weights
    sum += w;
  }
  std::vector<float> out(nc);
  for (int c = 0; c < nc; ++c) out[c] = static_cast<float>(weights[c] / sum) * static_cast<float>(nc);
  return out;
}

std::vector<double> ImageWeights(const std::vector<std::vector<int>>& labels, const std::vector<float>& class_weights,
                                 const std::vector<double>& maps) {
  const size_t nc = class_weights.size();
  std::vector<double> cw(nc);
  for (size_t c = 0; c < nc; ++c) cw[c] = class_weights[c] * ((1 - maps[c]) * (1 - maps[c])) / static_cast<double>(nc);
  std::vector<double> out(labels.size(), 0);
  for (size_t i = 0; i < labels.size(); ++i) {
    std::vector<int64_t> counts(nc, 0);
    for (int c : labels[i]) ++counts[c];
    for (size_t c = 0; c < nc; ++c) out[i] += cw[c] * static_cast<double>(counts[c]);
  }
  return out;
}

std::vector<double> ClassMaps(const ValMetrics& metrics, int nc) {
  std::vector<double> maps(nc, metrics.map);
  for (const ValClassMetrics& c : metrics.classes)
    if (c.cls >= 0 && c.cls < nc) maps[c.cls] = c.map;
  return maps;
}

}  // namespace ffyolo
