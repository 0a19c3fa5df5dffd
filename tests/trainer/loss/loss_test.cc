#include "ffyolo/loss.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reference_iou.h"

namespace ffyolo {
namespace {

constexpr int64_t kNx = 8, kNy = 4;  // a non-square grid catches swapped axes

at::Tensor Anchors(const std::vector<std::vector<float>>& per_level) {
  std::vector<float> flat;
  for (const auto& level : per_level) flat.insert(flat.end(), level.begin(), level.end());
  const int64_t nl = per_level.size(), na = per_level[0].size() / 2;
  return at::tensor(flat).view({nl, na, 2});
}

// One target row, position and size given in grid units of a kNx x kNy grid.
std::vector<float> GridTarget(float image, float cls, float gx, float gy, float gw, float gh) {
  return {image, cls, gx / kNx, gy / kNy, gw / kNx, gh / kNy};
}

at::Tensor Targets(const std::vector<std::vector<float>>& rows) {
  std::vector<float> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return at::tensor(flat).view({static_cast<int64_t>(rows.size()), 6});
}

struct Assignment {
  int64_t image, anchor, gj, gi, cls;
  double tx, ty, tw, th, aw, ah;
};

std::vector<Assignment> Assigned(const LevelTargets& lt) {
  std::vector<Assignment> out;
  for (int64_t k = 0; k < lt.image.size(0); ++k) {
    out.push_back({lt.image[k].item<int64_t>(), lt.anchor[k].item<int64_t>(),
                   lt.gj[k].item<int64_t>(), lt.gi[k].item<int64_t>(), lt.tcls[k].item<int64_t>(),
                   lt.tbox[k][0].item<double>(), lt.tbox[k][1].item<double>(),
                   lt.tbox[k][2].item<double>(), lt.tbox[k][3].item<double>(),
                   lt.anch[k][0].item<double>(), lt.anch[k][1].item<double>()});
  }
  return out;
}

// Cells (gi, gj) and tbox xy of the assignments, for the neighbour tests.
struct Cell {
  int64_t gi, gj;
  double tx, ty;
};

void ExpectCells(const std::vector<Assignment>& got, const std::vector<Cell>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].gi, want[k].gi) << "assignment " << k;
    EXPECT_EQ(got[k].gj, want[k].gj) << "assignment " << k;
    EXPECT_NEAR(got[k].tx, want[k].tx, 1e-6) << "assignment " << k;
    EXPECT_NEAR(got[k].ty, want[k].ty, 1e-6) << "assignment " << k;
  }
}

// Level 0 of build_targets on one kNy x kNx level with a single (1, 1) anchor.
std::vector<Assignment> AssignOneAnchor(const std::vector<std::vector<float>>& rows) {
  ComputeLoss loss(Hyp{}, 0.0, 2, Anchors({{1, 1}}));
  return Assigned(loss.BuildTargets({at::zeros({2, 1, kNy, kNx, 7})}, Targets(rows))[0]);
}

TEST(BuildTargetsTest, LowerHalvesAddLeftAndUpperHalvesAddBelow) {
  // x 2.25: left half of its column (not the first) -> left neighbour.
  // y 2.75: 4 - 2.75 = 1.25 -> lower neighbour. Order: own, left, up, right, down.
  ExpectCells(AssignOneAnchor({GridTarget(0, 1, 2.25, 2.75, 1, 1)}),
              {{2, 2, 0.25, 0.75}, {1, 2, 1.25, 0.75}, {2, 3, 0.25, -0.25}});
  // The mirror image: right and up.
  ExpectCells(AssignOneAnchor({GridTarget(0, 1, 5.75, 1.25, 1, 1)}),
              {{5, 1, 0.75, 0.25}, {5, 0, 0.75, 1.25}, {6, 1, -0.25, 0.25}});
}

TEST(BuildTargetsTest, ExactlyHalfAddsNoNeighbour) {
  ExpectCells(AssignOneAnchor({GridTarget(0, 1, 2.5, 1.5, 1, 1)}), {{2, 1, 0.5, 0.5}});
}

