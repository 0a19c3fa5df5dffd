#include "ffyolo/loss.h"

#include <ATen/TensorIndexing.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Reduction.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/binary_cross_entropy_with_logits.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/full.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <c10/util/Exception.h>

#include <cmath>

#include "ffyolo/box_ops.h"

namespace ffyolo {

namespace {

// build_targets' neighbour rule: a centre in the lower half of its cell (per
// axis) also goes to the cell before it, one in the upper half to the cell
// after it; kCellHalf is both that half and the offset that moves there.
constexpr double kCellHalf = 0.5;
constexpr double kFocalAlpha = 0.25;

// x[mask] for a boolean mask over x's leading dimensions, in row-major order.
at::Tensor MaskedRows(const at::Tensor& x, const at::Tensor& mask) {
  return x.reshape({-1, x.size(-1)}).index_select(0, mask.reshape(-1).nonzero().squeeze(1));
}

}  // namespace

Hyp ScaleLossGains(Hyp hyp, int64_t nc, int64_t nl, int64_t img_size) {
  hyp.box *= 3.0 / nl;
  hyp.cls *= static_cast<double>(nc) / 80 * 3 / nl;
  hyp.obj *= std::pow(static_cast<double>(img_size) / 640, 2) * 3 / nl;
  return hyp;
}

ComputeLoss::ComputeLoss(const Hyp& hyp, double label_smoothing, int64_t nc,
                         const at::Tensor& anchors)
    : box_gain_(hyp.box),
      obj_gain_(hyp.obj),
      cls_gain_(hyp.cls),
      cls_pw_(hyp.cls_pw),
      obj_pw_(hyp.obj_pw),
      anchor_t_(hyp.anchor_t),
      fl_gamma_(hyp.fl_gamma),
      cp_(1.0 - 0.5 * label_smoothing),
      cn_(0.5 * label_smoothing),
      nc_(nc) {
  TORCH_CHECK(anchors.dim() == 3 && anchors.size(2) == 2,
              "ComputeLoss: anchors must be (nl, na, 2), got ", anchors.sizes());
  nl_ = anchors.size(0);
  na_ = anchors.size(1);
  if (nl_ == 3) {
    balance_ = {4.0, 1.0, 0.4};
  } else {
    balance_ = {4.0, 1.0, 0.25, 0.06, 0.02};
    TORCH_CHECK(nl_ <= static_cast<int64_t>(balance_.size()),
                "ComputeLoss: YOLOv5 balances at most 5 levels, got ", nl_);
  }
  anchors_ = anchors.detach().to(at::kFloat);
}

std::vector<LevelTargets> ComputeLoss::BuildTargets(const std::vector<at::Tensor>& predictions,
                                                    const at::Tensor& targets) const {
  TORCH_CHECK(static_cast<int64_t>(predictions.size()) == nl_, "ComputeLoss: expected ", nl_,
              " prediction levels, got ", predictions.size());
  TORCH_CHECK(targets.dim() == 2 && targets.size(1) == 6,
              "ComputeLoss: targets must be (nt, 6) [image, class, x, y, w, h], got ",
              targets.sizes());
  const at::TensorOptions fopt =
      at::TensorOptions().dtype(at::kFloat).device(predictions[0].device());
  const int64_t nt = targets.size(0);
  // (na, nt, 7): every target once per anchor, the anchor index appended.
  const at::Tensor ai = at::arange(na_, fopt).view({na_, 1}).repeat({1, nt});
  const at::Tensor per_anchor = at::cat({targets.to(fopt).repeat({na_, 1, 1}), ai.unsqueeze(2)}, 2);
  const float g = kCellHalf;
  // Own cell, then left, up, right, down (subtracted from the centre).
  const at::Tensor off =
      at::tensor({0.f, 0.f, g, 0.f, 0.f, g, -g, 0.f, 0.f, -g}, fopt).view({5, 2});
  const at::Tensor anchors_all = anchors_.to(fopt);

  std::vector<LevelTargets> out;
  for (int64_t i = 0; i < nl_; ++i) {
    const at::Tensor anchors = anchors_all[i];
    const int64_t ny = predictions[i].size(2), nx = predictions[i].size(3);
    const at::Tensor gain =
        at::tensor({1.f, 1.f, float(nx), float(ny), float(nx), float(ny), 1.f}, fopt);
    at::Tensor t = per_anchor * gain;  // grid units
    at::Tensor offsets;
    if (nt) {
      const at::Tensor r = t.narrow(2, 4, 2) / anchors.unsqueeze(1);
      t = MaskedRows(t, at::maximum(r, r.reciprocal()).amax(2) < anchor_t_);
      const at::Tensor gxy = t.narrow(1, 2, 2);
      const at::Tensor gxi = gain.narrow(0, 2, 2) - gxy;
      const at::Tensor low = (gxy.remainder(1) < g) & (gxy > 1);   // left, up
      const at::Tensor high = (gxi.remainder(1) < g) & (gxi > 1);  // right, down
      const at::Tensor cells = at::stack({at::ones_like(low.select(1, 0)), low.select(1, 0),
                                          low.select(1, 1), high.select(1, 0), high.select(1, 1)});
      t = MaskedRows(t.repeat({5, 1, 1}), cells);
      offsets = MaskedRows(at::zeros_like(gxy).unsqueeze(0) + off.unsqueeze(1), cells);
    } else {
      t = per_anchor[0];
      offsets = at::zeros({0, 2}, fopt);
    }
    const at::Tensor gxy = t.narrow(1, 2, 2);
    LevelTargets lt;
    lt.image = t.select(1, 0).to(at::kLong);
    lt.tcls = t.select(1, 1).to(at::kLong);
    lt.anchor = t.select(1, 6).to(at::kLong);
    const at::Tensor gij = (gxy - offsets).to(at::kLong);
    // Clamped in place: the clamped cell is also what tbox is relative to.
    lt.gj = gij.select(1, 1).clamp_(0, ny - 1);
    lt.gi = gij.select(1, 0).clamp_(0, nx - 1);
    lt.tbox = at::cat({gxy - gij, t.narrow(1, 4, 2)}, 1);
    lt.anch = anchors.index_select(0, lt.anchor);
    out.push_back(std::move(lt));
  }
  return out;
}

at::Tensor ComputeLoss::Bce(const at::Tensor& logits, const at::Tensor& target,
                            double pos_weight) const {
  const at::Tensor pw = at::full({1}, pos_weight, logits.options());
  if (fl_gamma_ <= 0) {
    return at::binary_cross_entropy_with_logits(logits, target, {}, pw, at::Reduction::Mean);
  }
  // FocalLoss(BCEWithLogitsLoss, gamma=fl_gamma, alpha=0.25).
  const at::Tensor loss =
      at::binary_cross_entropy_with_logits(logits, target, {}, pw, at::Reduction::None);
  const at::Tensor prob = logits.sigmoid();
  const at::Tensor p_t = target * prob + (1 - target) * (1 - prob);
  const at::Tensor alpha_factor = target * kFocalAlpha + (1 - target) * (1 - kFocalAlpha);
  const at::Tensor modulating_factor = (1.0 - p_t).pow(fl_gamma_);
  return (loss * (alpha_factor * modulating_factor)).mean();
}

LossOutput ComputeLoss::operator()(const std::vector<at::Tensor>& predictions,
                                   const at::Tensor& targets) const {
  const std::vector<LevelTargets> level_targets = BuildTargets(predictions, targets);
  const at::TensorOptions fopt =
      at::TensorOptions().dtype(at::kFloat).device(predictions[0].device());
  at::Tensor lbox = at::zeros({1}, fopt);
  at::Tensor lobj = at::zeros({1}, fopt);
  at::Tensor lcls = at::zeros({1}, fopt);
  int64_t bs = 0;
  for (int64_t i = 0; i < nl_; ++i) {
    const at::Tensor pi = predictions[i].to(at::kFloat);
    TORCH_CHECK(pi.dim() == 5 && pi.size(1) == na_ && pi.size(4) == 5 + nc_, "ComputeLoss: level ",
                i, " must be (bs, ", na_, ", ny, nx, ", 5 + nc_, "), got ", pi.sizes());
    const LevelTargets& lt = level_targets[i];
    at::Tensor tobj = at::zeros(pi.sizes().slice(0, 4), pi.options());
    const int64_t n = lt.image.size(0);
    if (n) {
      const at::Tensor ps = pi.index({lt.image, lt.anchor, lt.gj, lt.gi});  // (n, 5 + nc)
      const at::Tensor pxy = ps.narrow(1, 0, 2).sigmoid() * 2 - 0.5;
      const at::Tensor pwh = (ps.narrow(1, 2, 2).sigmoid() * 2).pow(2) * lt.anch;
      const at::Tensor iou = BboxIou(at::cat({pxy, pwh}, 1), lt.tbox, IouKind::kCIoU);
      lbox = lbox + (1.0 - iou).mean();
      // gr = 1: the objectness target is the IoU itself. Duplicate cells: last write wins.
      tobj.index_put_({lt.image, lt.anchor, lt.gj, lt.gi}, iou.detach().clamp_min(0));
      if (nc_ > 1) {
        const at::Tensor pcls = ps.narrow(1, 5, nc_);
        at::Tensor t = at::full_like(pcls, cn_);
        t.index_put_({at::arange(n, fopt.dtype(at::kLong)), lt.tcls}, cp_);
        lcls = lcls + Bce(pcls, t, cls_pw_);
      }
    }
    lobj = lobj + Bce(pi.select(4, 4), tobj, obj_pw_) * balance_[i];
    bs = tobj.size(0);
  }
  lbox = lbox * box_gain_;
  lobj = lobj * obj_gain_;
  lcls = lcls * cls_gain_;
  LossOutput result;
  result.total = ((lbox + lobj + lcls) * bs).squeeze(0);
  result.items = at::cat({lbox, lobj, lcls}).detach();
  return result;
}

}  // namespace ffyolo
