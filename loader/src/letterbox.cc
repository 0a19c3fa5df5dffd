#include "ffyolo/letterbox.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

namespace ffyolo {

cv::Size LoadResizeSize(int w0, int h0, int img_size, Augmentation mode) {
  const double r = static_cast<double>(img_size) / std::max(w0, h0);
  if (r == 1) return {w0, h0};
  if (mode == Augmentation::kUltralytics8) {  // rounds up, capped: 581 * (640 / 581) gives 640
    const auto side = [&](int n) { return std::min(static_cast<int>(std::ceil(n * r)), img_size); };
    return {side(w0), side(h0)};
  }
  // v7.0 truncates: 581 * (640 / 581) is 639.99..., so a 581-wide image becomes 639 wide.
  // An image more elongated than img_size:1 would truncate to 0 and make
  // cv::resize throw (v7.0 fails so too): it keeps a side of 1 pixel.
  return {std::max(1, static_cast<int>(w0 * r)), std::max(1, static_cast<int>(h0 * r))};
}

int LoadResizeInterpolation(bool augment, int w0, int h0, int img_size, Augmentation mode) {
  const double r = static_cast<double>(img_size) / std::max(w0, h0);
  return mode == Augmentation::kUltralytics8 || augment || r > 1 ? cv::INTER_LINEAR : cv::INTER_AREA;
}

cv::Rect ResizeSourceRegion(const cv::Rect& region, cv::Size src, cv::Size dst) {
  // OpenCV samples dst pixel d at source coordinate (d + 0.5) * src / dst - 0.5,
  // between its floor and the pixel after it, clamped to the image.
  const auto source_span = [](int first, int end, int src_n, int dst_n, int* lo, int* hi) {
    const double scale = static_cast<double>(src_n) / dst_n;
    *lo = std::clamp(static_cast<int>(std::floor((first + 0.5) * scale - 0.5)) - 1, 0, src_n);
    *hi = std::clamp(static_cast<int>(std::floor((end - 0.5) * scale - 0.5)) + 3, 0, src_n);
  };
  int x0, x1, y0, y1;
  source_span(region.x, region.br().x, src.width, dst.width, &x0, &x1);
  source_span(region.y, region.br().y, src.height, dst.height, &y0, &y1);
  return cv::Rect(cv::Point(x0, y0), cv::Point(x1, y1));
}

LetterboxPlan PlanLetterbox(int w, int h, int target_w, int target_h, bool scaleup, int auto_stride) {
  LetterboxPlan plan;
  plan.ratio = std::min(static_cast<double>(target_h) / h, static_cast<double>(target_w) / w);
  if (!scaleup) plan.ratio = std::min(plan.ratio, 1.0);
  // At least 1 pixel, as in LoadResizeSize (3000x2 at 64 would round to 64x0).
  plan.new_w = std::max(1, static_cast<int>(PyRound(w * plan.ratio)));
  plan.new_h = std::max(1, static_cast<int>(PyRound(h * plan.ratio)));
  int pad_w = target_w - plan.new_w, pad_h = target_h - plan.new_h;
  if (auto_stride > 0) {  // np.mod: the paddings are >= 0 here, so % agrees
    pad_w %= auto_stride;
    pad_h %= auto_stride;
  }
  plan.dw = pad_w / 2.0;
  plan.dh = pad_h / 2.0;
  plan.top = static_cast<int>(PyRound(plan.dh - 0.1));
  plan.bottom = static_cast<int>(PyRound(plan.dh + 0.1));
  plan.left = static_cast<int>(PyRound(plan.dw - 0.1));
  plan.right = static_cast<int>(PyRound(plan.dw + 0.1));
  return plan;
}

void ApplyLetterbox(const cv::Mat& src, const LetterboxPlan& plan, cv::Mat* dst) {
  CV_Assert(src.type() == CV_8UC3 && dst->type() == CV_8UC3);
  CV_Assert(dst->cols == plan.left + plan.new_w + plan.right && dst->rows == plan.top + plan.new_h + plan.bottom);
  // Resizing straight into the ROI: dst already has the right size and type,
  // so OpenCV writes through the view instead of reallocating.
  cv::Mat content = (*dst)(cv::Rect(plan.left, plan.top, plan.new_w, plan.new_h));
  if (src.size() == content.size()) {
    src.copyTo(content);
  } else {
    cv::resize(src, content, content.size(), 0, 0, cv::INTER_LINEAR);
  }
  const cv::Scalar pad = cv::Scalar::all(kPadValue);
  const auto fill = [&](const cv::Rect& r) {
    if (!r.empty()) (*dst)(r).setTo(pad);
  };
  fill({0, 0, dst->cols, plan.top});
  fill({0, plan.top + plan.new_h, dst->cols, plan.bottom});
  fill({0, plan.top, plan.left, plan.new_h});
  fill({plan.left + plan.new_w, plan.top, plan.right, plan.new_h});
}

}  // namespace ffyolo
