// Boxes as the augmentations move them: pixels, corners, with a class.
#pragma once

#include <vector>

#include "ffyolo/augmentation.h"
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

// Ultralytics 8's last steps, in its float32: RandomFlip's (centre x -> w - x,
// y -> h - y, on pixels) when flipped, then Format's normalization (divided
// by w and h, on its torch tensor); no clip.
std::vector<NormBox> ToNormalizedAfterFlips(const std::vector<PixelBox>& boxes, int w, int h, bool flip_up_down,
                                            bool flip_left_right);

// Ultralytics 8's Mosaic keeps only boxes of positive area once clipped to its canvas
// (Instances.remove_zero_area_boxes).
void RemoveZeroAreaBoxes(std::vector<PixelBox>* boxes);

// xywhn2xyxy: appends `boxes` (normalized to their image) as pixel corners of
// a w x h image shifted by (padw, padh). YOLOv5: w * (cx - bw / 2) + padw
// rounded to float once; Ultralytics 8 (xywh2xyxy, denormalize, add_padding)
// rounds each of the three steps to float32.
void AppendPixelBoxes(const std::vector<Box>& boxes, double w, double h, double padw, double padh,
                      std::vector<PixelBox>* out, Augmentation mode = Augmentation::kYolov5);

}  // namespace ffyolo