TEST(BuildTargetsTest, FirstAndLastColumnsGetNoOutwardNeighbour) {
  ExpectCells(AssignOneAnchor({GridTarget(0, 1, 0.25, 1.5, 1, 1)}), {{0, 1, 0.25, 0.5}});
  ExpectCells(AssignOneAnchor({GridTarget(0, 1, 7.75, 1.5, 1, 1)}), {{7, 1, 0.75, 0.5}});
  // Exactly one cell from the edge is not "more than one". An integer centre
  // is in the lower half from both sides (x % 1 == 0), so the inward
  // neighbour is added too; to the right that is x + 0.5 -> its own cell again.
  ExpectCells(AssignOneAnchor({GridTarget(0, 1, 1, 1.5, 1, 1)}),
              {{1, 1, 0.0, 0.5}, {1, 1, 0.0, 0.5}});
  ExpectCells(AssignOneAnchor({GridTarget(0, 1, 7, 1.5, 1, 1)}),
              {{7, 1, 0.0, 0.5}, {6, 1, 1.0, 0.5}});
  // One cell further in, the neighbour is column 0 / column 7.
  ExpectCells(AssignOneAnchor({GridTarget(0, 1, 1.25, 1.5, 1, 1)}),
              {{1, 1, 0.25, 0.5}, {0, 1, 1.25, 0.5}});
  ExpectCells(AssignOneAnchor({GridTarget(0, 1, 6.75, 1.5, 1, 1)}),
              {{6, 1, 0.75, 0.5}, {7, 1, -0.25, 0.5}});
}

TEST(BuildTargetsTest, BorderCellIsClampedAndTboxUsesTheClampedCell) {
  // x = 1.0 (gx 8): own cell 8 -> 7, and the left neighbour is 7 as well;
  // both measure x from column 7.
  ExpectCells(AssignOneAnchor({GridTarget(0, 1, 8, 2.5, 1, 1)}),
              {{7, 2, 1.0, 0.5}, {7, 2, 1.0, 0.5}});
  // y = 1.0 (gy 4) likewise.
  ExpectCells(AssignOneAnchor({GridTarget(0, 1, 2.5, 4, 1, 1)}),
              {{2, 3, 0.5, 1.0}, {2, 3, 0.5, 1.0}});
}

TEST(BuildTargetsTest, AnchorRatioOfFourIsRejected) {
  EXPECT_TRUE(AssignOneAnchor({GridTarget(0, 1, 2.5, 1.5, 4, 1)}).empty());
  EXPECT_TRUE(AssignOneAnchor({GridTarget(0, 1, 2.5, 1.5, 1, 0.25)}).empty());
  EXPECT_EQ(AssignOneAnchor({GridTarget(0, 1, 2.5, 1.5, 3.875, 1)}).size(), 1u);
  EXPECT_EQ(AssignOneAnchor({GridTarget(0, 1, 2.5, 1.5, 1, 0.265625)}).size(), 1u);
}

TEST(BuildTargetsTest, TargetsMatchSeveralAnchorsAnchorMajor) {
  ComputeLoss loss(Hyp{}, 0.0, 3, Anchors({{1, 1, 2, 2, 8, 8}}));
  // Target 0 (2 x 2) fits anchors 0 and 1 (8 / 2 = 4 is out); target 1 (6 x 6)
  // fits anchors 1 and 2.
  const std::vector<Assignment> got = Assigned(loss.BuildTargets(
      {at::zeros({2, 3, kNy, kNx, 8})},
      Targets({GridTarget(0, 2, 2.5, 1.5, 2, 2), GridTarget(1, 0, 4.5, 2.5, 6, 6)}))[0]);
  struct Want {
    int64_t image, anchor, gi, gj, cls;
    double gwh, anchor_wh;
  };
  const std::vector<Want> want = {
      {0, 0, 2, 1, 2, 2, 1}, {0, 1, 2, 1, 2, 2, 2}, {1, 1, 4, 2, 0, 6, 2}, {1, 2, 4, 2, 0, 6, 8}};
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].image, want[k].image) << k;
    EXPECT_EQ(got[k].anchor, want[k].anchor) << k;
    EXPECT_EQ(got[k].gi, want[k].gi) << k;
    EXPECT_EQ(got[k].gj, want[k].gj) << k;
    EXPECT_EQ(got[k].cls, want[k].cls) << k;
    EXPECT_NEAR(got[k].tw, want[k].gwh, 1e-6) << k;
    EXPECT_NEAR(got[k].th, want[k].gwh, 1e-6) << k;
    EXPECT_NEAR(got[k].aw, want[k].anchor_wh, 1e-6) << k;
    EXPECT_NEAR(got[k].ah, want[k].anchor_wh, 1e-6) << k;
  }
}

