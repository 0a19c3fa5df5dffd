// --quad: YOLOv5 v7.0's collate_fn4. Each group of 4 images of a training
// batch (0-3, 4-7, ...; a remainder of fewer than 4 is dropped, as v7.0 drops
// it) becomes one image of twice the size: either the group's first image
// upsampled 2x (bilinear, align_corners off, truncated back to whole pixel
// values as its uint8 cast does) with its own targets, or the 4 tiled 2x2
// (first column images 0 and 1, second column 2 and 3) with their targets
// moved into their quarter. train.py then multiplies the loss by 4.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace ffyolo {

// Group g's draw of random() < 0.5 (upsample) for batch `batch` of `epoch`:
// a function of (seed, epoch, rank, batch, g) alone, so resuming redraws it.
std::vector<bool> DrawQuadUpsample(uint64_t seed, int64_t epoch, int rank, int64_t batch, int groups);

// images: float (N, 3, H, W) holding pixel values / 255; targets (n, 6) rows
// [image, class, x, y, w, h] normalized. `upsample` has one entry per group
// (N / 4). Writes (N / 4, 3, 2H, 2W) images and their targets.
void QuadCollate(const at::Tensor& images, const at::Tensor& targets, const std::vector<bool>& upsample,
                 at::Tensor* quad_images, at::Tensor* quad_targets);

}  // namespace ffyolo
