#include "ffyolo/box_ops.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/tensor.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reference_iou.h"

namespace ffyolo {
namespace {

using testing::ComputeReferenceIou;
using testing::ReferenceIou;

at::Tensor Box(std::vector<double> v) { return at::tensor(v, at::kDouble); }

double Iou(const std::vector<double>& a, const std::vector<double>& b, IouKind kind,
           bool xywh = true) {
  return BboxIou(Box(a), Box(b), kind, xywh).item<double>();
}

TEST(BboxIouTest, IdenticalBoxesAreOne) {
  for (IouKind kind : {IouKind::kIoU, IouKind::kGIoU, IouKind::kDIoU, IouKind::kCIoU}) {
    EXPECT_NEAR(Iou({5, 5, 2, 4}, {5, 5, 2, 4}, kind), 1.0, 1e-7);
  }
}

TEST(BboxIouTest, DisjointBoxesByHand) {
  // [-1, 1]^2 and [3, 5] x [-1, 1]: no overlap; enclosing box 6 x 2, centres 4 apart.
  const std::vector<double> a = {0, 0, 2, 2}, b = {4, 0, 2, 2};
  EXPECT_NEAR(Iou(a, b, IouKind::kIoU), 0.0, 1e-12);
  EXPECT_NEAR(Iou(a, b, IouKind::kGIoU), -(12.0 - 8.0) / 12.0, 1e-7);
  EXPECT_NEAR(Iou(a, b, IouKind::kDIoU), -16.0 / 40.0, 1e-7);
  EXPECT_NEAR(Iou(a, b, IouKind::kCIoU), -16.0 / 40.0, 1e-7);  // same aspect: v = 0
}

TEST(BboxIouTest, CiouTermsByHand) {
  // [-1, 1]^2 against [-1, 2] x [-0.5, 0.5]: inter 2, union 5, IoU 0.4;
  // enclosing 3 x 2 (c2 = 13); centres 0.5 apart (rho2 = 0.25);
  // atan(3) - atan(1) = atan(1/2).
  const std::vector<double> a = {0, 0, 2, 2}, b = {0.5, 0, 3, 1};
  const double pi = std::acos(-1.0);
  const double v = 4 / (pi * pi) * std::pow(std::atan(0.5), 2);
  const double alpha = v / (v - 0.4 + 1);
  EXPECT_NEAR(Iou(a, b, IouKind::kIoU), 0.4, 1e-7);
  EXPECT_NEAR(Iou(a, b, IouKind::kDIoU), 0.4 - 0.25 / 13, 1e-7);
  EXPECT_NEAR(Iou(a, b, IouKind::kCIoU), 0.4 - (0.25 / 13 + v * alpha), 1e-7);

  const double ad[4] = {0, 0, 2, 2}, bd[4] = {0.5, 0, 3, 1};
  const ReferenceIou ref = ComputeReferenceIou(ad, bd);
  EXPECT_NEAR(ref.v, v, 1e-12);
  EXPECT_NEAR(ref.alpha, alpha, 1e-7);
  EXPECT_NEAR(Iou(a, b, IouKind::kCIoU), ref.ciou, 1e-12);
  EXPECT_NEAR(Iou(a, b, IouKind::kGIoU), ref.giou, 1e-12);
}

TEST(BboxIouTest, XyxyFormAddsEpsToHeights) {
  const double a[4] = {0, 0, 2, 3}, b[4] = {1, 1, 4, 2};
  const ReferenceIou ref = ComputeReferenceIou(a, b, /*xywh=*/false, -1, /*eps=*/0.01);
  // A large eps makes the xyxy-specific placement visible.
  EXPECT_NEAR(
      BboxIou(Box({0, 0, 2, 3}), Box({1, 1, 4, 2}), IouKind::kCIoU, false, 0.01).item<double>(),
      ref.ciou, 1e-12);
  EXPECT_NEAR(
      BboxIou(Box({0, 0, 2, 3}), Box({1, 1, 4, 2}), IouKind::kIoU, false, 0.01).item<double>(),
      ref.iou, 1e-12);
}

TEST(BboxIouTest, BroadcastsPairsAndMatchesReference) {
  const std::vector<std::vector<double>> boxes = {
      {1, 1, 2, 3}, {1.5, 0.5, 0.5, 4}, {-2, 3, 1, 1}, {0.2, 0.9, 6, 0.3}};
  const double target[4] = {1, 1.2, 2.5, 2};
  at::Tensor many =
      at::tensor(std::vector<double>{1, 1, 2, 3, 1.5, 0.5, 0.5, 4, -2, 3, 1, 1, 0.2, 0.9, 6, 0.3},
                 at::kDouble)
          .view({4, 4});
  const at::Tensor got = BboxIou(many, Box({1, 1.2, 2.5, 2}), IouKind::kCIoU);
  ASSERT_EQ(got.dim(), 1);
  ASSERT_EQ(got.size(0), 4);
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(got[k].item<double>(), ComputeReferenceIou(boxes[k].data(), target).ciou, 1e-12)
        << "box " << k;
  }
}

TEST(BboxIouTest, CiouGradientTreatsAlphaAsConstant) {
  const double a[4] = {0.3, 0.4, 1.7, 0.9}, b[4] = {0.5, 0.2, 1.1, 1.6};
  const double alpha = ComputeReferenceIou(a, b).alpha;
  at::Tensor box = Box({a[0], a[1], a[2], a[3]}).requires_grad_();
  BboxIou(box, Box({b[0], b[1], b[2], b[3]}), IouKind::kCIoU).backward();
  const at::Tensor grad = box.grad();
  const double h = 1e-6;
  for (int k = 0; k < 4; ++k) {
    double plus[4] = {a[0], a[1], a[2], a[3]}, minus[4] = {a[0], a[1], a[2], a[3]};
    plus[k] += h;
    minus[k] -= h;
    const double numeric = (ComputeReferenceIou(plus, b, true, alpha).ciou -
                            ComputeReferenceIou(minus, b, true, alpha).ciou) /
                           (2 * h);
    EXPECT_NEAR(grad[k].item<double>(), numeric, 1e-6) << "coordinate " << k;
  }
}

TEST(BoxIouTest, MatrixByHand) {
  const at::Tensor a =
      at::tensor(std::vector<double>{0, 0, 2, 2, 1, 1, 3, 3}, at::kDouble).view({2, 4});
  const at::Tensor b =
      at::tensor(std::vector<double>{0, 0, 2, 2, 2, 2, 4, 4, 10, 10, 11, 11}, at::kDouble)
          .view({3, 4});
  const at::Tensor iou = BoxIou(a, b);
  ASSERT_EQ(iou.size(0), 2);
  ASSERT_EQ(iou.size(1), 3);
  const double expected[2][3] = {{4 / (4 + 1e-7), 0, 0}, {1 / (7 + 1e-7), 1 / (7 + 1e-7), 0}};
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(iou[i][j].item<double>(), expected[i][j], 1e-12);
  }
}

