// Evaluation from a packed dataset alone reproduces pycocotools on the coco128 fixture, to 1e-9:
// the label index keeps the JSON's own bbox and area (EvalBox).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ffyolo/coco_json.h"
#include "ffyolo/dataset.h"
#include "ffyolo/dataset_eval.h"
#include "ffyolo/pack.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

TEST(DatasetEvalTest, FixtureDetectionsGivePycocotoolsStats) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  FFYOLO_REQUIRE_SHARED(fixture, "fixtures/cocoeval");
  testing::ScratchDir dir("fixture");
  PackOptions po;
  po.source = coco128;
  po.output = dir / "c.ffr";
  PackSummary ps;
  ASSERT_TRUE(Pack(po, &ps).ok());
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(po.output, &d).ok());
  LabelIndex index;
  ASSERT_TRUE(d->LoadLabelIndex("train2017", &index).ok());
  std::vector<CocoDetection> dets;
  ASSERT_TRUE(LoadCocoDetections(fixture + "/coco128_fake_dets.json", &dets).ok());
  DatasetEvaluator evaluator(d->manifest(), index);
  ASSERT_TRUE(evaluator.AddCocoResults(dets, "fixture").ok());
  const DatasetEvalResult r = evaluator.Finish();
  const auto expected = nlohmann::json::parse(testing::ReadFileToString(fixture + "/expected_stats.json"));
  const auto& stats = expected["stats_full"];
  ASSERT_EQ(stats.size(), 12u);
  for (int k = 0; k < 12; ++k) EXPECT_NEAR(r.coco[k], stats[k].get<double>(), 1e-9) << "stat " << k;
  EXPECT_EQ(r.images, 128);
  EXPECT_GT(r.metrics.map50, 0.5);  // the Ultralytics table runs on the same detections

  std::vector<CocoDetection> bad = {dets[0]};
  bad[0].image_id = 999999;
  DatasetEvaluator strict(d->manifest(), index);
  ffr::Status s = strict.AddCocoResults(bad, "dets.json");
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("dets.json: detection 0"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ffyolo
