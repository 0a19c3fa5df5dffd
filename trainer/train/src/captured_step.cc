#include "ffyolo/captured_step.h"

#include <torch/torch.h>

#include <algorithm>
#include <vector>

#ifdef FFYOLO_WITH_CUDA
#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include "ffyolo/device.h"
#include "ffyolo/ema.h"
#include "ffyolo/grad_scaler.h"
#include "ffyolo/gradient_sync.h"
#include "ffyolo/model.h"

namespace ffyolo {

#ifdef FFYOLO_WITH_CUDA
namespace {
// What `waiter` runs next waits for what `done` has queued so far.
void Wait(const c10::cuda::CUDAStream& waiter, const c10::cuda::CUDAStream& done) {
  at::cuda::CUDAEvent event;
  event.record(done);
  event.block(waiter);
}
}  // namespace
#endif

struct CapturedStep::Impl {
  TrainStepParts parts;
  GradientSync* gradient_sync = nullptr;  // several ranks: parts' own, used after each replay
  std::vector<at::Tensor> params;
  int captures = 0;
#ifdef FFYOLO_WITH_CUDA
  std::unique_ptr<at::cuda::CUDAGraph> graph;
  at::Tensor images, targets, padding;  // the graph's inputs: a batch is copied in
  LossOutput loss;                      // its outputs
  std::vector<at::Tensor> grads;        // the gradients it writes

  // The capture's part of TrainStep, on the current stream: with several ranks, the backward without
  // its all-reduce (parts.gradient_sync is null here), which AllReduceUnscaleClip does after the replay.
  LossOutput ForwardBackwardClip() {
    LossOutput l = ForwardBackward(parts, images, targets, /*update=*/true);
    if (gradient_sync) return l;
    parts.scaler->UnscaleOnDevice(*parts.optimizer);
    ClipGradNorm(params, 10.0);
    return l;
  }

  void AllReduceUnscaleClip() {
    gradient_sync->AllReduceGradients();
    parts.scaler->Unscale(*parts.optimizer);
    ClipGradNorm(params, 10.0);
  }

  void Capture(const at::Tensor& batch_images, int64_t capacity) {
    images = at::empty_like(batch_images);
    padding = PaddedTargets(at::zeros({0, 6}, batch_images.options().dtype(at::kFloat)), capacity);
    targets = padding.clone();
    images.copy_(batch_images);
    // Warm-up on the capture's stream, as PyTorch's graph recipe asks: cuDNN's algorithm search for
    // this stream, cuBLAS's workspace and the autograd engine's device thread start outside the
    // capture. Its BatchNorm statistics and gradients are put back: the run trains as it would have.
    std::vector<at::Tensor> buffers;
    for (const at::Tensor& b : parts.model->buffers()) buffers.push_back(b.clone());
    const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
    const c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream();
    Wait(side, main);  // the batch copied in
    {
      c10::cuda::CUDAStreamGuard on_side(side);
      for (int i = 0; i < 2; ++i) {
        ForwardBackwardClip();
        parts.optimizer->zero_grad();
      }
      at::autocast::set_autocast_cache_enabled(false);  // a cached cast would outlive the capture's memory
      // As torch.cuda.graph does before capturing: the warm-up's freed blocks, cached for the side stream,
      // go back to the device, or the capture's private pool would be reserved beside them (the step's
      // memory doubled on the 2026-11-27 H200: 24.6 GB against the eager step's 12.1).
      ReleaseCachedCudaMemory();
      graph = std::make_unique<at::cuda::CUDAGraph>();
      // Thread-local: the loader's threads go on allocating pinned memory, which a global capture refuses.
      graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
      loss = ForwardBackwardClip();
      graph->capture_end();
      // The outputs alone: their autograd graph would keep the capture's AccumulateGrad nodes, bound to this
      // side stream, alive into the next capture's warm-up on another (PyTorch warned of the mismatch).
      loss.total = loss.total.detach();
      at::autocast::set_autocast_cache_enabled(true);
      std::vector<at::Tensor> now = parts.model->buffers();
      for (size_t i = 0; i < now.size(); ++i) now[i].copy_(buffers[i]);
    }
    Wait(main, side);
    grads.clear();
    for (const at::Tensor& p : params) grads.push_back(p.grad());
    parts.optimizer->zero_grad();
    ++captures;
  }
#endif
};

CapturedStep::CapturedStep(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CapturedStep::~CapturedStep() = default;
int CapturedStep::captures() const { return impl_->captures; }

ffr::Status CapturedStep::Create(const TrainStepParts& parts, std::unique_ptr<CapturedStep>* out) {
#ifdef FFYOLO_WITH_CUDA
  const std::vector<at::Tensor> params = parts.model->parameters();
  if (params.empty() || !params.front().is_cuda())
    return ffr::Status::InvalidArgument("--cuda-graph: the model is not on a CUDA device");
  if (parts.world > 1 && !parts.gradient_sync)
    return ffr::Status::InvalidArgument("CapturedStep: " + std::to_string(parts.world) + " ranks and no GradientSync");
  if (!parts.loss->sync_free())
    return ffr::Status::InvalidArgument("--cuda-graph needs --sync-free-loss: a capture cannot wait for the device");
  if (parts.quad) return ffr::Status::InvalidArgument("--cuda-graph: not with --quad");
  auto impl = std::make_unique<Impl>();
  impl->parts = parts;
  impl->parts.after_part = nullptr;
  impl->gradient_sync = parts.gradient_sync;
  impl->parts.gradient_sync = nullptr;
  impl->params = params;
  out->reset(new CapturedStep(std::move(impl)));
  return ffr::Status::OK();
#else
  (void)parts;
  (void)out;
  return ffr::Status::InvalidArgument("--cuda-graph needs a CUDA build of LibTorch; this one has none");
#endif
}

bool CapturedStep::Fits(const at::Tensor& images) const {
#ifdef FFYOLO_WITH_CUDA
  return !impl_->graph || (images.sizes() == impl_->images.sizes() && images.strides() == impl_->images.strides());
#else
  (void)images;
  return false;
#endif
}

LossOutput CapturedStep::Step(const at::Tensor& images, const at::Tensor& targets) {
#ifdef FFYOLO_WITH_CUDA
  Impl& s = *impl_;
  TORCH_CHECK(Fits(images), "CapturedStep: a batch of ", images.sizes(), " does not fit the capture's ",
              s.images.sizes());
  const int64_t nt = targets.size(0);
  if (!s.graph || nt > s.targets.size(0)) {
    int64_t capacity = s.graph ? s.targets.size(0) : 64;
    while (capacity < nt) capacity *= 2;
    s.Capture(images, capacity);
  }
  s.images.copy_(images);
  s.targets.copy_(s.padding);
  s.targets.narrow(0, 0, nt).copy_(targets);
  s.graph->replay();
  for (size_t i = 0; i < s.params.size(); ++i) s.params[i].mutable_grad() = s.grads[i];
  TrainStepParts& p = s.parts;
  if (s.gradient_sync)
    s.AllReduceUnscaleClip();
  else
    p.scaler->MarkUnscaled();
  p.scaler->Step(*p.optimizer);
  p.scaler->Update();
  p.optimizer->zero_grad();
  p.ema->Update(*p.model);
  return LossOutput{s.loss.total.clone(), s.loss.items.clone()};
#else
  (void)images;
  (void)targets;
  TORCH_CHECK(false, "CapturedStep needs a CUDA build of LibTorch");
#endif
}

}  // namespace ffyolo
