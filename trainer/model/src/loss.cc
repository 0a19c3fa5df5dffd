#include "ffyolo/loss.h"

#include <ATen/TensorIndexing.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Reduction.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/binary_cross_entropy_with_logits.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/full.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
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

// The mean of x ((n,) or (n, k)) over the positives' rows: all rows when `kept` is undefined.
at::Tensor PositivesMean(const at::Tensor& x, const at::Tensor& kept) {
  if (!kept.defined()) return x.mean();
  const at::Tensor rows = x.dim() == 1 ? kept : kept.unsqueeze(1);
  const int64_t per_row = x.dim() == 1 ? 1 : x.size(1);
  return x.masked_fill(rows.logical_not(), 0).sum() / (kept.sum().to(x.scalar_type()) * per_row).clamp_min(1);
}

// tobj[image, anchor, gj, gi] = iou for the positives. YOLOv5's index_put lets the last positive of a
// shared cell win; sync-free, the rows are sorted by cell, stably (rows are in build_targets' order),
// the last of each cell found, and it alone adds its IoU to the cell's zero.
void WriteObjectness(const LevelTargets& lt, const at::Tensor& iou, at::Tensor* tobj) {
  if (!lt.kept.defined()) {
    tobj->index_put_({lt.image, lt.anchor, lt.gj, lt.gi}, iou);
    return;
  }
  const int64_t na = tobj->size(1), ny = tobj->size(2), nx = tobj->size(3), n = lt.kept.size(0);
  const at::Tensor cell = ((lt.image * na + lt.anchor) * ny + lt.gj) * nx + lt.gi;
  // A row that is no positive gets a key of its own past every cell, so it ends no cell's run.
  const at::Tensor key = at::where(lt.kept, cell, at::arange(n, cell.options()) + tobj->numel());
  const auto [sorted, order] = key.sort(/*stable=*/true, /*dim=*/0, /*descending=*/false);
  const at::Tensor last_of_cell =
      at::cat({sorted.narrow(0, 0, n - 1) != sorted.narrow(0, 1, n - 1), at::ones({1}, lt.kept.options())});
  const at::Tensor writes = at::empty_like(lt.kept).scatter_(0, order, last_of_cell) & lt.kept;
  tobj->view(-1).scatter_add_(0, cell, iou.masked_fill(writes.logical_not(), 0));
}

}  // namespace

at::Tensor PaddedTargets(const at::Tensor& targets, int64_t capacity) {
  TORCH_CHECK(capacity >= targets.size(0), "PaddedTargets: ", targets.size(0), " targets exceed the capacity ",
              capacity);
  at::Tensor padded = at::zeros({capacity, 6}, targets.options());
  padded.narrow(1, 2, 2).fill_(0.5);
  padded.narrow(1, 4, 2).fill_(kPaddingTargetSize);
  padded.narrow(0, 0, targets.size(0)).copy_(targets);
  return padded;
}

Hyp ScaleLossGains(Hyp hyp, int64_t nc, int64_t nl, int64_t img_size) {
  hyp.box *= 3.0 / nl;
  hyp.cls *= static_cast<double>(nc) / 80 * 3 / nl;
  hyp.obj *= std::pow(static_cast<double>(img_size) / 640, 2) * 3 / nl;
  return hyp;
}

