// BatchTransfer: the loader's batches on the training device, one batch ahead.
// On CUDA the next batch is copied from pinned memory on a side stream, and
// turned into float / 255 there, while the current one computes: the compute
// stream waits on an event, never the host. On the CPU a batch is converted
// when it is asked for.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "ffr/status.h"
#include "ffyolo/batch.h"

namespace ffyolo {

class Loader;

// Page-locked host memory for the loader's batches (LoaderOptions::allocator),
// so that their copies to the GPU are asynchronous.
class PinnedBatchAllocator : public BatchAllocator {
 public:
  void* Allocate(size_t bytes) override;
  void Free(void* p, size_t bytes) override;

 private:
  std::vector<at::Tensor> blocks_;
};

struct DeviceBatch {
  const Batch* host = nullptr;  // the loader's batch (sizes, meta); valid until the next Next(); null: epoch done
  at::Tensor images;            // float (N, 3, H, W) in [0, 1] on the device, in the transfer's memory format
  at::Tensor targets;           // (n, 6) [image, class, x, y, w, h] on the device
};

class BatchTransfer {
 public:
  // Images land in `format` (model.h MemoryFormatOf): the layout change rides on the conversion to float.
  BatchTransfer(Loader* loader, c10::Device device, c10::MemoryFormat format = c10::MemoryFormat::Contiguous);
  ~BatchTransfer();

  // Starts the loader's epoch at `first_batch` and begins the first copy.
  ffr::Status Start(int64_t epoch, int64_t first_batch);
  // Hands the previous batch back to the loader (its copy is done) and
  // returns the next one, whose copy the compute stream will wait for.
  ffr::Status Next(DeviceBatch* out);

  // Whether this LibTorch was built with CUDA (FFYOLO_WITH_CUDA).
  static bool CudaCompiled();
  // torch.cuda.memory_reserved(device) / 1E9: the GPU_mem column; 0 on the CPU.
  static double MemoryReservedGb(c10::Device device);

 private:
  struct Copies;
  ffr::Status Prefetch();
  void Convert(DeviceBatch* batch) const;
  void ReleaseCurrent();
  void ReleaseNext();

  Loader* loader_;
  c10::Device device_;
  c10::MemoryFormat format_;
  std::unique_ptr<Copies> copies_;  // CUDA: the side stream and the batches in flight
  DeviceBatch current_, next_;
};

}  // namespace ffyolo
