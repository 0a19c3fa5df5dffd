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

// --single-cls: every label and detection counts as class 0. Class-0 detections on every label's box are then
// all right; scored with the dataset's classes, only those on class-0 labels are.
TEST(DatasetEvalTest, SingleClsScoresEveryLabelAsClassZero) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  testing::ScratchDir dir("single_cls");
  PackOptions po;
  po.source = coco128;
  po.output = dir / "c.ffr";
  PackSummary ps;
  ASSERT_TRUE(Pack(po, &ps).ok());
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(po.output, &d).ok());
  LabelIndex index;
  ASSERT_TRUE(d->LoadLabelIndex("train2017", &index).ok());
  DatasetEvaluator single(d->manifest(), index, /*single_cls=*/true), multi(d->manifest(), index);
  for (size_t i = 0; i < index.size(); ++i) {
    std::vector<ValPrediction> preds;
    const double w = index.width(i), h = index.height(i);
    for (size_t k = 0; k < index.box_count(i); ++k) {
      const Box& b = index.boxes(i)[k];
      if (!b.iscrowd)
        preds.push_back({(b.cx - b.w / 2) * w, (b.cy - b.h / 2) * h, (b.cx + b.w / 2) * w, (b.cy + b.h / 2) * h, 0.9, 0});
    }
    single.AddImage(i, preds);
    multi.AddImage(i, preds);
  }
  const DatasetEvalResult s = single.Finish(), m = multi.Finish();
  ASSERT_EQ(s.metrics.classes.size(), 1u);
  EXPECT_GT(s.metrics.map50, 0.99);
  EXPECT_GT(s.coco[1], 0.99);  // COCO AP50, every annotation under the first category
  EXPECT_LT(m.metrics.map50, 0.5);
  EXPECT_LT(m.coco[1], 0.5);
}

}  // namespace
}  // namespace ffyolo
