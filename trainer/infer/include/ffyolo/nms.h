// Non-maximum suppression as YOLOv5 v7.0 validates with it
// (utils/general.py::non_max_suppression), and the torchvision.ops.nms it
// relies on, in C++ (no torchvision).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace ffyolo {

// torchvision.ops.nms(boxes, scores, iou_threshold): greedy suppression of
// (N, 4) xyxy boxes in decreasing score order; a box goes when its IoU
// (inter / union, no eps, in the boxes' precision) with a kept box is
// > iou_threshold. Returns the kept indices (int64, on the boxes' device),
// by decreasing score. Equal scores keep their input order (a stable sort, as
// torchvision's CPU kernel). Double boxes are compared in double, all others
// in float.
at::Tensor Nms(const at::Tensor& boxes, const at::Tensor& scores, double iou_threshold);

struct NmsOptions {
  double conf_thres = 0.25;
  double iou_thres = 0.45;
  bool agnostic = false;     // one class offset for all classes
  bool multi_label = false;  // a row per (box, class) above conf_thres; ignored when nc == 1
  int64_t max_det = 300;
  std::vector<int64_t> classes;  // --classes: keep only these (empty: all)
};

// Per-class boxes are shifted apart by cls * kNmsMaxWh so one Nms call never
// lets different classes suppress each other.
inline constexpr int64_t kNmsMaxWh = 7680;
// At most this many detections, by confidence, enter Nms per image.
inline constexpr int64_t kNmsMaxBoxes = 30000;

// non_max_suppression(prediction, conf_thres, iou_thres, agnostic=,
// multi_label=, max_det=): `prediction` is (bs, N, 5 + nc) with pixel
// [cx, cy, w, h], objectness and class probabilities. Per image a (n, 6)
// tensor [x1, y1, x2, y2, conf, cls] with conf = obj * cls, by decreasing conf,
// in the prediction's dtype and device. Candidates need obj > conf_thres and
// conf > conf_thres (both strict). Detections of equal conf keep candidate
// order (anchor, then class), where PyTorch's unstable sort leaves it open.
// YOLOv5's time limit, which drops the remaining images of a slow batch, is
// not reproduced: it would make the output depend on the machine's speed.
std::vector<at::Tensor> NonMaxSuppression(const at::Tensor& prediction, const NmsOptions& options);

}  // namespace ffyolo