TEST(BuildTargetsTest, EachLevelUsesItsOwnGrid) {
  ComputeLoss loss(Hyp{}, 0.0, 2, Anchors({{1, 1}, {1, 1}}));
  // x = 0.28125, y = 0.375: gx 2.25, gy 1.5 on 8 x 4; gx 1.125, gy 0.75 on 4 x 2.
  const auto levels = loss.BuildTargets({at::zeros({1, 1, 4, 8, 7}), at::zeros({1, 1, 2, 4, 7})},
                                        Targets({{0, 1, 0.28125f, 0.375f, 0.125f, 0.25f}}));
  ExpectCells(Assigned(levels[0]), {{2, 1, 0.25, 0.5}, {1, 1, 1.25, 0.5}});
  // Second level: left (1.125 > 1) and down (2 - 0.75 = 1.25 > 1) neighbours.
  ExpectCells(Assigned(levels[1]),
              {{1, 0, 0.125, 0.75}, {0, 0, 1.125, 0.75}, {1, 1, 0.125, -0.25}});
  EXPECT_NEAR(Assigned(levels[1])[0].tw, 0.5, 1e-6);
  EXPECT_NEAR(Assigned(levels[1])[0].th, 0.5, 1e-6);
}

TEST(BuildTargetsTest, NoTargetsGiveEmptyLevels) {
  ComputeLoss loss(Hyp{}, 0.0, 2, Anchors({{1, 1}, {2, 2}}));
  const auto levels = loss.BuildTargets({at::zeros({1, 1, 4, 8, 7}), at::zeros({1, 1, 2, 4, 7})},
                                        at::zeros({0, 6}));
  for (const LevelTargets& lt : levels) {
    EXPECT_EQ(lt.image.numel(), 0);
    EXPECT_EQ(lt.tbox.size(0), 0);
    EXPECT_EQ(lt.tbox.size(1), 4);
  }
}

// Reference pieces of the loss, in double.
double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double Bce(double logit, double target) {
  return -(target * std::log(Sigmoid(logit)) + (1 - target) * std::log(1 - Sigmoid(logit)));
}
double FocalBce(double logit, double target, double gamma) {
  const double p = Sigmoid(logit);
  const double p_t = target * p + (1 - target) * (1 - p);
  const double alpha_factor = target * 0.25 + (1 - target) * 0.75;
  return Bce(logit, target) * alpha_factor * std::pow(1 - p_t, gamma);
}

TEST(ComputeLossTest, ZeroPredictionsWithoutTargets) {
  Hyp hyp;
  hyp.obj = 0.7;
  ComputeLoss loss(hyp, 0.0, 3, Anchors({{1, 1}, {2, 2}, {4, 4}}));
  const int64_t bs = 2;
  const LossOutput out =
      loss({at::zeros({bs, 1, 8, 8, 8}), at::zeros({bs, 1, 4, 4, 8}), at::zeros({bs, 1, 2, 2, 8})},
           at::zeros({0, 6}));
  // BCE of a 0 logit is log 2 whatever the target; balance 4 + 1 + 0.4.
  const double lobj = 0.7 * 5.4 * std::log(2.0);
  EXPECT_NEAR(out.items[0].item<double>(), 0.0, 1e-12);
  EXPECT_NEAR(out.items[1].item<double>(), lobj, 1e-5);
  EXPECT_NEAR(out.items[2].item<double>(), 0.0, 1e-12);
  EXPECT_EQ(out.total.dim(), 0);
  EXPECT_NEAR(out.total.item<double>(), lobj * bs, 1e-5);
}

// One level (balance 4.0), 4 x 4 grid, bs 2, anchors (1, 1) and (5, 5); one
// target in image 1 centred on cell (gi 1, gj 2) with no neighbours, fitting
// both anchors. Objectness logits are -2, class logits (-1, 0.5, 2) (when
// nc = 3); the anchor-1 prediction is pushed off its target (xy logits 3, wh -3)
// so that its CIoU is negative and its objectness target clamps to 0.
struct OneTargetCase {
  static constexpr int64_t kBs = 2, kNa = 2, kGrid = 4;
  static constexpr double kObjLogit = -2;
  const double class_logits[3] = {-1, 0.5, 2};
  const double tbox[4] = {0.5, 0.5, 1.5, 2};