TEST(BoxFormatTest, XywhXyxyByHandAndBack) {
  const at::Tensor xywh = at::tensor(std::vector<float>{10, 20, 4, 6, 0.5, 0.5, 1, 3}).view({2, 4});
  const at::Tensor xyxy = XywhToXyxy(xywh);
  const float expected[2][4] = {{8, 17, 12, 23}, {0, -1, 1, 2}};
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(xyxy[i][k].item<float>(), expected[i][k]);
  }
  EXPECT_TRUE(XyxyToXywh(xyxy).equal(xywh));
}

TEST(ClipBoxesTest, ClampsToImage) {
  const at::Tensor boxes =
      at::tensor(std::vector<float>{-5, 3, 700, 500, 10, -1, 20, 30}).view({2, 4});
  const at::Tensor clipped = ClipBoxes(boxes, /*height=*/480, /*width=*/640);
  const float expected[2][4] = {{0, 3, 640, 480}, {10, 0, 20, 30}};
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(clipped[i][k].item<float>(), expected[i][k]);
  }
}

TEST(ScaleBoxesTest, UndoesLetterbox) {
  // A 500 x 375 (w x h) image letterboxed into 640 x 640: gain 1.28, 80 px top and bottom.
  const std::vector<float> orig = {10, 20, 110, 220, 0, 0, 500, 375};
  std::vector<float> boxed;
  for (size_t k = 0; k < orig.size(); ++k) boxed.push_back(orig[k] * 1.28f + (k % 2 ? 80.f : 0.f));
  const at::Tensor back = ScaleBoxes(640, 640, at::tensor(boxed).view({2, 4}), 375, 500);
  for (int k = 0; k < 8; ++k) EXPECT_NEAR(back.view(-1)[k].item<float>(), orig[k], 1e-3) << k;

  // Outside the letterboxed image: clipped to the original.
  const at::Tensor outside = ScaleBoxes(
      640, 640, at::tensor(std::vector<float>{-20, 50, 660, 600}).view({1, 4}), 375, 500);
  const float expected[4] = {0, 0, 500, 375};
  for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(outside[0][k].item<float>(), expected[k]);
}

TEST(ScaleBoxesTest, RatioPadOverridesDerivedGeometry) {
  // Derived geometry would be gain 1.28 and pad (0, 80); the given one is used instead.
  const at::Tensor boxes = at::tensor(std::vector<float>{13, 27, 53, 107}).view({1, 4});
  const at::Tensor back = ScaleBoxes(640, 640, boxes, 375, 500, RatioPad{2.0, 3.0, 7.0});
  const float expected[4] = {5, 10, 25, 50};
  for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(back[0][k].item<float>(), expected[k]);
}

}  // namespace
}  // namespace ffyolo
