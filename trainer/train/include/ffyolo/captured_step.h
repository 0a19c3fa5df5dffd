// CapturedStep: the training step captured once as a CUDA graph and replayed for
// each batch (issue #30, docs/gpu.md), so that the host no longer launches the
// step's ~2,500 kernels one by one: on an H200 the eager step kept the GPU idle
// a third of the time while the host queued them.
//
// The graph holds the forward pass under autocast, the sync-free loss, the
// scaled backward, the unscale (inf/NaN check) and the gradient clipping; the
// optimizer step, the scale update and the EMA run eagerly after each replay,
// since they take the step's lr, momentum and EMA decay, which YOLOv5 changes
// every step. What it computes is TrainStep(parts, images, targets, true).
//
// With several ranks the graph ends at the backward, which does not
// communicate: after the replay the gradients are averaged over the ranks
// (GradientSync::AllReduceGradients, the same buckets as an eager step's), then
// unscaled and clipped, eagerly. A collective inside the graph would tie the
// replay to NCCL (Gloo cannot be captured) and overlap with nothing more than
// the bucketed all-reduce after it does: the backward it would hide behind is
// one replay, whose kernels the host no longer launches anyway.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>

#include "ffr/status.h"
#include "ffyolo/loss.h"
#include "ffyolo/train_step.h"

namespace ffyolo {

class CapturedStep {
 public:
  // Refuses, saying why (InvalidArgument), what a capture cannot hold: a LibTorch
  // or a model without CUDA, a loss that waits for the device (not sync-free),
  // --quad. SyncBN, whose all-reduces run in the forward pass, is the caller's
  // to refuse (the model does not say).
  static ffr::Status Create(const TrainStepParts& parts, std::unique_ptr<CapturedStep>* out);
  ~CapturedStep();

  // Whether Step replays for images of this shape and memory format: the first
  // batch's (a captured graph's shapes are fixed). The caller trains any other
  // batch (--multi-scale, --rect, the last partial batch) with TrainStep.
  bool Fits(const at::Tensor& images) const;

  // One training step with an optimizer update. The first call captures (after
  // two untimed forward and backward passes on the capture's stream that leave
  // the weights, the BatchNorm statistics and the gradients as they were);
  // targets are padded to a capacity (PaddedTargets) that doubles, with a new
  // capture, when a batch has more. The loss returned is the caller's copy.
  LossOutput Step(const at::Tensor& images, const at::Tensor& targets);

  int captures() const;  // graphs captured so far

 private:
  struct Impl;
  explicit CapturedStep(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ffyolo
