#include "ffyolo/cutmix.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace ffyolo {

namespace {

using Area = std::array<int, 4>;  // x1, y1, x2, y2

// _rand_bbox: a cut of sqrt(1 - lam) of each side around a random centre, clipped to the image.
Area RandomArea(SampleRandom* rng, int width, int height) {
  const double cut_ratio = std::sqrt(1.0 - rng->BetaSymmetric(1));
  const int cut_w = static_cast<int>(width * cut_ratio), cut_h = static_cast<int>(height * cut_ratio);
  const int cx = static_cast<int>(rng->UniformIndex(width)), cy = static_cast<int>(rng->UniformIndex(height));
  return {std::clamp(cx - cut_w / 2, 0, width), std::clamp(cy - cut_h / 2, 0, height),
          std::clamp(cx + cut_w / 2, 0, width), std::clamp(cy + cut_h / 2, 0, height)};
}

// bbox_ioa's entry for (area, box): their intersection over the box's area, in numpy's float32 steps.
float IntersectionOverArea(const Area& a, const PixelBox& b) {
  const float w = std::max(std::min(static_cast<float>(a[2]), b.x2) - std::max(static_cast<float>(a[0]), b.x1), 0.f);
  const float h = std::max(std::min(static_cast<float>(a[3]), b.y2) - std::max(static_cast<float>(a[1]), b.y1), 0.f);
  const float inter = w * h;
  const float area = (b.x2 - b.x1) * (b.y2 - b.y1);
  return inter / (area + 1e-7f);
}

// add_padding(-x1), clip(0, x2 - x1), add_padding(x1): each step rounded to float32.
float ClipInto(float v, int lo, int hi) { return std::clamp(v - static_cast<float>(lo), 0.f, static_cast<float>(hi - lo)) + static_cast<float>(lo); }

}  // namespace

void ApplyCutMix(SampleRandom* rng, const cv::Mat& other, const std::vector<PixelBox>& other_boxes, cv::Mat* img,
                 std::vector<PixelBox>* boxes) {
  CV_Assert(img->type() == CV_8UC3 && other.type() == CV_8UC3 && other.size() == img->size());
  std::array<Area, 3> areas;
  for (Area& a : areas) a = RandomArea(rng, img->cols, img->rows);
  // The areas whose intersections over the boxes sum to 0: every term is >= 0, so those that meet no box.
  std::vector<const Area*> free;
  for (const Area& a : areas) {
    bool meets = false;
    for (const PixelBox& b : *boxes) meets = meets || IntersectionOverArea(a, b) > 0;
    if (!meets) free.push_back(&a);
  }
  if (free.empty()) return;
  const Area& area = *free[rng->UniformIndex(static_cast<int64_t>(free.size()))];
  std::vector<PixelBox> moved;
  for (const PixelBox& b : other_boxes) {
    if (!(IntersectionOverArea(area, b) >= 0.1f)) continue;
    PixelBox c = b;
    c.x1 = ClipInto(b.x1, area[0], area[2]);
    c.x2 = ClipInto(b.x2, area[0], area[2]);
    c.y1 = ClipInto(b.y1, area[1], area[3]);
    c.y2 = ClipInto(b.y2, area[1], area[3]);
    moved.push_back(c);
  }
  if (moved.empty()) return;
  const cv::Rect rect(cv::Point(area[0], area[1]), cv::Point(area[2], area[3]));
  if (!rect.empty()) other(rect).copyTo((*img)(rect));
  boxes->insert(boxes->end(), moved.begin(), moved.end());
}

}  // namespace ffyolo
