// Boxes as the augmentations move them: pixels, corners, with a class.
#pragma once

#include <vector>

#include "ffyolo/record.h"

namespace ffyolo {

struct PixelBox {
  int cls = 0;
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;
};

// A training target: class and centre/size normalized to the output image.
struct NormBox {
  int cls = 0;
  float cx = 0, cy = 0, w = 0, h = 0;
};

// xyxy2xywhn(clip=True, eps=1e-3): clips x to [0, w - 1e-3] and y to
// [0, h - 1e-3] first, then normalizes by the image size.
std::vector<NormBox> ToNormalized(const std::vector<PixelBox>& boxes, int w, int h);

// xywhn2xyxy: appends `boxes` (normalized to their image) as pixel corners of
// a w x h image shifted by (padw, padh).
void AppendPixelBoxes(const std::vector<Box>& boxes, double w, double h, double padw, double padh,
                      std::vector<PixelBox>* out);

}  // namespace ffyolo