  at::Tensor Prediction(int64_t nc) const {
    at::Tensor p = at::zeros({kBs, kNa, kGrid, kGrid, 5 + nc});
    p.select(4, 4).fill_(kObjLogit);
    if (nc > 1) {
      for (int c = 0; c < nc; ++c) p.select(4, 5 + c).fill_(class_logits[c]);
    }
    at::Tensor cell = p[1][1][2][1];
    cell.narrow(0, 0, 2).fill_(3);
    cell.narrow(0, 2, 2).fill_(-3);
    return p;
  }
  at::Tensor Target() const {
    return Targets({{1, 2, 1.5f / kGrid, 2.5f / kGrid, 1.5f / kGrid, 2.f / kGrid}});
  }

  // CIoU of the two positives, from the logits by hand.
  std::vector<double> Ciou() const {
    const double p0[4] = {2 * 0.5 - 0.5, 2 * 0.5 - 0.5, 1,
                          1};  // zero logits: centre 0.5, wh = anchor
    const double xy = 2 * Sigmoid(3) - 0.5, wh = std::pow(2 * Sigmoid(-3), 2) * 5;
    const double p1[4] = {xy, xy, wh, wh};
    return {testing::ComputeReferenceIou(p0, tbox).ciou,
            testing::ComputeReferenceIou(p1, tbox).ciou};
  }
};

TEST(ComputeLossTest, OneTargetByHand) {
  const OneTargetCase c;
  Hyp hyp;
  hyp.box = 0.3, hyp.obj = 0.9, hyp.cls = 0.6;
  ComputeLoss loss(hyp, 0.0, 3, Anchors({{1, 1, 5, 5}}));
  const LossOutput out = loss({c.Prediction(3)}, c.Target());

  const std::vector<double> ciou = c.Ciou();
  ASSERT_GT(ciou[0], 0);
  ASSERT_LT(ciou[1], 0);
  const double lbox = 0.3 * ((1 - ciou[0]) + (1 - ciou[1])) / 2;
  const double cells = 2 * 2 * 4 * 4;
  const double lobj =
      0.9 * 4.0 * ((cells - 2) * Bce(-2, 0) + Bce(-2, ciou[0]) + Bce(-2, 0)) / cells;
  const double lcls =
      0.6 * 2 * (Bce(-1, 0) + Bce(0.5, 0) + Bce(2, 1)) / 6;  // two positives x three classes
  EXPECT_NEAR(out.items[0].item<double>(), lbox, 1e-6);
  EXPECT_NEAR(out.items[1].item<double>(), lobj, 1e-6);
  EXPECT_NEAR(out.items[2].item<double>(), lcls, 1e-6);
  EXPECT_NEAR(out.total.item<double>(), (lbox + lobj + lcls) * 2, 1e-5);  // x bs
}

TEST(ComputeLossTest, SingleClassHasNoClassLoss) {
  const OneTargetCase c;
  ComputeLoss loss(Hyp{}, 0.0, 1, Anchors({{1, 1, 5, 5}}));
  at::Tensor p = c.Prediction(1);
  p.select(4, 5).fill_(-4);  // the one class logit: ignored
  const LossOutput out = loss({p}, c.Target());
  const std::vector<double> ciou = c.Ciou();
  const double lbox = 0.05 * ((1 - ciou[0]) + (1 - ciou[1])) / 2;
  const double cells = 2 * 2 * 4 * 4;
  const double lobj = 4.0 * ((cells - 2) * Bce(-2, 0) + Bce(-2, ciou[0]) + Bce(-2, 0)) / cells;
  EXPECT_EQ(out.items[2].item<double>(), 0.0);
  EXPECT_NEAR(out.items[0].item<double>(), lbox, 1e-6);
  EXPECT_NEAR(out.items[1].item<double>(), lobj, 1e-6);
  EXPECT_NEAR(out.total.item<double>(), (lbox + lobj) * 2, 1e-5);
}

TEST(ComputeLossTest, LabelSmoothingAndFocalLoss) {
  const OneTargetCase c;
  Hyp hyp;
  hyp.fl_gamma = 1.5;
  ComputeLoss loss(hyp, /*label_smoothing=*/0.2, 3, Anchors({{1, 1, 5, 5}}));
  const LossOutput out = loss({c.Prediction(3)}, c.Target());
  const std::vector<double> ciou = c.Ciou();
  const double cells = 2 * 2 * 4 * 4;
  const double lobj =
      1.0 * 4.0 *
      ((cells - 2) * FocalBce(-2, 0, 1.5) + FocalBce(-2, ciou[0], 1.5) + FocalBce(-2, 0, 1.5)) /
      cells;
  // Class targets 0.9 for the positive class, 0.1 for the others.
  const double lcls =
      0.5 * 2 * (FocalBce(-1, 0.1, 1.5) + FocalBce(0.5, 0.1, 1.5) + FocalBce(2, 0.9, 1.5)) / 6;
  EXPECT_NEAR(out.items[1].item<double>(), lobj, 1e-6);
  EXPECT_NEAR(out.items[2].item<double>(), lcls, 1e-6);
}

