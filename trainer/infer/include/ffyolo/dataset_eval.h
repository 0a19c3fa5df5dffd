// DatasetEvaluator: scores detections on a packed split against the split's own
// labels, with both reports YOLOv5 users know: the Ultralytics table (P, R,
// mAP50, mAP50-95 from val.py's matching) and the 12 COCO stats computed as
// pycocotools does, from the stored COCO areas and crowd regions (no JSON
// needed). Torch-free: the validator feeds it, and so does `yolo-val
// --predictions` with any detector's COCO results.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ffr/status.h"
#include "ffyolo/coco_eval.h"
#include "ffyolo/label_index.h"
#include "ffyolo/manifest.h"
#include "ffyolo/val_metrics.h"

namespace ffyolo {

struct DatasetEvalResult {
  ValMetrics metrics;                 // the Ultralytics numbers
  CocoEvaluator::Stats coco{};        // AP, AP50, ..., ARl
  int64_t images = 0;
  int64_t detections = 0;
};

// The class names under --single-cls, as train.py and val.py name them: ['item'], unless the data has one
// class already.
std::vector<std::string> SingleClassNames(const std::vector<std::string>& names);

class DatasetEvaluator {
 public:
  // single_cls (--single-cls): every label and detection counts as class 0, the manifest's first category.
  DatasetEvaluator(const Manifest& manifest, const LabelIndex& index, bool single_cls = false);

  // The detections of sample `index`, boxes [x1, y1, x2, y2] in original pixels.
  void AddImage(size_t index, const std::vector<ValPrediction>& predictions);
  // COCO results (bbox [x, y, w, h], category ids, image ids) for the whole
  // split; an unknown image id or category id is an error naming the entry.
  ffr::Status AddCocoResults(const std::vector<CocoDetection>& detections, const std::string& where);

  DatasetEvalResult Finish() const;

  // The predictions so far in the COCO results format (val.py's save_one_json:
  // bbox rounded to 3 decimals, score to 5).
  std::string PredictionsJson() const;
  // The ground truth of the split, as COCOeval wants it.
  const CocoGroundTruth& ground_truth() const { return ground_truth_; }

 private:
  const Manifest& manifest_;
  const LabelIndex& index_;
  bool single_cls_;
  CocoGroundTruth ground_truth_;
  std::vector<CocoDetection> detections_;
  ValMetricsAccumulator metrics_;
  std::unordered_map<int64_t, size_t> image_index_;     // COCO image id -> sample
  std::unordered_map<int64_t, int> class_of_category_;  // COCO category id -> class
  std::vector<bool> seen_;
};

// The report printed after validation: the table (per class when asked) and
// pycocotools' 12 summary lines.
std::string FormatEvalReport(const DatasetEvalResult& result, const std::vector<std::string>& names,
                             bool per_class);

// The same numbers at full precision (%.17g) as JSON, for programs: the 12
// COCO stats under pycocotools' names (AP, AP50, ..., ARl) in their order,
// the Ultralytics P, R, mAP50, mAP50-95, and the image, label and detection counts.
std::string EvalStatsJson(const DatasetEvalResult& result);

}  // namespace ffyolo
