// The YOLOv5 v7.0 training loss (utils/loss.py::ComputeLoss): targets assigned
// to anchors and neighbour cells by build_targets, CIoU box loss, IoU-valued
// objectness targets and BCE class loss, balanced across levels.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "ffyolo/hyp.h"

namespace ffyolo {

// train.py's gain scaling, applied once before building ComputeLoss:
// box *= 3/nl, cls *= nc/80 * 3/nl, obj *= (img_size/640)^2 * 3/nl.
Hyp ScaleLossGains(Hyp hyp, int64_t nc, int64_t nl, int64_t img_size);

// What build_targets assigns on one level: n positives, each one (target,
// anchor, cell) triple. A sync-free loss keeps every candidate row instead (5
// cells x na anchors x nt targets, in build_targets' order) and says which of
// them are positives in `kept`: the count of positives never reaches the host.
struct LevelTargets {
  at::Tensor image, anchor, gj, gi;  // (n,) int64: the prediction cell, pi[image, anchor, gj, gi]
  at::Tensor tbox;                   // (n, 4) [x - gi, y - gj, w, h] in grid units
  at::Tensor anch;                   // (n, 2) the anchor's w, h in grid units
  at::Tensor tcls;                   // (n,) int64 class
  at::Tensor kept;                   // (n,) bool, sync-free only: the positives; undefined: every row is one
};

// `targets` (nt, 6) followed by capacity - nt rows that build_targets never assigns and so that change
// no loss: a captured step's fixed shape. The rows: image 0, class 0, centre (0.5, 0.5), a thousand
// inputs wide and high, so that no anchor is within anchor_t of them (a size of 0 would do too, but
// its masked rows' CIoU has NaN gradients, which masking does not stop). Needs capacity >= nt.
inline constexpr double kPaddingTargetSize = 1000;
at::Tensor PaddedTargets(const at::Tensor& targets, int64_t capacity);

// The loss value to backpropagate and its detached parts for logging.
struct LossOutput {
  at::Tensor total;  // scalar: (lbox + lobj + lcls) * bs
  at::Tensor items;  // (3,) detached [lbox, lobj, lcls], gains applied, not times bs
};

// Computes the loss of Detect's training output. Predictions are raw logits,
// one (bs, na, ny, nx, 5 + nc) tensor per level, P3 first; targets are
// (nt, 6) rows [image index, class, x, y, w, h] normalized to the network
// input. The loss is computed in float whatever the predictions' dtype (under
// AMP they are half; YOLOv5's BCE runs in float there too, though it rounds
// the objectness targets to half first, which this does not).
class ComputeLoss {
 public:
  // `hyp` carries the gains after ScaleLossGains; fl_gamma > 0 wraps both BCEs
  // in a focal loss (gamma = fl_gamma, alpha = 0.25). label_smoothing is
  // train.py's --label-smoothing eps: positive class target 1 - eps/2,
  // negative eps/2. `anchors` is Detect's (nl, na, 2), in grid units.
  // `sync_free` computes the same loss without waiting for the device: no
  // nonzero, no boolean indexing, no host-built tensor per call (the
  // positives are masked rows; the objectness cell several positives share
  // takes the last one's IoU, as YOLOv5's index_put does, through a
  // scatter-max of the rows' order), so a step can run ahead of the GPU
  // or be captured whole.
  ComputeLoss(const Hyp& hyp, double label_smoothing, int64_t nc, const at::Tensor& anchors,
              bool sync_free = false);

  LossOutput operator()(const std::vector<at::Tensor>& predictions,
                        const at::Tensor& targets) const;

  bool sync_free() const { return sync_free_; }

  // build_targets: anchors whose w and h ratios to the target are within
  // anchor_t, each in the target's own cell and in the nearer horizontal and
  // vertical neighbour cells (when the centre is in that half of its cell and
  // more than one cell away from the image edge). Order as YOLOv5's: own cells
  // first, then left, up, right, down neighbours, each anchor-major. Sync-free:
  // every candidate row in that order, the positives marked in `kept`.
  std::vector<LevelTargets> BuildTargets(const std::vector<at::Tensor>& predictions,
                                         const at::Tensor& targets) const;

 private:
  // BCEWithLogitsLoss per element (FocalLoss's when fl_gamma > 0), not reduced.
  at::Tensor BceElements(const at::Tensor& logits, const at::Tensor& target, double pos_weight) const;

  double box_gain_, obj_gain_, cls_gain_;
  double cls_pw_, obj_pw_;
  double anchor_t_;
  double fl_gamma_;
  double cp_, cn_;  // class targets for positives and negatives
  int64_t nc_, nl_, na_;
  std::vector<double> balance_;
  at::Tensor anchors_;  // (nl, na, 2) float, grid units
  at::Tensor offsets_;  // (5, 2): the own cell, then left, up, right, down, subtracted from the centre
  bool sync_free_;
};

}  // namespace ffyolo