TEST(ComputeLossTest, SharedCellTakesTheLastPositivesIou) {
  // Two targets in the same cell and anchor; zero predictions give the box
  // (0.5, 0.5, 1, 1), which the first target matches exactly.
  ComputeLoss loss(Hyp{}, 0.0, 1, Anchors({{1, 1}}));
  const double t0[4] = {0.5, 0.5, 1, 1}, t1[4] = {0.5, 0.5, 2, 1.5}, pbox[4] = {0.5, 0.5, 1, 1};
  const LossOutput out =
      loss({at::zeros({1, 1, kNy, kNx, 6})},
           Targets({GridTarget(0, 0, 1.5, 2.5, 1, 1), GridTarget(0, 0, 1.5, 2.5, 2, 1.5)}));
  const double c0 = testing::ComputeReferenceIou(pbox, t0).ciou;
  const double c1 = testing::ComputeReferenceIou(pbox, t1).ciou;
  ASSERT_GT(std::abs(c0 - c1), 0.1);
  // With a 0 logit every BCE term is log 2, so objectness cannot tell; use
  // the box loss for the pair and the objectness gradient for the winner:
  // d BCE / d logit = sigmoid(0) - target at the shared cell.
  EXPECT_NEAR(out.items[0].item<double>(), 0.05 * ((1 - c0) + (1 - c1)) / 2, 1e-6);
  at::Tensor p = at::zeros({1, 1, kNy, kNx, 6}).requires_grad_();
  loss({p}, Targets({GridTarget(0, 0, 1.5, 2.5, 1, 1), GridTarget(0, 0, 1.5, 2.5, 2, 1.5)}))
      .total.backward();
  const double cells = kNy * kNx;
  const double grad = p.grad()[0][0][2][1][4].item<double>();
  EXPECT_NEAR(grad, 1.0 * 4.0 * (0.5 - c1) / cells, 1e-6);
}

TEST(ComputeLossTest, GradientsFlowOnlyWhereTheyShould) {
  at::manual_seed(7);
  ComputeLoss loss(ScaleLossGains(Hyp{}, 5, 3, 64), 0.0, 5,
                   Anchors({{1.25, 1.625, 2, 3.75, 4.125, 2.875},
                            {1.875, 3.8125, 3.875, 2.8125, 3.6875, 7.4375},
                            {3.625, 2.8125, 4.875, 6.1875, 11.65625, 10.1875}}));
  std::vector<at::Tensor> p = {at::randn({2, 3, 8, 8, 10}).requires_grad_(),
                               at::randn({2, 3, 4, 4, 10}).requires_grad_(),
                               at::randn({2, 3, 2, 2, 10}).requires_grad_()};
  const at::Tensor targets = Targets({{0, 1, 0.3f, 0.4f, 0.2f, 0.3f},
                                      {0, 4, 0.7f, 0.2f, 0.5f, 0.4f},
                                      {1, 2, 0.5f, 0.5f, 0.9f, 0.8f}});
  const LossOutput out = loss(p, targets);
  ASSERT_TRUE(std::isfinite(out.total.item<double>()));
  EXPECT_FALSE(out.items.requires_grad());
  out.total.backward();
  const auto positives = loss.BuildTargets(p, targets);
  for (size_t i = 0; i < p.size(); ++i) {
    const at::Tensor g = p[i].grad();
    ASSERT_TRUE(g.defined());
    EXPECT_TRUE(g.isfinite().all().item<bool>()) << "level " << i;
    EXPECT_GT(g.select(4, 4).abs().min().item<double>(), 0) << "objectness everywhere, level " << i;
    // Box and class channels get gradient exactly at the positives' cells.
    at::Tensor positive = at::zeros(p[i].sizes().slice(0, 4), at::kBool);
    const LevelTargets& lt = positives[i];
    for (int64_t k = 0; k < lt.image.size(0); ++k) {
      positive[lt.image[k].item<int64_t>()][lt.anchor[k].item<int64_t>()][lt.gj[k].item<int64_t>()]
              [lt.gi[k].item<int64_t>()] = true;
    }
    const at::Tensor other = g.narrow(4, 0, 4).abs().sum(4) + g.narrow(4, 5, 5).abs().sum(4);
    EXPECT_TRUE((other > 0).equal(positive)) << "level " << i;
  }
}

