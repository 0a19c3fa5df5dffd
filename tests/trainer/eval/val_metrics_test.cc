// YOLOv5 v7.0 val metrics on hand-made cases; expected values are derived in
// the comments from the definitions in utils/metrics.py and val.py.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ffyolo/numpy_math.h"
#include "ffyolo/val_ap.h"
#include "ffyolo/val_matching.h"
#include "ffyolo/val_metrics.h"

namespace ffyolo {
namespace {

constexpr double kTol = 1e-12;

IouHits AllHits(bool hit) {
  IouHits hits;
  hits.fill(hit);
  return hits;
}

TEST(NumpyMathTest, LinspaceEndsExactly) {
  const std::vector<double> x = NumpyLinspace(0.0, 1.0, 101);
  ASSERT_EQ(x.size(), 101u);
  EXPECT_EQ(x[0], 0.0);
  EXPECT_EQ(x[1], 0.01);
  EXPECT_EQ(x[50], 0.5);
  EXPECT_EQ(x[100], 1.0);
  EXPECT_EQ(NumpyLinspace(2.0, 3.0, 1), std::vector<double>{2.0});
}

// xp = [0, 1, 1, 2], fp = [0, 1, 2, 3]: below -> left, above -> right, at the
// repeated 1 the last value (2), linear elsewhere.
TEST(NumpyMathTest, InterpFollowsNumpy) {
  const std::vector<double> xp = {0, 1, 1, 2}, fp = {0, 1, 2, 3};
  EXPECT_EQ(NumpyInterp(-0.5, xp, fp, 7, 9), 7.0);
  EXPECT_EQ(NumpyInterp(2.5, xp, fp, 7, 9), 9.0);
  EXPECT_EQ(NumpyInterp(0.0, xp, fp, 7, 9), 0.0);
  EXPECT_EQ(NumpyInterp(0.5, xp, fp, 7, 9), 0.5);
  EXPECT_EQ(NumpyInterp(1.0, xp, fp, 7, 9), 2.0);
  EXPECT_EQ(NumpyInterp(1.5, xp, fp, 7, 9), 2.5);
  EXPECT_EQ(NumpyInterp(2.0, xp, fp, 7, 9), 3.0);  // the last point itself, not `right`
  EXPECT_EQ(NumpyInterp(5.0, {1.0}, {4.0}, 0, 6), 6.0);
  EXPECT_EQ(NumpyInterp(1.0, {1.0}, {4.0}, 0, 6), 4.0);
}

// 1e16 + 1 rounds back to 1e16 (ties to even), so a running sum of
// [1e16, 1 x 7] stays 1e16; NumPy's 8 accumulators add the ones among
// themselves first: (1e16 + 1) + 2 + 4 = 1e16 + 6.
TEST(NumpyMathTest, PairwiseSumGroupsLikeNumpy) {
  const std::vector<double> values = {1e16, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(NumpyPairwiseSum(values.data(), values.size()), 1e16 + 6);
  const std::vector<double> small = {1, 2, 3};
  EXPECT_EQ(NumpyPairwiseSum(small.data(), small.size()), 6.0);
  std::vector<double> many(1000, 0.5);
  EXPECT_EQ(NumpyPairwiseSum(many.data(), many.size()), 500.0);
}

// One perfect prediction: mrec = [0, 1, 1], mpre = [1, 1, 0]. np.interp at
// recall 1 takes the last of the equal xp, precision 0, so the 101 samples are
// 1 x 100 then 0, and the trapezoid gives 0.99 + 0.005 = 0.995.
TEST(ComputeApTest, SinglePerfectPredictionIs0995) { EXPECT_NEAR(ComputeAp({1.0}, {1.0}), 0.995, kTol); }

// TP, FP, TP with 2 labels: recall [.5, .5, 1], precision [1, .5, 2/3].
// Envelope: mrec [0, .5, .5, 1, 1], mpre [1, 1, 2/3, 2/3, 0]. Samples: 1 for
// x < 0.5 (50 points), 2/3 for 0.5 <= x < 1 (50 points), 0 at x = 1.
// Trapezoid: 0.49 + 0.01 (1 + 2/3)/2 + 0.49 (2/3) + 0.01 (1/3) = 497/600.
TEST(ComputeApTest, HandCurve) {
  EXPECT_NEAR(ComputeAp({0.5, 0.5, 1.0}, {1.0, 0.5, 2.0 / 3}), 497.0 / 600, kTol);
}

TEST(ComputeApTest, NoTruePositiveIsZero) { EXPECT_NEAR(ComputeAp({0.0, 0.0}, {0.0, 0.0}), 0.0, kTol); }

TEST(ValMatchingTest, BoxIouHasEps) {
  const ValLabel label{0, 0, 0, 10, 10};
  EXPECT_DOUBLE_EQ(ValBoxIou(label, {0, 0, 10, 10, 0.9, 0}), 100.0 / (100.0 + 1e-7));
  EXPECT_EQ(ValBoxIou(label, {20, 20, 30, 30, 0.9, 0}), 0.0);
  EXPECT_DOUBLE_EQ(ValBoxIou(label, {5, 0, 15, 10, 0.9, 0}), 50.0 / (150.0 + 1e-7));
}

// Labels L0 = [0,10]x[0,10], L1 = [2,11]x[0,10]; P0 = [0,6]x[0,10] (conf first),
// P1 = [0,9]x[0,10]. IoU(L0,P0) = 0.6, IoU(L0,P1) = 0.9, IoU(L1,P1) = 7/11 =
// 0.636, IoU(L1,P0) = 4/11. (Each slightly lower by the 1e-7 eps.)
// t = 0.50, 0.55: both predictions pick L0 (their best), L0 goes to P0
//           (lowest index); P1 is not offered L1: P0 correct, P1 not.
// t = 0.60 .. 0.85: P0 has no candidate; P1 takes L0.
// t = 0.90, 0.95: nothing (0.9 - eps < 0.9).
TEST(ValMatchingTest, ProcessBatchKeepsTheQuirk) {
  const std::vector<ValLabel> labels = {{0, 0, 0, 10, 10}, {0, 2, 0, 11, 10}};
  const std::vector<ValPrediction> predictions = {{0, 0, 6, 10, 0.9, 0}, {0, 0, 9, 10, 0.8, 0}};
  const std::vector<IouHits> correct = ProcessBatch(predictions, labels);
  ASSERT_EQ(correct.size(), 2u);
  const IouHits p0 = {true, true, false, false, false, false, false, false, false, false};
  const IouHits p1 = {false, false, true, true, true, true, true, true, false, false};
  EXPECT_EQ(correct[0], p0);
  EXPECT_EQ(correct[1], p1);
}

// Two identical labels, two identical predictions: both predictions choose the
// same label (the later one on a tie) and only the first is correct.
TEST(ValMatchingTest, IdenticalPairsMatchOnce) {
  const std::vector<ValLabel> labels = {{3, 0, 0, 10, 10}, {3, 0, 0, 10, 10}};
  const std::vector<ValPrediction> predictions = {{0, 0, 10, 10, 0.9, 3}, {0, 0, 10, 10, 0.8, 3}};
  const std::vector<IouHits> correct = ProcessBatch(predictions, labels);
  EXPECT_EQ(correct[0], AllHits(true));
  EXPECT_EQ(correct[1], AllHits(false));
}

TEST(ValMatchingTest, ClassMustMatch) {
  const std::vector<IouHits> correct = ProcessBatch({{0, 0, 10, 10, 0.9, 1}}, {{2, 0, 0, 10, 10}});
  EXPECT_EQ(correct[0], AllHits(false));
}

// Class 0: 2 labels, predictions TP (0.9), FP (0.8), TP (0.7) -> AP 497/600 at
// every threshold. At confidence < 0.7 its P = 2/3, R = 1, F1 = 0.8, the
// maximum; the smoothed mean F1 is flat there and its argmax is the first
// point (confidence 0), so P = 2/3, R = 1. Class 1: a label, no prediction ->
// zeros. Class 2 has a prediction but no label: no row.
TEST(ApPerClassTest, TinyCase) {
  // Listed out of confidence order (ap_per_class sorts): FP 0.8, TP 0.9, TP 0.7, class-2 FP 0.95.
  const std::vector<IouHits> tp = {AllHits(false), AllHits(true), AllHits(true), AllHits(false)};
  const std::vector<double> conf = {0.8, 0.9, 0.7, 0.95};
  const std::vector<int> pred_cls = {0, 0, 0, 2};
  const std::vector<ClassAp> classes = ApPerClass(tp, conf, pred_cls, {0, 0, 1});
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].cls, 0);
  EXPECT_EQ(classes[0].num_labels, 2);
  EXPECT_NEAR(classes[0].precision, 2.0 / 3, kTol);
  EXPECT_NEAR(classes[0].recall, 1.0, kTol);
  EXPECT_NEAR(classes[0].f1, 0.8, kTol);
  for (double ap : classes[0].ap) EXPECT_NEAR(ap, 497.0 / 600, kTol);
  EXPECT_EQ(classes[1].cls, 1);
  EXPECT_EQ(classes[1].num_labels, 1);
  EXPECT_EQ(classes[1].precision, 0.0);
  EXPECT_EQ(classes[1].recall, 0.0);
  for (double ap : classes[1].ap) EXPECT_EQ(ap, 0.0);
}

TEST(ApPerClassTest, NoLabelsNoRows) { EXPECT_TRUE(ApPerClass({AllHits(false)}, {0.5}, {0}, {}).empty()); }

// The ApPerClass tiny case through images: image 1 holds the class-0 labels
// and predictions, image 2 a class-1 label without prediction, image 3 a
// class-2 prediction without label. Means over classes {0, 1}:
// mp = (2/3 + 0)/2, mr = 1/2, mAP50 = mAP = 497/1200.
TEST(ValMetricsTest, AccumulatesImages) {
  ValMetricsAccumulator acc;
  acc.AddImage({{0, 0, 10, 10, 0.9, 0}, {300, 300, 310, 310, 0.8, 0}, {100, 100, 110, 110, 0.7, 0}},
               {{0, 0, 0, 10, 10}, {0, 100, 100, 110, 110}});
  acc.AddImage({}, {{1, 0, 0, 10, 10}});
  acc.AddImage({{0, 0, 10, 10, 0.95, 2}}, {});
  const ValMetrics m = acc.Compute();
  EXPECT_EQ(m.images, 3);
  EXPECT_EQ(m.instances, 3);
  EXPECT_NEAR(m.mp, 1.0 / 3, kTol);
  EXPECT_NEAR(m.mr, 0.5, kTol);
  EXPECT_NEAR(m.map50, 497.0 / 1200, kTol);
  EXPECT_NEAR(m.map, 497.0 / 1200, kTol);
  ASSERT_EQ(m.classes.size(), 2u);
  EXPECT_EQ(m.classes[0].cls, 0);
  EXPECT_EQ(m.classes[0].images, 3);
  EXPECT_EQ(m.classes[0].instances, 2);
  EXPECT_NEAR(m.classes[0].precision, 2.0 / 3, kTol);
  EXPECT_NEAR(m.classes[0].recall, 1.0, kTol);
  EXPECT_NEAR(m.classes[0].map50, 497.0 / 600, kTol);
  EXPECT_NEAR(m.classes[0].map, 497.0 / 600, kTol);
  EXPECT_EQ(m.classes[1].cls, 1);
  EXPECT_EQ(m.classes[1].instances, 1);
  EXPECT_EQ(m.classes[1].map, 0.0);

  const std::string header =
      "                 Class     Images  Instances          P          R      mAP50   mAP50-95\n"
      "                   all          3          3      0.333        0.5      0.414      0.414\n";
  EXPECT_EQ(FormatValMetricsTable(m, {}, /*per_class=*/false), header);
  EXPECT_EQ(FormatValMetricsTable(m, {"person", "bicycle"}, /*per_class=*/true),
            header +
                "                person          3          2      0.667          1      0.828      0.828\n"
                "               bicycle          3          1          0          0          0          0\n");
}

// val.py computes nothing without a single true positive: all zeros, no rows.
TEST(ValMetricsTest, NoTruePositiveGivesZeros) {
  ValMetricsAccumulator acc;
  acc.AddImage({{50, 50, 60, 60, 0.9, 0}}, {{0, 0, 0, 10, 10}});
  const ValMetrics m = acc.Compute();
  EXPECT_EQ(m.images, 1);
  EXPECT_EQ(m.instances, 1);
  EXPECT_EQ(m.mp, 0.0);
  EXPECT_EQ(m.mr, 0.0);
  EXPECT_EQ(m.map50, 0.0);
  EXPECT_EQ(m.map, 0.0);
  EXPECT_TRUE(m.classes.empty());
}

TEST(ValMetricsTest, FitnessWeighsMaps) { EXPECT_NEAR(Fitness(0.5, 0.25), 0.05 + 0.225, kTol); }

}  // namespace
}  // namespace ffyolo
