// ValMetricsAccumulator: the "internal" metrics of a YOLOv5 v7.0 validation run
// (val.py): per image it matches predictions to labels (process_batch), and at
// the end it reports P, R, mAP50 and mAP50-95 from ap_per_class, the numbers
// train.py logs and turns into fitness.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ffyolo/val_ap.h"
#include "ffyolo/val_matching.h"

namespace ffyolo {

// One row of the Ultralytics table.
struct ValClassMetrics {
  int cls = 0;
  int64_t images = 0;     // every image seen, as v7.0 prints it
  int64_t instances = 0;  // labels of this class
  double precision = 0;
  double recall = 0;
  double map50 = 0;
  double map = 0;  // mAP50-95
};

struct ValMetrics {
  int64_t images = 0;
  int64_t instances = 0;
  // Means over the classes present in the labels; all 0 when no prediction is
  // a true positive at any threshold (val.py then skips ap_per_class).
  double mp = 0;
  double mr = 0;
  double map50 = 0;
  double map = 0;
  std::vector<ValClassMetrics> classes;  // ascending class; empty when no true positive
};

class ValMetricsAccumulator {
 public:
  // One validation image: its NMS output (descending confidence, original
  // pixels) and its labels (original pixels). Either may be empty.
  void AddImage(const std::vector<ValPrediction>& predictions, const std::vector<ValLabel>& labels);

  ValMetrics Compute() const;

 private:
  int64_t images_ = 0;
  std::vector<IouHits> correct_;
  std::vector<double> conf_;
  std::vector<int> pred_cls_;
  std::vector<int> target_cls_;
};

// train.py's fitness: 0.1 * mAP50 + 0.9 * mAP50-95 (P and R weigh 0). It also
// applies when pycocotools numbers replace the internal ones.
double Fitness(double map50, double map);

// val.py's printed table: the header "Class Images Instances P R mAP50
// mAP50-95", the "all" row and, when `per_class`, one row per class named by
// class_names (the class number when the list is too short).
std::string FormatValMetricsTable(const ValMetrics& metrics, const std::vector<std::string>& class_names,
                                  bool per_class);

}  // namespace ffyolo