TEST(ComputeLossTest, HalfPredictionsGiveTheFloatLoss) {
  at::manual_seed(3);
  ComputeLoss loss(Hyp{}, 0.0, 3, Anchors({{1, 1, 3, 2}}));
  const at::Tensor half = at::randn({2, 2, 4, 8, 8}).to(at::kHalf);
  const at::Tensor targets =
      Targets({GridTarget(0, 1, 2.25, 2.75, 1.5, 2), GridTarget(1, 2, 6.5, 0.75, 3, 1)});
  const LossOutput from_half = loss({half}, targets);
  const LossOutput from_float = loss({half.to(at::kFloat)}, targets);
  EXPECT_EQ(from_half.total.scalar_type(), at::kFloat);
  EXPECT_TRUE(from_half.items.equal(from_float.items));
}

// The sync-free loss against the selecting one: the same loss items and the same gradients of the
// predictions (1e-6 relative), and the same positives in the same order.
void ExpectSyncFreeEqualsSelecting(const Hyp& hyp, double label_smoothing, int64_t nc, const at::Tensor& anchors,
                                   const std::vector<at::Tensor>& predictions, const at::Tensor& targets) {
  const ComputeLoss selecting(hyp, label_smoothing, nc, anchors);
  const ComputeLoss sync_free(hyp, label_smoothing, nc, anchors, /*sync_free=*/true);
  const auto kept = selecting.BuildTargets(predictions, targets);
  const auto masked = sync_free.BuildTargets(predictions, targets);
  for (size_t i = 0; i < kept.size(); ++i) {
    ASSERT_TRUE(masked[i].kept.defined());
    EXPECT_FALSE(kept[i].kept.defined());
    const at::Tensor rows = masked[i].kept.nonzero().squeeze(1);
    for (const auto& [a, b] : {std::pair{kept[i].image, masked[i].image}, {kept[i].anchor, masked[i].anchor},
                               {kept[i].gj, masked[i].gj}, {kept[i].gi, masked[i].gi}, {kept[i].tcls, masked[i].tcls},
                               {kept[i].tbox, masked[i].tbox}, {kept[i].anch, masked[i].anch}})
      EXPECT_TRUE(a.equal(b.index_select(0, rows))) << "level " << i;
  }
  std::vector<at::Tensor> grads[2];
  at::Tensor items[2];
  for (int way = 0; way < 2; ++way) {
    std::vector<at::Tensor> p;
    for (const at::Tensor& x : predictions) p.push_back(x.detach().clone().requires_grad_());
    const LossOutput out = (way == 0 ? selecting : sync_free)(p, targets);
    out.total.backward();
    items[way] = out.items;
    for (const at::Tensor& x : p) grads[way].push_back(x.grad());
  }
  EXPECT_TRUE(at::allclose(items[1], items[0], 1e-6, 1e-12)) << items[0] << items[1];
  for (size_t i = 0; i < predictions.size(); ++i)
    EXPECT_TRUE(at::allclose(grads[1][i], grads[0][i], 1e-6, 1e-12)) << "level " << i;
}

const at::Tensor& ThreeLevelAnchors() {
  static const at::Tensor anchors = Anchors({{1.25, 1.625, 2, 3.75, 4.125, 2.875},
                                             {1.875, 3.8125, 3.875, 2.8125, 3.6875, 7.4375},
                                             {3.625, 2.8125, 4.875, 6.1875, 11.65625, 10.1875}});
  return anchors;
}

std::vector<at::Tensor> ThreeLevelPredictions(int64_t bs, int64_t nc) {
  return {at::randn({bs, 3, 16, 16, 5 + nc}), at::randn({bs, 3, 8, 8, 5 + nc}), at::randn({bs, 3, 4, 4, 5 + nc})};
}

TEST(SyncFreeLossTest, NoTargets) {
  at::manual_seed(11);
  ExpectSyncFreeEqualsSelecting(Hyp{}, 0.0, 3, ThreeLevelAnchors(), ThreeLevelPredictions(2, 3), at::zeros({0, 6}));
}

