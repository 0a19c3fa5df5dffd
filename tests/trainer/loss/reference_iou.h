// A plain double-precision transcription of YOLOv5's bbox_iou for one pair of
// boxes, the independent reference the box-op and loss tests compare with.
#pragma once

#include <algorithm>
#include <cmath>

namespace ffyolo::testing {

struct ReferenceIou {
  double iou = 0, giou = 0, diou = 0, ciou = 0;
  double v = 0, alpha = 0;
};

// a and b are [cx, cy, w, h] (xywh) or [x1, y1, x2, y2]. With fixed_alpha >= 0
// CIoU uses it instead of its own alpha (to differentiate with alpha frozen).
inline ReferenceIou ComputeReferenceIou(const double a[4], const double b[4], bool xywh = true,
                                        double fixed_alpha = -1, double eps = 1e-7) {
  double ax1, ay1, ax2, ay2, bx1, by1, bx2, by2, aw, ah, bw, bh;
  if (xywh) {
    ax1 = a[0] - a[2] / 2, ax2 = a[0] + a[2] / 2, ay1 = a[1] - a[3] / 2, ay2 = a[1] + a[3] / 2;
    bx1 = b[0] - b[2] / 2, bx2 = b[0] + b[2] / 2, by1 = b[1] - b[3] / 2, by2 = b[1] + b[3] / 2;
    aw = a[2], ah = a[3], bw = b[2], bh = b[3];
  } else {
    ax1 = a[0], ay1 = a[1], ax2 = a[2], ay2 = a[3];
    bx1 = b[0], by1 = b[1], bx2 = b[2], by2 = b[3];
    aw = ax2 - ax1, ah = ay2 - ay1 + eps, bw = bx2 - bx1, bh = by2 - by1 + eps;
  }
  const double inter = std::max(0.0, std::min(ax2, bx2) - std::max(ax1, bx1)) *
                       std::max(0.0, std::min(ay2, by2) - std::max(ay1, by1));
  const double uni = aw * ah + bw * bh - inter + eps;
  ReferenceIou r;
  r.iou = inter / uni;
  const double cw = std::max(ax2, bx2) - std::min(ax1, bx1);
  const double ch = std::max(ay2, by2) - std::min(ay1, by1);
  const double c_area = cw * ch + eps;
  r.giou = r.iou - (c_area - uni) / c_area;
  const double c2 = cw * cw + ch * ch + eps;
  const double dx = bx1 + bx2 - ax1 - ax2, dy = by1 + by2 - ay1 - ay2;
  const double rho2 = (dx * dx + dy * dy) / 4;
  r.diou = r.iou - rho2 / c2;
  const double pi = std::acos(-1.0);
  const double dv = std::atan(bw / bh) - std::atan(aw / ah);
  r.v = 4 / (pi * pi) * dv * dv;
  r.alpha = fixed_alpha >= 0 ? fixed_alpha : r.v / (r.v - r.iou + 1 + eps);
  r.ciou = r.iou - (rho2 / c2 + r.v * r.alpha);
  return r;
}

}  // namespace ffyolo::testing
