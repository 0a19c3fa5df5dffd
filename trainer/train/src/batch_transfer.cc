#include "ffyolo/batch_transfer.h"

#include <torch/torch.h>

#ifdef FFYOLO_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include "ffyolo/loader.h"

namespace ffyolo {

void* PinnedBatchAllocator::Allocate(size_t bytes) {
  at::Tensor t = torch::empty({static_cast<int64_t>(bytes)}, torch::TensorOptions().dtype(torch::kUInt8).pinned_memory(true));
  void* p = t.data_ptr();
  blocks_.push_back(std::move(t));
  return p;
}

void PinnedBatchAllocator::Free(void* p, size_t) {
  for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
    if (it->data_ptr() == p) {
      blocks_.erase(it);
      return;
    }
}

#ifdef FFYOLO_WITH_CUDA
struct BatchTransfer::Copies {
  explicit Copies(c10::Device device) : side(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())) {}
  c10::cuda::CUDAStream side;
  at::cuda::CUDAEvent current_ready, next_ready;
};
#else
struct BatchTransfer::Copies {};
#endif

BatchTransfer::BatchTransfer(Loader* loader, c10::Device device, c10::MemoryFormat format)
    : loader_(loader), device_(device), format_(format) {
#ifdef FFYOLO_WITH_CUDA
  if (device.is_cuda()) copies_ = std::make_unique<Copies>(device);
#endif
}

BatchTransfer::~BatchTransfer() {
  ReleaseCurrent();
  ReleaseNext();
}

bool BatchTransfer::CudaCompiled() {
#ifdef FFYOLO_WITH_CUDA
  return true;
#else
  return false;
#endif
}

double BatchTransfer::MemoryReservedGb(c10::Device device) {
#ifdef FFYOLO_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    return static_cast<double>(
               stats.reserved_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].current) /
           1e9;
  }
#endif
  return 0;
}

void BatchTransfer::ReleaseCurrent() {
  if (!current_.host) return;
#ifdef FFYOLO_WITH_CUDA
  if (copies_) copies_->current_ready.synchronize();  // long done: the step that used it is queued after it
#endif
  loader_->Release(current_.host);
  current_ = DeviceBatch();
}

void BatchTransfer::ReleaseNext() {
  if (!next_.host) return;
#ifdef FFYOLO_WITH_CUDA
  if (copies_) copies_->next_ready.synchronize();
#endif
  loader_->Release(next_.host);
  next_ = DeviceBatch();
}

// The batch's images as float / 255 and its targets, on `device` (queued on the current stream).
void BatchTransfer::Convert(DeviceBatch* batch) const {
  const Batch* b = batch->host;
  batch->images = torch::from_blob(b->images, {b->size, 3, b->height, b->width}, torch::kUInt8)
                      .to(device_, /*non_blocking=*/true)
                      .to(torch::kFloat, /*non_blocking=*/false, /*copy=*/false, format_)
                      .div_(255);
  batch->targets = torch::from_blob(const_cast<float*>(b->targets.data()),
                                    {static_cast<int64_t>(b->num_targets()), 6}, torch::kFloat)
                       .to(device_, /*non_blocking=*/true);
}

ffr::Status BatchTransfer::Start(int64_t epoch, int64_t first_batch) {
  ReleaseCurrent();
  ReleaseNext();
  FFR_RETURN_IF_ERROR(loader_->Start(epoch, first_batch));
  return copies_ ? Prefetch() : ffr::Status::OK();
}

// CUDA only: the next batch's copy and conversion, queued on the side stream.
ffr::Status BatchTransfer::Prefetch() {
  const Batch* b = nullptr;
  FFR_RETURN_IF_ERROR(loader_->Next(&b));
  next_ = DeviceBatch();
  next_.host = b;
  if (!b) return ffr::Status::OK();
#ifdef FFYOLO_WITH_CUDA
  c10::cuda::CUDAStreamGuard on_side(copies_->side);
  Convert(&next_);
  copies_->next_ready.record(copies_->side);
#endif
  return ffr::Status::OK();
}

ffr::Status BatchTransfer::Next(DeviceBatch* out) {
  ReleaseCurrent();
  if (!copies_) {
    const Batch* b = nullptr;
    FFR_RETURN_IF_ERROR(loader_->Next(&b));
    current_.host = b;
    if (b) Convert(&current_);  // on the CPU a non-blocking copy is a plain one
    *out = current_;
    return ffr::Status::OK();
  }
#ifdef FFYOLO_WITH_CUDA
  current_ = std::move(next_);
  next_ = DeviceBatch();
  std::swap(copies_->current_ready, copies_->next_ready);
  if (current_.host) {
    const c10::cuda::CUDAStream compute = c10::cuda::getCurrentCUDAStream(device_.index());
    copies_->current_ready.block(compute);
    // Made on the side stream, used on the compute stream: the allocator must not reuse them before it is done.
    for (const at::Tensor& t : {current_.images, current_.targets})
      if (t.defined() && t.numel() > 0) c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), compute);
    FFR_RETURN_IF_ERROR(Prefetch());
  }
#endif
  *out = current_;
  return ffr::Status::OK();
}

}  // namespace ffyolo
