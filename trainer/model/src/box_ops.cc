#include "ffyolo/box_ops.h"

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/atan.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>

#include <algorithm>
#include <vector>

namespace ffyolo {

namespace {

constexpr double kPi = 3.14159265358979323846;

// One set of box edges, each (..., 1), plus the width and height that enter
// the union (which differ from the edges' by eps in the xyxy form).
struct Edges {
  at::Tensor x1, y1, x2, y2, w, h;
};

Edges ToEdges(const at::Tensor& box, bool xywh, double eps) {
  const std::vector<at::Tensor> c = box.chunk(4, -1);
  Edges e;
  if (xywh) {
    const at::Tensor half_w = c[2] / 2, half_h = c[3] / 2;
    e.x1 = c[0] - half_w;
    e.x2 = c[0] + half_w;
    e.y1 = c[1] - half_h;
    e.y2 = c[1] + half_h;
    e.w = c[2];
    e.h = c[3];
  } else {
    e.x1 = c[0];
    e.y1 = c[1];
    e.x2 = c[2];
    e.y2 = c[3];
    e.w = e.x2 - e.x1;
    e.h = e.y2 - e.y1 + eps;
  }
  return e;
}

}  // namespace

at::Tensor BboxIou(const at::Tensor& box1, const at::Tensor& box2, IouKind kind, bool xywh,
                   double eps) {
  const Edges a = ToEdges(box1, xywh, eps);
  const Edges b = ToEdges(box2, xywh, eps);
  const at::Tensor inter = (at::minimum(a.x2, b.x2) - at::maximum(a.x1, b.x1)).clamp_min(0) *
                           (at::minimum(a.y2, b.y2) - at::maximum(a.y1, b.y1)).clamp_min(0);
  const at::Tensor union_area = a.w * a.h + b.w * b.h - inter + eps;
  const at::Tensor iou = inter / union_area;
  if (kind == IouKind::kIoU) return iou.squeeze(-1);

  // The smallest enclosing box.
  const at::Tensor cw = at::maximum(a.x2, b.x2) - at::minimum(a.x1, b.x1);
  const at::Tensor ch = at::maximum(a.y2, b.y2) - at::minimum(a.y1, b.y1);
  if (kind == IouKind::kGIoU) {
    const at::Tensor c_area = cw * ch + eps;
    return (iou - (c_area - union_area) / c_area).squeeze(-1);
  }
  const at::Tensor c2 = cw.pow(2) + ch.pow(2) + eps;  // squared diagonal
  const at::Tensor rho2 =
      ((b.x1 + b.x2 - a.x1 - a.x2).pow(2) + (b.y1 + b.y2 - a.y1 - a.y2).pow(2)) / 4;
  if (kind == IouKind::kDIoU) return (iou - rho2 / c2).squeeze(-1);

  const at::Tensor v = (4 / (kPi * kPi)) * (at::atan(b.w / b.h) - at::atan(a.w / a.h)).pow(2);
  at::Tensor alpha;
  {
    at::NoGradGuard no_grad;
    alpha = v / (v - iou + (1 + eps));
  }
  return (iou - (rho2 / c2 + v * alpha)).squeeze(-1);
}

at::Tensor BoxIou(const at::Tensor& box1, const at::Tensor& box2, double eps) {
  const std::vector<at::Tensor> a = box1.unsqueeze(1).chunk(2, 2);
  const std::vector<at::Tensor> b = box2.unsqueeze(0).chunk(2, 2);
  const at::Tensor inter = (at::minimum(a[1], b[1]) - at::maximum(a[0], b[0])).clamp_min(0).prod(2);
  return inter / ((a[1] - a[0]).prod(2) + (b[1] - b[0]).prod(2) - inter + eps);
}

at::Tensor XywhToXyxy(const at::Tensor& xywh) {
  at::Tensor y = xywh.clone();
  y.select(-1, 0).copy_(xywh.select(-1, 0) - xywh.select(-1, 2) / 2);
  y.select(-1, 1).copy_(xywh.select(-1, 1) - xywh.select(-1, 3) / 2);
  y.select(-1, 2).copy_(xywh.select(-1, 0) + xywh.select(-1, 2) / 2);
  y.select(-1, 3).copy_(xywh.select(-1, 1) + xywh.select(-1, 3) / 2);
  return y;
}

at::Tensor XyxyToXywh(const at::Tensor& xyxy) {
  at::Tensor y = xyxy.clone();
  y.select(-1, 0).copy_((xyxy.select(-1, 0) + xyxy.select(-1, 2)) / 2);
  y.select(-1, 1).copy_((xyxy.select(-1, 1) + xyxy.select(-1, 3)) / 2);
  y.select(-1, 2).copy_(xyxy.select(-1, 2) - xyxy.select(-1, 0));
  y.select(-1, 3).copy_(xyxy.select(-1, 3) - xyxy.select(-1, 1));
  return y;
}

at::Tensor ClipBoxes(const at::Tensor& boxes, int64_t height, int64_t width) {
  at::Tensor y = boxes.clone();
  y.select(-1, 0).clamp_(0, width);
  y.select(-1, 1).clamp_(0, height);
  y.select(-1, 2).clamp_(0, width);
  y.select(-1, 3).clamp_(0, height);
  return y;
}

at::Tensor ScaleBoxes(int64_t input_h, int64_t input_w, const at::Tensor& boxes, int64_t orig_h,
                      int64_t orig_w, const std::optional<RatioPad>& ratio_pad) {
  RatioPad rp;
  if (ratio_pad) {
    rp = *ratio_pad;
  } else {
    rp.gain =
        std::min(static_cast<double>(input_h) / orig_h, static_cast<double>(input_w) / orig_w);
    rp.pad_x = (input_w - orig_w * rp.gain) / 2;
    rp.pad_y = (input_h - orig_h * rp.gain) / 2;
  }
  at::Tensor y = boxes.clone();
  y.select(-1, 0).sub_(rp.pad_x);
  y.select(-1, 2).sub_(rp.pad_x);
  y.select(-1, 1).sub_(rp.pad_y);
  y.select(-1, 3).sub_(rp.pad_y);
  y.narrow(-1, 0, 4).div_(rp.gain);
  return ClipBoxes(y, orig_h, orig_w);
}

}  // namespace ffyolo
