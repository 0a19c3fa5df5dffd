// Ultralytics 8's CutMix (data/augment.py, class CutMix, as v8_transforms
// makes it: beta 1, three candidate areas, boxes without segments): a
// rectangle of the sample that covers none of its boxes is replaced by the
// same rectangle of another sample, whose boxes at least a tenth inside it
// join the sample's, clipped to it. The other sample was made by the same
// Mosaic and RandomPerspective (mosaic_buffer.h, MixedImage).
#pragma once

#include <vector>

#include <opencv2/core.hpp>

#include "ffyolo/boxes.h"
#include "ffyolo/random.h"

namespace ffyolo {

// CutMix.get_params, apply_image and apply_instances on `img` (CV_8UC3) and
// its `boxes`, given `other` (of img's size) and its boxes. Draws, in
// Ultralytics' order: per area Beta(1, 1) (BetaSymmetric(1)), then its centre
// x and y (UniformIndex of the width and height); then, when any area covers
// no box, which one (UniformIndex). Nothing changes when no area is free of
// boxes or none of `other_boxes` is a tenth inside the chosen one.
void ApplyCutMix(SampleRandom* rng, const cv::Mat& other, const std::vector<PixelBox>& other_boxes, cv::Mat* img,
                 std::vector<PixelBox>* boxes);

}  // namespace ffyolo
