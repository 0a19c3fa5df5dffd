#include "ffyolo/boxes.h"

#include <algorithm>

namespace ffyolo {

std::vector<NormBox> ToNormalized(const std::vector<PixelBox>& boxes, int w, int h) {
  // YOLOv5's labels are float32 arrays, and numpy keeps float32 when mixing
  // them with Python scalars: the bounds and the arithmetic stay in float.
  const float max_x = static_cast<float>(w - 1e-3), max_y = static_cast<float>(h - 1e-3);
  const float fw = static_cast<float>(w), fh = static_cast<float>(h);
  std::vector<NormBox> out;
  out.reserve(boxes.size());
  for (const PixelBox& b : boxes) {
    const float x1 = std::clamp(b.x1, 0.f, max_x), x2 = std::clamp(b.x2, 0.f, max_x);
    const float y1 = std::clamp(b.y1, 0.f, max_y), y2 = std::clamp(b.y2, 0.f, max_y);
    NormBox n;
    n.cls = b.cls;
    n.cx = (x1 + x2) / 2 / fw;
    n.cy = (y1 + y2) / 2 / fh;
    n.w = (x2 - x1) / fw;
    n.h = (y2 - y1) / fh;
    out.push_back(n);
  }
  return out;
}

std::vector<NormBox> ToNormalizedAfterFlips(const std::vector<PixelBox>& boxes, int w, int h, bool flip_up_down,
                                            bool flip_left_right) {
  const float fw = static_cast<float>(w), fh = static_cast<float>(h);
  std::vector<NormBox> out;
  out.reserve(boxes.size());
  for (const PixelBox& b : boxes) {
    NormBox n;
    n.cls = b.cls;
    n.cx = (b.x1 + b.x2) / 2;
    n.cy = (b.y1 + b.y2) / 2;
    if (flip_left_right) n.cx = fw - n.cx;
    if (flip_up_down) n.cy = fh - n.cy;
    n.cx /= fw;
    n.cy /= fh;
    n.w = (b.x2 - b.x1) / fw;
    n.h = (b.y2 - b.y1) / fh;
    out.push_back(n);
  }
  return out;
}

void RemoveZeroAreaBoxes(std::vector<PixelBox>* boxes) {
  boxes->erase(std::remove_if(boxes->begin(), boxes->end(),
                              [](const PixelBox& b) { return !((b.x2 - b.x1) * (b.y2 - b.y1) > 0); }),
               boxes->end());
}

void AppendPixelBoxes(const std::vector<Box>& boxes, double w, double h, double padw, double padh,
                      std::vector<PixelBox>* out, Augmentation mode) {
  for (const Box& b : boxes) {
    PixelBox p;
    p.cls = b.class_index;
    if (mode == Augmentation::kUltralytics8) {
      const float fw = static_cast<float>(w), fh = static_cast<float>(h);
      const float pw = static_cast<float>(padw), ph = static_cast<float>(padh);
      p.x1 = (b.cx - b.w / 2) * fw + pw;
      p.y1 = (b.cy - b.h / 2) * fh + ph;
      p.x2 = (b.cx + b.w / 2) * fw + pw;
      p.y2 = (b.cy + b.h / 2) * fh + ph;
      out->push_back(p);
      continue;
    }
    p.x1 = static_cast<float>(w * (b.cx - b.w / 2) + padw);
    p.y1 = static_cast<float>(h * (b.cy - b.h / 2) + padh);
    p.x2 = static_cast<float>(w * (b.cx + b.w / 2) + padw);
    p.y2 = static_cast<float>(h * (b.cy + b.h / 2) + padh);
    out->push_back(p);
  }
}

}  // namespace ffyolo
