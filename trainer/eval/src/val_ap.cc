#include "ffyolo/val_ap.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "ffyolo/numpy_math.h"

namespace ffyolo {
namespace {

constexpr double kEps = 1e-16;     // ap_per_class's eps
constexpr int kNumConfPoints = 1000;  // px = linspace(0, 1, 1000)

// smooth(y, f): a box filter over round(len * f * 2) // 2 + 1 points, the ends
// padded with copies of the end values.
std::vector<double> Smooth(const std::vector<double>& y, double fraction) {
  const int nf = static_cast<int>(std::nearbyint(static_cast<double>(y.size()) * fraction * 2)) / 2 + 1;
  const int pad = nf / 2;
  std::vector<double> padded(pad, y.front());
  padded.insert(padded.end(), y.begin(), y.end());
  padded.insert(padded.end(), pad, y.back());
  const double weight = 1.0 / nf;
  std::vector<double> out(padded.size() - nf + 1);
  for (size_t i = 0; i < out.size(); ++i) {
    double sum = 0.0;
    for (int k = 0; k < nf; ++k) sum += padded[i + k] * weight;
    out[i] = sum;
  }
  return out;
}

}  // namespace

double ComputeAp(const std::vector<double>& recall, const std::vector<double>& precision) {
  std::vector<double> mrec(1, 0.0), mpre(1, 1.0);
  mrec.insert(mrec.end(), recall.begin(), recall.end());
  mrec.push_back(1.0);
  mpre.insert(mpre.end(), precision.begin(), precision.end());
  mpre.push_back(0.0);
  for (size_t i = mpre.size() - 1; i > 0; --i) mpre[i - 1] = std::max(mpre[i - 1], mpre[i]);

  static const std::vector<double> x = NumpyLinspace(0.0, 1.0, 101);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = NumpyInterp(x[i], mrec, mpre, mpre.front(), mpre.back());
  // np.trapz(y, x): sum(diff(x) * (y[1:] + y[:-1]) / 2.0), summed pairwise.
  std::vector<double> areas(x.size() - 1);
  for (size_t i = 0; i + 1 < x.size(); ++i) areas[i] = (x[i + 1] - x[i]) * (y[i + 1] + y[i]) / 2.0;
  return NumpyPairwiseSum(areas.data(), areas.size());
}

std::vector<ClassAp> ApPerClass(const std::vector<IouHits>& tp, const std::vector<double>& conf,
                                const std::vector<int>& pred_cls, const std::vector<int>& target_cls) {
  std::vector<size_t> order(conf.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return conf[a] > conf[b]; });

  std::map<int, int64_t> label_counts;
  for (int c : target_cls) ++label_counts[c];
  if (label_counts.empty()) return {};

  const std::vector<double> px = NumpyLinspace(0.0, 1.0, kNumConfPoints);
  std::vector<ClassAp> classes;
  std::vector<std::vector<double>> p_curves, r_curves;
  std::vector<size_t> members;
  std::vector<double> neg_conf, recall, precision;
  for (const auto& [cls, num_labels] : label_counts) {
    ClassAp row;
    row.cls = cls;
    row.num_labels = num_labels;
    std::vector<double> p_curve(kNumConfPoints, 0.0), r_curve(kNumConfPoints, 0.0);
    members.clear();
    for (size_t i : order) {
      if (pred_cls[i] == cls) members.push_back(i);
    }
    if (!members.empty()) {
      // xp = -conf ascends because conf descends.
      neg_conf.resize(members.size());
      for (size_t j = 0; j < members.size(); ++j) neg_conf[j] = -conf[members[j]];
      recall.resize(members.size());
      precision.resize(members.size());
      for (int t = 0; t < kNumValIouThresholds; ++t) {
        int64_t tpc = 0;
        for (size_t j = 0; j < members.size(); ++j) {
          tpc += tp[members[j]][t] ? 1 : 0;
          const int64_t fpc = static_cast<int64_t>(j + 1) - tpc;
          recall[j] = static_cast<double>(tpc) / (static_cast<double>(num_labels) + kEps);
          precision[j] = static_cast<double>(tpc) / static_cast<double>(tpc + fpc);
        }
        if (t == 0) {
          for (int i = 0; i < kNumConfPoints; ++i) {
            r_curve[i] = NumpyInterp(-px[i], neg_conf, recall, 0.0, recall.back());
            p_curve[i] = NumpyInterp(-px[i], neg_conf, precision, 1.0, precision.back());
          }
        }
        row.ap[t] = ComputeAp(recall, precision);
      }
    }
    classes.push_back(row);
    p_curves.push_back(std::move(p_curve));
    r_curves.push_back(std::move(r_curve));
  }

  // f1 = 2pr / (p + r + eps); its class mean is summed class by class, as
  // NumPy reduces over the leading axis.
  const size_t nc = classes.size();
  std::vector<std::vector<double>> f1_curves(nc, std::vector<double>(kNumConfPoints));
  std::vector<double> mean_f1(kNumConfPoints, 0.0);
  for (size_t c = 0; c < nc; ++c) {
    for (int i = 0; i < kNumConfPoints; ++i) {
      const double p = p_curves[c][i], r = r_curves[c][i];
      f1_curves[c][i] = 2 * p * r / (p + r + kEps);
      mean_f1[i] += f1_curves[c][i];
    }
  }
  for (double& v : mean_f1) v /= static_cast<double>(nc);
  const std::vector<double> smoothed = Smooth(mean_f1, 0.1);
  const size_t best = static_cast<size_t>(std::max_element(smoothed.begin(), smoothed.end()) - smoothed.begin());
  for (size_t c = 0; c < nc; ++c) {
    classes[c].precision = p_curves[c][best];
    classes[c].recall = r_curves[c][best];
    classes[c].f1 = f1_curves[c][best];
  }
  return classes;
}

}  // namespace ffyolo