// Centres exactly on half and whole cells, on the first and last cells, and past the edge: the
// neighbour rule's borders, where a strict or loose comparison would keep other rows.
TEST(SyncFreeLossTest, TargetsOnCellBorders) {
  at::manual_seed(12);
  ExpectSyncFreeEqualsSelecting(
      Hyp{}, 0.0, 2, Anchors({{1, 1, 2, 2}}), {at::randn({2, 2, kNy, kNx, 7})},
      Targets({GridTarget(0, 1, 1.5, 2.5, 1, 1), GridTarget(0, 0, 1.0, 1.0, 1, 1), GridTarget(1, 1, 0.25, 0.25, 2, 2),
               GridTarget(1, 0, 7.75, 3.75, 1, 2), GridTarget(0, 1, 8.0, 4.0, 1, 1), GridTarget(1, 1, 2.0, 3.0, 4, 4),
               GridTarget(0, 0, 6.5, 2.0, 0.25, 0.25)}));
}

// Positives sharing an objectness cell (the same target twice, and targets of other sizes in one
// cell): the last one's IoU must win, as index_put's last write does.
TEST(SyncFreeLossTest, DuplicatesAndSharedCells) {
  at::manual_seed(13);
  ExpectSyncFreeEqualsSelecting(
      Hyp{}, 0.0, 3, Anchors({{1, 1, 3, 2}}), {at::randn({1, 2, kNy, kNx, 8})},
      Targets({GridTarget(0, 0, 2.25, 1.75, 1, 1), GridTarget(0, 0, 2.25, 1.75, 1, 1),
               GridTarget(0, 1, 2.4, 1.6, 2, 1.5), GridTarget(0, 2, 2.3, 1.9, 0.8, 1.2),
               GridTarget(0, 1, 3.25, 1.75, 1.5, 1)}));
}

// A full batch: hundreds of targets on every level, label smoothing, focal loss and pos weights on.
TEST(SyncFreeLossTest, AFullBatchWithEveryLossOption) {
  at::manual_seed(14);
  Hyp hyp = ScaleLossGains(Hyp{}, 7, 3, 128);
  hyp.fl_gamma = 1.5;
  hyp.cls_pw = 1.3;
  hyp.obj_pw = 0.8;
  const int64_t bs = 8, nt = 400;
  const at::Tensor xywh = at::rand({nt, 4}) * at::tensor({1.f, 1.f, 0.5f, 0.5f}) + at::tensor({0.f, 0.f, 0.01f, 0.01f});
  const at::Tensor targets = at::cat({at::randint(bs, {nt, 1}).to(at::kFloat), at::randint(7, {nt, 1}).to(at::kFloat),
                                      xywh.clamp_max(1)},
                                     1);
  ExpectSyncFreeEqualsSelecting(hyp, 0.1, 7, ThreeLevelAnchors(), ThreeLevelPredictions(bs, 7), targets);
}

TEST(SyncFreeLossTest, RandomBatchesAndOneClass) {
  for (int seed = 0; seed < 5; ++seed) {
    at::manual_seed(100 + seed);
    const int64_t nc = seed == 0 ? 1 : 4, bs = 1 + seed, nt = 3 + 7 * seed;
    const at::Tensor targets = at::cat({at::randint(bs, {nt, 1}).to(at::kFloat),
                                        at::randint(nc, {nt, 1}).to(at::kFloat), at::rand({nt, 2}),
                                        at::rand({nt, 2}) * 0.6 + 0.02},
                                       1);
    SCOPED_TRACE("seed " + std::to_string(seed));
    ExpectSyncFreeEqualsSelecting(ScaleLossGains(Hyp{}, nc, 3, 128), 0.0, nc, ThreeLevelAnchors(),
                                  ThreeLevelPredictions(bs, nc), targets);
  }
}

