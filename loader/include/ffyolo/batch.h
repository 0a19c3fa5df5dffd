// Batch: what the loader hands the trainer. Images are uint8 RGB in one
// contiguous [B, 3, H, W] block from the caller's allocator (the trainer
// passes pinned CUDA memory); targets are rows [image index in batch, class,
// cx, cy, w, h], normalized to W and H.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ffyolo {

// Where batch images live. The default allocates 4096-aligned host memory.
class BatchAllocator {
 public:
  virtual ~BatchAllocator() = default;
  virtual void* Allocate(size_t bytes) = 0;
  virtual void Free(void* p, size_t bytes) = 0;
  static BatchAllocator* Default();
};

// Per image: where it came from and how it was fitted into the batch, so that
// predictions can be mapped back (YOLOv5's `shapes`).
struct ImageMeta {
  int64_t dataset_index = -1;
  int64_t image_id = 0;
  int orig_width = 0, orig_height = 0;
  // Letterboxed images: the resize ratio (width, height) and the half padding
  // (Ultralytics 8's augmentation: the left and top padding, its ratio_pad's);
  // mosaic samples have no such mapping (mosaic = true).
  double ratio_w = 1, ratio_h = 1, pad_w = 0, pad_h = 0;
  bool mosaic = false;
};

struct Batch {
  int64_t epoch = 0;
  int64_t index = 0;  // batch number within the epoch
  int size = 0;       // images in this batch (the last one may be short)
  int height = 0, width = 0;
  uint8_t* images = nullptr;  // size * 3 * height * width bytes, RGB planar per image
  std::vector<float> targets;  // 6 floats per target
  std::vector<ImageMeta> meta;
  int64_t replaced_samples = 0;  // corrupt samples replaced by others in this batch

  size_t image_bytes() const { return static_cast<size_t>(size) * 3 * height * width; }
  size_t num_targets() const { return targets.size() / 6; }
};

}  // namespace ffyolo