ComputeLoss::ComputeLoss(const Hyp& hyp, double label_smoothing, int64_t nc,
                         const at::Tensor& anchors, bool sync_free)
    : box_gain_(hyp.box),
      obj_gain_(hyp.obj),
      cls_gain_(hyp.cls),
      cls_pw_(hyp.cls_pw),
      obj_pw_(hyp.obj_pw),
      anchor_t_(hyp.anchor_t),
      fl_gamma_(hyp.fl_gamma),
      cp_(1.0 - 0.5 * label_smoothing),
      cn_(0.5 * label_smoothing),
      nc_(nc),
      sync_free_(sync_free) {
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
  const float g = static_cast<float>(kCellHalf);
  offsets_ = at::tensor({0.f, 0.f, g, 0.f, 0.f, g, -g, 0.f, 0.f, -g}).view({5, 2}).to(anchors_.device());
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
  const at::Tensor anchors_all = anchors_.to(fopt);
  const at::Tensor offsets = offsets_.to(fopt);

  std::vector<LevelTargets> out;
  for (int64_t i = 0; i < nl_; ++i) {
    const at::Tensor anchors = anchors_all[i];
    const int64_t ny = predictions[i].size(2), nx = predictions[i].size(3);
    // [1, 1, nx, ny, nx, ny, 1], filled on the device: no host tensor per call.
    at::Tensor gain = at::ones({7}, fopt);
    gain.narrow(0, 2, 4).view({2, 2}).select(1, 0).fill_(static_cast<double>(nx));
    gain.narrow(0, 2, 4).view({2, 2}).select(1, 1).fill_(static_cast<double>(ny));
    const at::Tensor t = per_anchor * gain;  // grid units
    const at::Tensor r = t.narrow(2, 4, 2) / anchors.unsqueeze(1);
    const at::Tensor matched = at::maximum(r, r.reciprocal()).amax(2) < anchor_t_;  // (na, nt)
    const at::Tensor txy = t.narrow(2, 2, 2);
    const at::Tensor txi = gain.narrow(0, 2, 2) - txy;
    const at::Tensor low = (txy.remainder(1) < kCellHalf) & (txy > 1);   // left, up
    const at::Tensor high = (txi.remainder(1) < kCellHalf) & (txi > 1);  // right, down
    // (5, na, nt): the candidates build_targets keeps, in its order.
    const at::Tensor kept = at::stack({matched, low.select(2, 0) & matched, low.select(2, 1) & matched,
                                       high.select(2, 0) & matched, high.select(2, 1) & matched})
                                .reshape(-1);
    at::Tensor rows = t.unsqueeze(0).expand({5, na_, nt, 7}).reshape({-1, 7});
    at::Tensor cell_offsets = offsets.view({5, 1, 1, 2}).expand({5, na_, nt, 2}).reshape({-1, 2});
    LevelTargets lt;
    if (sync_free_) {
      lt.kept = kept;
    } else {
      const at::Tensor positives = kept.nonzero().squeeze(1);  // the one host wait of the selecting loss
      rows = rows.index_select(0, positives);
      cell_offsets = cell_offsets.index_select(0, positives);
    }
    const at::Tensor gxy = rows.narrow(1, 2, 2);
    lt.image = rows.select(1, 0).to(at::kLong);
    lt.tcls = rows.select(1, 1).to(at::kLong);
    lt.anchor = rows.select(1, 6).to(at::kLong);
    const at::Tensor gij = (gxy - cell_offsets).to(at::kLong);
    // Clamped in place: the clamped cell is also what tbox is relative to.
    lt.gj = gij.select(1, 1).clamp_(0, ny - 1);
    lt.gi = gij.select(1, 0).clamp_(0, nx - 1);
    lt.tbox = at::cat({gxy - gij, rows.narrow(1, 4, 2)}, 1);
    lt.anch = anchors.index_select(0, lt.anchor);
    out.push_back(std::move(lt));
  }
  return out;
}

at::Tensor ComputeLoss::BceElements(const at::Tensor& logits, const at::Tensor& target,
                                    double pos_weight) const {
  const at::Tensor pw = at::full({1}, pos_weight, logits.options());
  if (fl_gamma_ <= 0) {
    return at::binary_cross_entropy_with_logits(logits, target, {}, pw, at::Reduction::None);
  }
  // FocalLoss(BCEWithLogitsLoss, gamma=fl_gamma, alpha=0.25).
  const at::Tensor loss =
      at::binary_cross_entropy_with_logits(logits, target, {}, pw, at::Reduction::None);
  const at::Tensor prob = logits.sigmoid();
  const at::Tensor p_t = target * prob + (1 - target) * (1 - prob);
  const at::Tensor alpha_factor = target * kFocalAlpha + (1 - target) * (1 - kFocalAlpha);
  const at::Tensor modulating_factor = (1.0 - p_t).pow(fl_gamma_);
  return loss * (alpha_factor * modulating_factor);
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
    // In float only what the loss reads (the positives' rows and the objectness channel), not all 5 + nc
    // channels of every cell: the same values, a fraction of the traffic under AMP.
    const at::Tensor& pi = predictions[i];
    TORCH_CHECK(pi.dim() == 5 && pi.size(1) == na_ && pi.size(4) == 5 + nc_, "ComputeLoss: level ",
                i, " must be (bs, ", na_, ", ny, nx, ", 5 + nc_, "), got ", pi.sizes());
    const LevelTargets& lt = level_targets[i];
    at::Tensor tobj = at::zeros(pi.sizes().slice(0, 4), fopt);
    const int64_t n = lt.image.size(0);
    if (n) {
      const at::Tensor ps = pi.index({lt.image, lt.anchor, lt.gj, lt.gi}).to(at::kFloat);  // (n, 5 + nc)
      const at::Tensor pxy = ps.narrow(1, 0, 2).sigmoid() * 2 - 0.5;
      const at::Tensor pwh = (ps.narrow(1, 2, 2).sigmoid() * 2).pow(2) * lt.anch;
      const at::Tensor iou = BboxIou(at::cat({pxy, pwh}, 1), lt.tbox, IouKind::kCIoU);
      lbox = lbox + PositivesMean(1.0 - iou, lt.kept);
      // gr = 1: the objectness target is the IoU itself. Duplicate cells: last write wins.
      WriteObjectness(lt, iou.detach().clamp_min(0), &tobj);
      if (nc_ > 1) {
        const at::Tensor pcls = ps.narrow(1, 5, nc_);
        at::Tensor t = at::full_like(pcls, cn_);
        t.scatter_(1, lt.tcls.view({-1, 1}), cp_);  // a scalar: an index_put_ would copy it to the device and wait
        lcls = lcls + PositivesMean(BceElements(pcls, t, cls_pw_), lt.kept);
      }
    }
    lobj = lobj + BceElements(pi.select(4, 4).to(at::kFloat), tobj, obj_pw_).mean() * balance_[i];
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