// Detect hands the loss a view over the convolution's memory, not a contiguous copy: the loss and its
// gradients are those of the copy, in half (AMP) as in float, for both ways of building targets.
TEST(ComputeLossTest, AStridedViewGivesTheLossOfItsContiguousCopy) {
  at::manual_seed(22);
  const int64_t bs = 2, nc = 4;
  const at::Tensor targets = at::cat({at::randint(bs, {12, 1}).to(at::kFloat), at::randint(nc, {12, 1}).to(at::kFloat),
                                      at::rand({12, 2}), at::rand({12, 2}) * 0.5 + 0.02},
                                     1);
  for (at::ScalarType type : {at::kFloat, at::kHalf}) {
    for (bool sync_free : {false, true}) {
      SCOPED_TRACE(std::string(type == at::kHalf ? "half" : "float") + (sync_free ? ", sync-free" : ""));
      const ComputeLoss loss(ScaleLossGains(Hyp{}, nc, 3, 128), 0.0, nc, ThreeLevelAnchors(), sync_free);
      std::vector<at::Tensor> views, copies;
      for (int64_t s : {16, 8, 4}) {
        // As Detect makes it from a channels-last convolution: memory (bs, ny, nx, na, no).
        const at::Tensor memory = at::randn({bs, s, s, 3, 5 + nc}).to(type);
        views.push_back(memory.permute({0, 3, 1, 2, 4}).detach().requires_grad_());
        copies.push_back(views.back().detach().contiguous().requires_grad_());
      }
      ASSERT_FALSE(views[0].is_contiguous());
      const LossOutput a = loss(views, targets), b = loss(copies, targets);
      EXPECT_TRUE(a.items.equal(b.items)) << a.items << b.items;
      a.total.backward();
      b.total.backward();
      for (size_t i = 0; i < views.size(); ++i)
        EXPECT_TRUE(at::allclose(views[i].grad().to(at::kFloat), copies[i].grad().to(at::kFloat), 1e-6, 1e-9))
            << "level " << i;
    }
  }
}

// A captured step pads its targets to a fixed count: the padding changes neither the loss nor the
// gradients, with the selecting loss and the sync-free one, on a batch with focal loss and smoothing.
TEST(PaddedTargetsTest, PaddingRowsChangeNoLossAndNoGradient) {
  at::manual_seed(21);
  Hyp hyp = ScaleLossGains(Hyp{}, 5, 3, 128);
  hyp.fl_gamma = 1.5;
  const int64_t bs = 4, nt = 60;
  const at::Tensor targets = at::cat({at::randint(bs, {nt, 1}).to(at::kFloat), at::randint(5, {nt, 1}).to(at::kFloat),
                                      at::rand({nt, 2}), at::rand({nt, 2}) * 0.5 + 0.01},
                                     1);
  const at::Tensor padded = PaddedTargets(targets, 256);
  ASSERT_EQ(padded.sizes(), (std::vector<int64_t>{256, 6}));
  EXPECT_TRUE(padded.narrow(0, 0, nt).equal(targets));
  const std::vector<at::Tensor> predictions = ThreeLevelPredictions(bs, 5);
  for (bool sync_free : {false, true}) {
    SCOPED_TRACE(sync_free ? "sync-free" : "selecting");
    const ComputeLoss loss(hyp, 0.1, 5, ThreeLevelAnchors(), sync_free);
    std::vector<at::Tensor> grads[2];
    at::Tensor items[2];
    for (int way = 0; way < 2; ++way) {
      std::vector<at::Tensor> p;
      for (const at::Tensor& x : predictions) p.push_back(x.detach().clone().requires_grad_());
      const LossOutput out = loss(p, way == 0 ? targets : padded);
      out.total.backward();
      items[way] = out.items;
      for (const at::Tensor& x : p) grads[way].push_back(x.grad());
    }
    EXPECT_TRUE(at::allclose(items[1], items[0], 1e-6, 1e-12)) << items[0] << items[1];
    for (size_t i = 0; i < predictions.size(); ++i) {
      EXPECT_TRUE(grads[1][i].isfinite().all().item<bool>()) << "level " << i;
      EXPECT_TRUE(at::allclose(grads[1][i], grads[0][i], 1e-6, 1e-12)) << "level " << i;
    }
  }
  EXPECT_TRUE(PaddedTargets(at::zeros({0, 6}), 3).select(1, 4).eq(kPaddingTargetSize).all().item<bool>());
}

TEST(ScaleLossGainsTest, FollowsTrainPy) {
  const Hyp same = ScaleLossGains(Hyp{}, 80, 3, 640);
  EXPECT_DOUBLE_EQ(same.box, 0.05);
  EXPECT_DOUBLE_EQ(same.cls, 0.5);
  EXPECT_DOUBLE_EQ(same.obj, 1.0);
  const Hyp small = ScaleLossGains(Hyp{}, 1, 4, 320);
  EXPECT_DOUBLE_EQ(small.box, 0.05 * 0.75);
  EXPECT_DOUBLE_EQ(small.cls, 0.5 * (1.0 / 80 * 3 / 4));
  EXPECT_DOUBLE_EQ(small.obj, 1.0 * (0.25 * 3 / 4));
}

}  // namespace
}  // namespace ffyolo
