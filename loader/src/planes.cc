#include "ffyolo/planes.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <opencv2/core/hal/intrin.hpp>
#include <opencv2/imgproc.hpp>
#include <vector>

#include "image_view.h"

namespace ffyolo {

namespace {

// One row of `width` BGR pixels to the R, G and B plane rows, mirrored when
// `mirror` (pixel x goes to width - 1 - x).
void SplitRow(const uint8_t* bgr, int width, bool mirror, uint8_t* r, uint8_t* g, uint8_t* b) {
  int x = 0;
#if CV_SIMD128
  for (; x <= width - 16; x += 16) {
    cv::v_uint8x16 vb, vg, vr;
    if (mirror) {
      cv::v_load_deinterleave(bgr + 3 * (width - 16 - x), vb, vg, vr);
      vb = cv::v_reverse(vb), vg = cv::v_reverse(vg), vr = cv::v_reverse(vr);
    } else {
      cv::v_load_deinterleave(bgr + 3 * x, vb, vg, vr);
    }
    cv::v_store(r + x, vr);
    cv::v_store(g + x, vg);
    cv::v_store(b + x, vb);
  }
#endif
  for (; x < width; ++x) {
    const uint8_t* p = bgr + 3 * (mirror ? width - 1 - x : x);
    r[x] = p[2];
    g[x] = p[1];
    b[x] = p[0];
  }
}

}  // namespace

void WriteRgbPlanes(const cv::Mat& bgr, uint8_t* dst) { WriteRgbPlanes(bgr, PlaneAugment(), dst); }

void WriteRgbPlanes(const cv::Mat& bgr, const PlaneAugment& augment, uint8_t* dst) {
  CV_Assert(bgr.type() == CV_8UC3);
  const int rows = bgr.rows, cols = bgr.cols;
  const size_t plane = static_cast<size_t>(rows) * cols;
  // Output row y shows source row y, or rows - 1 - y after flipud.
  for (int y = 0; y < rows; ++y) {
    uint8_t* first = dst + static_cast<size_t>(augment.flip_up_down ? rows - 1 - y : y) * cols;
    uint8_t *r = first, *g = first + plane, *b = first + 2 * plane;
    if (augment.bgr) std::swap(r, b);
    const uint8_t* src = bgr.ptr<uint8_t>(y);
    if (augment.hsv)
      HsvToPlanes(*augment.hsv, src, cols, augment.flip_left_right, r, g, b);
    else
      SplitRow(src, cols, augment.flip_left_right, r, g, b);
  }
}

void WriteLetterboxedPlanes(const cv::Mat& bgr, const LetterboxPlan& plan, uint8_t* dst) {
  CV_Assert(bgr.type() == CV_8UC3);
  cv::Mat content = bgr;
  if (bgr.size() != cv::Size(plan.new_w, plan.new_h)) {
    thread_local std::vector<uint8_t> resized;
    content = ImageView(&resized, plan.new_h, plan.new_w);
    cv::resize(bgr, content, content.size(), 0, 0, cv::INTER_LINEAR);  // as ApplyLetterbox
  }
  const int width = plan.left + plan.new_w + plan.right;
  const size_t plane = static_cast<size_t>(width) * (plan.top + plan.new_h + plan.bottom);
  const size_t below = static_cast<size_t>(plan.top + plan.new_h) * width;
  for (int c = 0; c < 3; ++c) {
    std::memset(dst + c * plane, kPadValue, static_cast<size_t>(plan.top) * width);
    std::memset(dst + c * plane + below, kPadValue, static_cast<size_t>(plan.bottom) * width);
  }
  for (int y = 0; y < plan.new_h; ++y) {
    uint8_t* row = dst + static_cast<size_t>(plan.top + y) * width;
    for (int c = 0; c < 3; ++c) {
      std::memset(row + c * plane, kPadValue, plan.left);
      std::memset(row + c * plane + plan.left + plan.new_w, kPadValue, plan.right);
    }
    row += plan.left;
    SplitRow(content.ptr<uint8_t>(y), plan.new_w, /*mirror=*/false, row, row + plane, row + 2 * plane);
  }
}

}  // namespace ffyolo
