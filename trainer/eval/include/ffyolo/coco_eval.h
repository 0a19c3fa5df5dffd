// CocoEvaluator: the COCO bbox evaluation exactly as pycocotools 2.0.x
// (COCOeval(gt, dt, "bbox") with default parameters) computes it, so that the
// numbers the trainer reports are the published COCO mAP without a Python step.
// Ground truth comes in memory (the trainer feeds it from a packed dataset);
// coco_json.h loads it, and detections, from the usual JSON files.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ffyolo {

// One ground-truth object as a COCO instances file stores it.
struct CocoAnnotation {
  int64_t image_id = 0;
  int64_t category_id = 0;
  std::array<double, 4> bbox{};  // x, y, w, h in pixels
  // The stored COCO "area" (the segmentation area, not w*h): it decides whether
  // the object counts as small, medium or large.
  double area = 0;
  // A crowd region never counts as an object; detections it covers are ignored.
  bool iscrowd = false;
};

struct CocoGroundTruth {
  // The images evaluated (COCO "images"), in any order; an image without
  // annotations still counts, its detections being false positives.
  std::vector<int64_t> image_ids;
  // In file order: among equal IoUs the later annotation wins, as in pycocotools.
  std::vector<CocoAnnotation> annotations;
};

// One entry of a COCO results file. Its area is w*h, as pycocotools' loadRes sets it.
struct CocoDetection {
  int64_t image_id = 0;
  int64_t category_id = 0;
  std::array<double, 4> bbox{};  // x, y, w, h in pixels
  double score = 0;
};

// Usage: CocoEvaluator e(gt, dets); const auto& stats = e.Summarize();
// Summarize() runs Evaluate() and Accumulate() when they have not run yet.
// The categories are those of the ground-truth annotations; detections of
// other categories or of images not in image_ids are left out, as pycocotools
// leaves them out (a category without counted objects scores -1 and is skipped).
class CocoEvaluator {
 public:
  static constexpr int kNumIouThresholds = 10;     // 0.50:0.05:0.95
  static constexpr int kNumRecallThresholds = 101;  // 0:0.01:1
  static constexpr int kNumAreaRanges = 4;
  static constexpr int kNumMaxDets = 3;
  enum AreaRange { kAreaAll = 0, kAreaSmall = 1, kAreaMedium = 2, kAreaLarge = 3 };
  // AP, AP50, AP75, APs, APm, APl, AR1, AR10, AR100, ARs, ARm, ARl.
  using Stats = std::array<double, 12>;

  CocoEvaluator(CocoGroundTruth ground_truth, std::vector<CocoDetection> detections);

  // Per image and category: sorts detections by score, keeps the best 100,
  // and matches them to ground truth at every IoU threshold and area range.
  void Evaluate();
  // Builds the precision and recall tables from the per-image results.
  void Accumulate();
  // The 12 summary numbers; -1 where no category has a counted object.
  const Stats& Summarize();

  // pycocotools' 12 printed lines, e.g.
  // " Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.352".
  static std::vector<std::string> SummaryLines(const Stats& stats);

  static const std::vector<double>& IouThresholds();
  static const std::vector<double>& RecallThresholds();
  static const std::array<int, kNumMaxDets>& MaxDets();  // 1, 10, 100

  // Sorted category ids; `category` below indexes this list.
  const std::vector<int64_t>& category_ids() const { return category_ids_; }
  // After Accumulate(): the interpolated precision at recall threshold
  // `recall_index`, and the final recall; -1 for a category without counted
  // objects in that area range. `max_dets_index` indexes MaxDets().
  double precision(int iou_index, int recall_index, int category, AreaRange area,
                   int max_dets_index) const;
  double recall(int iou_index, int category, AreaRange area, int max_dets_index) const;

 private:
  // One (image, category) pair with ground truth or detections.
  struct ImageResult {
    int category = 0;
    size_t first_detection = 0;  // into detection_scores_
    int num_detections = 0;      // at most MaxDets().back(), best score first
    std::array<int, kNumAreaRanges> num_counted_gt{};  // not ignored
  };

  void EvaluateImage(int category, const std::vector<const CocoAnnotation*>& gts,
                     std::vector<const CocoDetection*> dets);
  double SummarizeAp(int iou_index, AreaRange area, int max_dets_index) const;
  double SummarizeAr(AreaRange area, int max_dets_index) const;
  size_t PrecisionIndex(int t, int r, int k, int a, int m) const;
  size_t RecallIndex(int t, int k, int a, int m) const;

  CocoGroundTruth ground_truth_;
  std::vector<CocoDetection> detections_;
  std::vector<int64_t> image_ids_;     // sorted, unique
  std::vector<int64_t> category_ids_;  // sorted, unique

  bool evaluated_ = false;
  bool accumulated_ = false;
  bool summarized_ = false;
  // Category-major, images in id order: the order pycocotools concatenates them.
  std::vector<ImageResult> image_results_;
  std::vector<double> detection_scores_;
  // [detection][area][iou]: one of the outcomes in coco_eval.cc.
  std::vector<uint8_t> detection_outcomes_;
  std::vector<double> precision_;  // [iou][recall threshold][category][area][max dets]
  std::vector<double> recall_;     // [iou][category][area][max dets]
  Stats stats_{};
};

}  // namespace ffyolo
