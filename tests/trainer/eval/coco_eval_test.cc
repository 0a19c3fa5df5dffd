// Hand-made COCOeval cases: each expected number is derived in the comments
// from pycocotools' rules (matching, ignore flags, sorting, 101-point sampling).
#include "ffyolo/coco_eval.h"

#include <gtest/gtest.h>

#include <vector>

namespace ffyolo {
namespace {

enum StatIndex { kAP, kAP50, kAP75, kAPs, kAPm, kAPl, kAR1, kAR10, kAR100, kARs, kARm, kARl };

// A matched prediction alone has precision 1 / (1 + eps), hence the tolerance.
constexpr double kTol = 1e-12;

CocoAnnotation Gt(int64_t image, int64_t category, double x, double y, double w, double h,
                  double area = -1, bool crowd = false) {
  CocoAnnotation a;
  a.image_id = image;
  a.category_id = category;
  a.bbox = {x, y, w, h};
  a.area = area < 0 ? w * h : area;
  a.iscrowd = crowd;
  return a;
}

CocoDetection Det(int64_t image, int64_t category, double x, double y, double w, double h, double score) {
  CocoDetection d;
  d.image_id = image;
  d.category_id = category;
  d.bbox = {x, y, w, h};
  d.score = score;
  return d;
}

CocoEvaluator::Stats Evaluate(std::vector<int64_t> images, std::vector<CocoAnnotation> anns,
                              std::vector<CocoDetection> dets) {
  CocoEvaluator evaluator({std::move(images), std::move(anns)}, std::move(dets));
  return evaluator.Summarize();
}

TEST(CocoEvalTest, ThresholdsAreNumpyLinspaces) {
  const auto& iou = CocoEvaluator::IouThresholds();
  ASSERT_EQ(iou.size(), 10u);
  EXPECT_EQ(iou[0], 0.5);
  EXPECT_EQ(iou[5], 0.75);  // summarize() finds AP75 by equality
  EXPECT_EQ(iou[9], 0.95);
  const auto& rec = CocoEvaluator::RecallThresholds();
  ASSERT_EQ(rec.size(), 101u);
  EXPECT_EQ(rec[1], 0.01);
  EXPECT_EQ(rec[50], 0.5);
  EXPECT_EQ(rec[100], 1.0);
}

// IoU 72/100 = 0.72 clears the thresholds 0.50..0.70 (5 of 10): precision is 1
// at all 101 recall points there and 0 elsewhere, so AP = 0.5, AP50 = 1, AP75 = 0.
// The object is small (area 100): medium and large have nothing to count, -1.
TEST(CocoEvalTest, OneDetectionAtKnownIou) {
  CocoEvaluator evaluator({{1}, {Gt(1, 1, 0, 0, 10, 10)}}, {Det(1, 1, 0, 0, 10, 7.2, 0.9)});
  const CocoEvaluator::Stats stats = evaluator.Summarize();
  EXPECT_NEAR(stats[kAP], 0.5, kTol);
  EXPECT_NEAR(stats[kAP50], 1.0, kTol);
  EXPECT_NEAR(stats[kAP75], 0.0, kTol);
  EXPECT_NEAR(stats[kAPs], 0.5, kTol);
  EXPECT_EQ(stats[kAPm], -1.0);
  EXPECT_EQ(stats[kAPl], -1.0);
  EXPECT_NEAR(stats[kAR1], 0.5, kTol);
  EXPECT_NEAR(stats[kAR100], 0.5, kTol);
  EXPECT_NEAR(stats[kARs], 0.5, kTol);
  EXPECT_EQ(stats[kARm], -1.0);
  for (int t = 0; t < CocoEvaluator::kNumIouThresholds; ++t) {
    const double expected = t < 5 ? 1.0 : 0.0;
    EXPECT_NEAR(evaluator.recall(t, 0, CocoEvaluator::kAreaAll, 2), expected, kTol) << t;
    for (int r = 0; r < CocoEvaluator::kNumRecallThresholds; ++r) {
      ASSERT_NEAR(evaluator.precision(t, r, 0, CocoEvaluator::kAreaAll, 2), expected, kTol) << t << " " << r;
    }
  }
}

// Two detections inside a crowd region score above the real match. Against a
// crowd box the IoU is inter / detection area = 1, so both match it (a crowd
// box may be matched many times) and are ignored: AP = 1. Without the crowd
// annotation the better one is a false positive ranked first: precision 0.5 at
// recall 1, AP = 0.5. As a plain object the region (IoU 100/10000) stays
// unmatched: recall 0.5 with precision 0.5 at recall points 0..0.50, AP = 0.5 * 51/101.
TEST(CocoEvalTest, CrowdRegionSwallowsDetections) {
  const std::vector<CocoDetection> dets = {Det(1, 1, 60, 60, 10, 10, 0.95), Det(1, 1, 70, 70, 10, 10, 0.97),
                                           Det(1, 1, 0, 0, 10, 10, 0.9)};
  const CocoAnnotation object = Gt(1, 1, 0, 0, 10, 10);
  const CocoEvaluator::Stats crowd =
      Evaluate({1}, {object, Gt(1, 1, 50, 50, 100, 100, 10000, /*crowd=*/true)}, dets);
  EXPECT_NEAR(crowd[kAP], 1.0, kTol);
  EXPECT_NEAR(crowd[kAR100], 1.0, kTol);

  const CocoEvaluator::Stats no_crowd = Evaluate({1}, {object}, {dets[0], dets[2]});
  EXPECT_NEAR(no_crowd[kAP], 0.5, kTol);

  const CocoEvaluator::Stats plain =
      Evaluate({1}, {object, Gt(1, 1, 50, 50, 100, 100, 10000, /*crowd=*/false)}, {dets[0], dets[2]});
  EXPECT_NEAR(plain[kAP], 0.5 * 51 / 101, kTol);
  EXPECT_NEAR(plain[kAR100], 0.5, kTol);
}

// A large false positive ranked first halves the precision in area "all"
// (AP 0.5), but in area "small" it is an unmatched detection outside the range
// and is ignored (APs 1).
TEST(CocoEvalTest, UnmatchedDetectionOutsideAreaRangeIsIgnored) {
  const CocoEvaluator::Stats stats =
      Evaluate({1}, {Gt(1, 1, 0, 0, 10, 10)},
               {Det(1, 1, 200, 200, 200, 200, 0.95), Det(1, 1, 0, 0, 10, 10, 0.9)});
  EXPECT_NEAR(stats[kAP], 0.5, kTol);
  EXPECT_NEAR(stats[kAPs], 1.0, kTol);
  EXPECT_EQ(stats[kAPm], -1.0);
  EXPECT_EQ(stats[kAPl], -1.0);
  EXPECT_NEAR(stats[kARs], 1.0, kTol);
}

// The box is 40x40 (1600, medium) but the stored area is 500 (small): the
// object counts as small. Its detection (w*h = 1600) is outside "small" but
// matched, so it stays a true positive there; in "medium" it matches an
// ignored object and nothing is counted (-1).
TEST(CocoEvalTest, GroundTruthAreaRangeUsesStoredArea) {
  const CocoEvaluator::Stats stats =
      Evaluate({1}, {Gt(1, 1, 0, 0, 40, 40, /*area=*/500)}, {Det(1, 1, 0, 0, 40, 40, 0.9)});
  EXPECT_NEAR(stats[kAPs], 1.0, kTol);
  EXPECT_EQ(stats[kAPm], -1.0);
  EXPECT_NEAR(stats[kARs], 1.0, kTol);
  EXPECT_EQ(stats[kARm], -1.0);
}

// Ground truth is sorted counted-first. The detection overlaps the object with
// IoU 62.5/100 = 0.625 and lies inside a crowd region listed first (crowd IoU 1).
// Up to t = 0.60 it matches the object and stops before the ignored region
// (true positive); above, only the region qualifies and the detection is
// ignored, leaving precision 0. AP = AR = 3/10.
TEST(CocoEvalTest, CountedObjectsAreMatchedBeforeIgnoredOnes) {
  const CocoEvaluator::Stats stats =
      Evaluate({1}, {Gt(1, 1, 0, 0, 100, 100, 10000, /*crowd=*/true), Gt(1, 1, 0, 0, 10, 10)},
               {Det(1, 1, 0, 0, 10, 6.25, 0.9)});
  EXPECT_NEAR(stats[kAP], 0.3, kTol);
  EXPECT_NEAR(stats[kAR100], 0.3, kTol);
}

// maxDets applies per image and category after sorting by score: the true
// positive listed second but scored higher survives maxDets=1, and category 2
// of the same image keeps its own single detection: AR1 = 1. Eleven objects of
// one class give AR1 = 1/11 and AR10 = 10/11.
TEST(CocoEvalTest, MaxDetsKeepsBestScoresPerImageAndCategory) {
  const CocoEvaluator::Stats stats =
      Evaluate({1}, {Gt(1, 1, 0, 0, 10, 10), Gt(1, 2, 100, 100, 10, 10)},
               {Det(1, 1, 50, 50, 10, 10, 0.5), Det(1, 1, 0, 0, 10, 10, 0.9), Det(1, 2, 100, 100, 10, 10, 0.3)});
  EXPECT_NEAR(stats[kAR1], 1.0, kTol);

  std::vector<CocoAnnotation> gts;
  std::vector<CocoDetection> dets;
  for (int i = 0; i < 11; ++i) {
    gts.push_back(Gt(1, 1, 20.0 * i, 0, 10, 10));
    dets.push_back(Det(1, 1, 20.0 * i, 0, 10, 10, 0.5 + 0.01 * i));
  }
  const CocoEvaluator::Stats eleven = Evaluate({1}, gts, dets);
  EXPECT_NEAR(eleven[kAR1], 1.0 / 11, kTol);
  EXPECT_NEAR(eleven[kAR10], 10.0 / 11, kTol);
  EXPECT_NEAR(eleven[kAR100], 1.0, kTol);
  EXPECT_NEAR(eleven[kAP], 1.0, kTol);
}

// Equal scores keep their order: within an image the input order (the false
// positive listed first survives maxDets=1, AR1 = 0; at 100 the ranking
// FP, TP gives AP 0.5), across images the image-id order. Image 1 (listed
// last) holds a false positive, image 2 a true positive, both at 0.5: the
// ranking FP, TP has precision 0.5 up to recall 0.5, AP = 0.5 * 51/101.
TEST(CocoEvalTest, EqualScoresKeepImageThenInputOrder) {
  const CocoEvaluator::Stats within =
      Evaluate({1}, {Gt(1, 1, 0, 0, 10, 10)}, {Det(1, 1, 50, 50, 10, 10, 0.9), Det(1, 1, 0, 0, 10, 10, 0.9)});
  EXPECT_NEAR(within[kAR1], 0.0, kTol);
  EXPECT_NEAR(within[kAR10], 1.0, kTol);
  EXPECT_NEAR(within[kAP], 0.5, kTol);

  const CocoEvaluator::Stats across =
      Evaluate({2, 1}, {Gt(2, 1, 0, 0, 10, 10), Gt(1, 1, 0, 0, 10, 10)},
               {Det(2, 1, 0, 0, 10, 10, 0.5), Det(1, 1, 50, 50, 10, 10, 0.5)});
  EXPECT_NEAR(across[kAP], 0.5 * 51 / 101, kTol);
}

// Category 2 has only a crowd region: nothing to count, so its precision is -1
// and the means skip it. Detections of a category without ground truth, or of
// an image outside image_ids, are left out.
TEST(CocoEvalTest, CategoriesWithoutCountedObjectsAreSkipped) {
  CocoEvaluator evaluator(
      {{1}, {Gt(1, 1, 0, 0, 10, 10), Gt(1, 2, 0, 0, 50, 50, 2500, /*crowd=*/true)}},
      {Det(1, 1, 0, 0, 10, 10, 0.9), Det(1, 2, 10, 10, 10, 10, 0.8), Det(1, 3, 30, 30, 10, 10, 0.99),
       Det(7, 1, 30, 30, 10, 10, 0.99)});
  const CocoEvaluator::Stats stats = evaluator.Summarize();
  ASSERT_EQ(evaluator.category_ids(), (std::vector<int64_t>{1, 2}));
  EXPECT_NEAR(stats[kAP], 1.0, kTol);
  EXPECT_EQ(evaluator.precision(0, 0, 1, CocoEvaluator::kAreaAll, 2), -1.0);
  EXPECT_EQ(evaluator.recall(0, 1, CocoEvaluator::kAreaAll, 2), -1.0);
}

TEST(CocoEvalTest, NoGroundTruthSummarizesToMinusOne) {
  const CocoEvaluator::Stats stats = Evaluate({1}, {}, {Det(1, 1, 0, 0, 10, 10, 0.9)});
  for (double s : stats) EXPECT_EQ(s, -1.0);
}

TEST(CocoEvalTest, SummaryLinesFollowPycocotoolsFormat) {
  CocoEvaluator::Stats stats;
  for (int i = 0; i < 12; ++i) stats[i] = 0.1 * i + 0.0004;
  stats[kAPl] = -1;
  const std::vector<std::string> lines = CocoEvaluator::SummaryLines(stats);
  ASSERT_EQ(lines.size(), 12u);
  EXPECT_EQ(lines[0], " Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.000");
  EXPECT_EQ(lines[1], " Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = 0.100");
  EXPECT_EQ(lines[2], " Average Precision  (AP) @[ IoU=0.75      | area=   all | maxDets=100 ] = 0.200");
  EXPECT_EQ(lines[4], " Average Precision  (AP) @[ IoU=0.50:0.95 | area=medium | maxDets=100 ] = 0.400");
  EXPECT_EQ(lines[5], " Average Precision  (AP) @[ IoU=0.50:0.95 | area= large | maxDets=100 ] = -1.000");
  EXPECT_EQ(lines[6], " Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets=  1 ] = 0.600");
  EXPECT_EQ(lines[7], " Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets= 10 ] = 0.700");
  EXPECT_EQ(lines[9], " Average Recall     (AR) @[ IoU=0.50:0.95 | area= small | maxDets=100 ] = 0.900");
}

}  // namespace
}  // namespace ffyolo
