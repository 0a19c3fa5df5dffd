#include "ffyolo/val_metrics.h"

#include <algorithm>
#include <cstdio>

#include "ffyolo/numpy_math.h"

namespace ffyolo {
namespace {

double NumpyMean(const std::vector<double>& values) {
  return NumpyPairwiseSum(values.data(), values.size()) / static_cast<double>(values.size());
}

}  // namespace

void ValMetricsAccumulator::AddImage(const std::vector<ValPrediction>& predictions,
                                     const std::vector<ValLabel>& labels) {
  ++images_;
  for (const ValLabel& label : labels) target_cls_.push_back(label.cls);
  if (predictions.empty()) return;
  std::vector<IouHits> correct =
      labels.empty() ? std::vector<IouHits>(predictions.size(), IouHits{}) : ProcessBatch(predictions, labels);
  correct_.insert(correct_.end(), correct.begin(), correct.end());
  for (const ValPrediction& p : predictions) {
    conf_.push_back(p.conf);
    pred_cls_.push_back(p.cls);
  }
}

ValMetrics ValMetricsAccumulator::Compute() const {
  ValMetrics metrics;
  metrics.images = images_;
  metrics.instances = static_cast<int64_t>(target_cls_.size());
  const bool any_true_positive = std::any_of(correct_.begin(), correct_.end(), [](const IouHits& hits) {
    return std::any_of(hits.begin(), hits.end(), [](bool hit) { return hit; });
  });
  if (!any_true_positive) return metrics;

  const std::vector<ClassAp> class_aps = ApPerClass(correct_, conf_, pred_cls_, target_cls_);
  std::vector<double> p, r, ap50, ap;
  for (const ClassAp& c : class_aps) {
    ValClassMetrics row;
    row.cls = c.cls;
    row.images = images_;
    row.instances = c.num_labels;
    row.precision = c.precision;
    row.recall = c.recall;
    row.map50 = c.ap[0];
    row.map = NumpyPairwiseSum(c.ap.data(), c.ap.size()) / static_cast<double>(c.ap.size());
    metrics.classes.push_back(row);
    p.push_back(row.precision);
    r.push_back(row.recall);
    ap50.push_back(row.map50);
    ap.push_back(row.map);
  }
  metrics.mp = NumpyMean(p);
  metrics.mr = NumpyMean(r);
  metrics.map50 = NumpyMean(ap50);
  metrics.map = NumpyMean(ap);
  return metrics;
}

double Fitness(double map50, double map) { return 0.1 * map50 + 0.9 * map; }

std::string FormatValMetricsTable(const ValMetrics& metrics, const std::vector<std::string>& class_names,
                                  bool per_class) {
  char buf[256];
  std::string table;
  // val.py: ('%22s' + '%11s' * 6) for the header, '%22s' + '%11i' * 2 + '%11.3g' * 4 for rows.
  std::snprintf(buf, sizeof(buf), "%22s%11s%11s%11s%11s%11s%11s\n", "Class", "Images", "Instances", "P", "R",
                "mAP50", "mAP50-95");
  table += buf;
  auto add_row = [&](const std::string& name, int64_t images, int64_t instances, double p, double r,
                     double map50, double map) {
    std::snprintf(buf, sizeof(buf), "%22s%11lld%11lld%11.3g%11.3g%11.3g%11.3g\n", name.c_str(),
                  static_cast<long long>(images), static_cast<long long>(instances), p, r, map50, map);
    table += buf;
  };
  add_row("all", metrics.images, metrics.instances, metrics.mp, metrics.mr, metrics.map50, metrics.map);
  if (per_class) {
    for (const ValClassMetrics& c : metrics.classes) {
      const std::string name = c.cls >= 0 && static_cast<size_t>(c.cls) < class_names.size()
                                   ? class_names[c.cls]
                                   : std::to_string(c.cls);
      add_row(name, c.images, c.instances, c.precision, c.recall, c.map50, c.map);
    }
  }
  return table;
}

}  // namespace ffyolo
