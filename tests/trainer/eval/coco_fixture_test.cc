// The pycocotools 2.0.11 reference numbers on the real coco128 ground truth
// (shared/fixtures/cocoeval, see its README): jittered detections, and perfect
// detections built from the ground truth.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ffyolo/coco_eval.h"
#include "ffyolo/coco_json.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

// The issue asks for 1e-4 and the fixture README expects ~1e-6; replaying
// NumPy's arithmetic agrees to the last bit or two.
constexpr double kTol = 1e-9;

std::vector<double> ExpectedStats(const std::string& fixture_dir, const char* key) {
  const nlohmann::json expected =
      nlohmann::json::parse(testing::ReadFileToString(fixture_dir + "/expected_stats.json"));
  return expected.at(key).get<std::vector<double>>();
}

void ExpectStats(const CocoEvaluator::Stats& stats, const std::vector<double>& expected) {
  ASSERT_EQ(expected.size(), stats.size());
  for (size_t i = 0; i < stats.size(); ++i) EXPECT_NEAR(stats[i], expected[i], kTol) << "stat " << i;
}

TEST(CocoFixtureTest, JitteredDetectionsMatchPycocotools) {
  FFYOLO_REQUIRE_SHARED(fixture, "fixtures/cocoeval");
  FFYOLO_REQUIRE_SHARED(instances, "data/coco128/annotations/instances_train2017.json");
  CocoGroundTruth gt;
  std::vector<CocoDetection> dets;
  ASSERT_TRUE(LoadCocoGroundTruth(instances, &gt).ok());
  ASSERT_TRUE(LoadCocoDetections(fixture + "/coco128_fake_dets.json", &dets).ok());
  ASSERT_EQ(gt.image_ids.size(), 128u);
  ASSERT_EQ(gt.annotations.size(), 939u);
  ASSERT_EQ(dets.size(), 1100u);

  CocoEvaluator evaluator(gt, dets);
  const CocoEvaluator::Stats& stats = evaluator.Summarize();
  ExpectStats(stats, ExpectedStats(fixture, "stats_full"));

  // What pycocotools prints for these numbers.
  const std::vector<std::string> expected_lines = {
      " Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.353",
      " Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = 0.756",
      " Average Precision  (AP) @[ IoU=0.75      | area=   all | maxDets=100 ] = 0.280",
      " Average Precision  (AP) @[ IoU=0.50:0.95 | area= small | maxDets=100 ] = 0.422",
      " Average Precision  (AP) @[ IoU=0.50:0.95 | area=medium | maxDets=100 ] = 0.418",
      " Average Precision  (AP) @[ IoU=0.50:0.95 | area= large | maxDets=100 ] = 0.341",
      " Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets=  1 ] = 0.269",
      " Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets= 10 ] = 0.433",
      " Average Recall     (AR) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.438",
      " Average Recall     (AR) @[ IoU=0.50:0.95 | area= small | maxDets=100 ] = 0.464",
      " Average Recall     (AR) @[ IoU=0.50:0.95 | area=medium | maxDets=100 ] = 0.481",
      " Average Recall     (AR) @[ IoU=0.50:0.95 | area= large | maxDets=100 ] = 0.408",
  };
  EXPECT_EQ(CocoEvaluator::SummaryLines(stats), expected_lines);
}

// Every non-crowd object as its own detection with score 1: AP is 1, but AR1
// and AR10 fall short where an image holds more than 1 (10) objects of a class.
TEST(CocoFixtureTest, PerfectDetectionsMatchPycocotools) {
  FFYOLO_REQUIRE_SHARED(fixture, "fixtures/cocoeval");
  FFYOLO_REQUIRE_SHARED(instances, "data/coco128/annotations/instances_train2017.json");
  CocoGroundTruth gt;
  ASSERT_TRUE(LoadCocoGroundTruth(instances, &gt).ok());
  std::vector<CocoDetection> dets;
  for (const CocoAnnotation& ann : gt.annotations) {
    if (ann.iscrowd) continue;
    dets.push_back({ann.image_id, ann.category_id, ann.bbox, 1.0});
  }
  ASSERT_EQ(dets.size(), 929u);
  CocoEvaluator evaluator(gt, dets);
  ExpectStats(evaluator.Summarize(), ExpectedStats(fixture, "perfect_dets_stats_full"));
}

}  // namespace
}  // namespace ffyolo
