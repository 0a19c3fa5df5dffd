// Box geometry on tensors as YOLOv5 v7.0 computes it (utils/metrics.py,
// utils/general.py): the IoU family used by the loss and by validation, the
// xywh <-> xyxy conversions and the mapping of letterboxed boxes back to the
// original image. Every function keeps the input's dtype and device.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace ffyolo {

// Which member of the IoU family BboxIou returns.
enum class IouKind { kIoU, kGIoU, kDIoU, kCIoU };

// bbox_iou(box1, box2, xywh, GIoU, DIoU, CIoU, eps): element-wise over box
// pairs; box1 and box2 are (..., 4) and broadcast against each other. Returns
// (...) (YOLOv5 keeps a trailing dimension of 1; this drops it). In the xywh
// form no eps is added to w or h; in the xyxy form eps is added to the heights,
// as YOLOv5 does. CIoU's alpha is a constant for autograd.
at::Tensor BboxIou(const at::Tensor& box1, const at::Tensor& box2, IouKind kind, bool xywh = true,
                   double eps = 1e-7);

// box_iou(box1, box2): the (N, M) IoU matrix of xyxy boxes,
// inter / (area1 + area2 - inter + eps).
at::Tensor BoxIou(const at::Tensor& box1, const at::Tensor& box2, double eps = 1e-7);

// (..., 4) [cx, cy, w, h] -> [x1, y1, x2, y2] and back; new tensors.
at::Tensor XywhToXyxy(const at::Tensor& xywh);
at::Tensor XyxyToXywh(const at::Tensor& xyxy);

// clip_boxes: (..., 4) xyxy boxes clamped to [0, width] x [0, height].
at::Tensor ClipBoxes(const at::Tensor& boxes, int64_t height, int64_t width);

// How an image was fitted into the network input: boxes_in = boxes_orig * gain
// + pad. YOLOv5's ratio_pad is ((gain_h, gain_w), (pad_x, pad_y)) and only
// gain_h is used.
struct RatioPad {
  double gain = 1;
  double pad_x = 0, pad_y = 0;
};

// scale_boxes(img1_shape, boxes, img0_shape, ratio_pad): (..., 4) xyxy boxes
// mapped from the network input (input_h x input_w) back to the original image
// (orig_h x orig_w) and clipped to it. Without ratio_pad the gain and the
// centred padding are derived from the two shapes. YOLOv5 works in place; this
// returns a new tensor.
at::Tensor ScaleBoxes(int64_t input_h, int64_t input_w, const at::Tensor& boxes, int64_t orig_h,
                      int64_t orig_w, const std::optional<RatioPad>& ratio_pad = std::nullopt);

}  // namespace ffyolo
