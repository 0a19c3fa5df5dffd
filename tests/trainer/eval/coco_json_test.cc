#include "ffyolo/coco_json.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/test_env.h"

namespace ffyolo {
namespace {

// The message, printed when it lacks the expected part.
#define EXPECT_CONTAINS(message, part) \
  EXPECT_NE(std::string(message).find(part), std::string::npos) << (message)

class CocoJsonTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ / name;
    EXPECT_TRUE(testing::WriteStringToFile(path, text));
    return path;
  }

  testing::ScratchDir dir_{"coco_json"};
};

TEST_F(CocoJsonTest, LoadsGroundTruth) {
  const std::string path = Write("gt.json", R"({
    "images": [{"id": 3, "file_name": "a.jpg"}, {"id": 1}],
    "annotations": [
      {"id": 10, "image_id": 3, "category_id": 18, "bbox": [1.5, 2, 30, 40.25], "area": 900.5, "iscrowd": 0},
      {"id": 11, "image_id": 1.0, "category_id": 1, "bbox": [0, 0, 5, 5], "area": 20, "iscrowd": 1},
      {"id": 12, "image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 5], "area": 25}
    ],
    "categories": [{"id": 1, "name": "person"}, {"id": 18, "name": "dog"}]
  })");
  CocoGroundTruth gt;
  const ffr::Status s = LoadCocoGroundTruth(path, &gt);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(gt.image_ids, (std::vector<int64_t>{3, 1}));
  ASSERT_EQ(gt.annotations.size(), 3u);
  const CocoAnnotation& a = gt.annotations[0];
  EXPECT_EQ(a.image_id, 3);
  EXPECT_EQ(a.category_id, 18);
  EXPECT_EQ(a.bbox, (std::array<double, 4>{1.5, 2, 30, 40.25}));
  EXPECT_EQ(a.area, 900.5);
  EXPECT_FALSE(a.iscrowd);
  EXPECT_EQ(gt.annotations[1].image_id, 1);
  EXPECT_TRUE(gt.annotations[1].iscrowd);
  EXPECT_FALSE(gt.annotations[2].iscrowd);  // absent means 0
}

TEST_F(CocoJsonTest, LoadsDetections) {
  const std::string path = Write("dets.json", R"([
    {"image_id": 3, "category_id": 18, "bbox": [1, 2, 3, 4], "score": 0.25},
    {"image_id": 1, "category_id": 1, "bbox": [5.5, 6, 7, 8], "score": 1}
  ])");
  std::vector<CocoDetection> dets;
  const ffr::Status s = LoadCocoDetections(path, &dets);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(dets.size(), 2u);
  EXPECT_EQ(dets[0].image_id, 3);
  EXPECT_EQ(dets[0].category_id, 18);
  EXPECT_EQ(dets[0].bbox, (std::array<double, 4>{1, 2, 3, 4}));
  EXPECT_EQ(dets[0].score, 0.25);
  EXPECT_EQ(dets[1].bbox[0], 5.5);
  EXPECT_EQ(dets[1].score, 1.0);
}

TEST_F(CocoJsonTest, MissingFileNamesTheFile) {
  CocoGroundTruth gt;
  const std::string path = dir_ / "absent.json";
  const ffr::Status s = LoadCocoGroundTruth(path, &gt);
  ASSERT_FALSE(s.ok());
  EXPECT_CONTAINS(s.message(), path);
}

TEST_F(CocoJsonTest, MalformedJsonNamesTheFile) {
  const std::string path = Write("broken.json", R"({"images": [}, )");
  CocoGroundTruth gt;
  ffr::Status s = LoadCocoGroundTruth(path, &gt);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_CONTAINS(s.message(), path);
  EXPECT_CONTAINS(s.message(), "not valid JSON");

  std::vector<CocoDetection> dets;
  s = LoadCocoDetections(path, &dets);
  ASSERT_FALSE(s.ok());
  EXPECT_CONTAINS(s.message(), path);
}

// The packer's COCO reader had this bug (found by coco_json_fuzz), and so did
// this one: nlohmann throws out_of_range, not parse_error, for 1e400.
TEST_F(CocoJsonTest, NumberPastDoubleRangeIsNotValidJson) {
  const std::string path = Write("huge.json", R"({"images": [{"id": 1e400}], "annotations": []})");
  CocoGroundTruth gt;
  const ffr::Status s = LoadCocoGroundTruth(path, &gt);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_CONTAINS(s.message(), path + ": not valid JSON");
}

TEST_F(CocoJsonTest, MissingListsAreReported) {
  const std::string path = Write("no_annotations.json", R"({"images": []})");
  CocoGroundTruth gt;
  const ffr::Status s = LoadCocoGroundTruth(path, &gt);
  ASSERT_FALSE(s.ok());
  EXPECT_CONTAINS(s.message(), path);
  EXPECT_CONTAINS(s.message(), "\"annotations\"");
}

TEST_F(CocoJsonTest, BadAnnotationNamesEntryAndField) {
  const std::string path = Write("gt.json", R"({
    "images": [{"id": 1}],
    "annotations": [
      {"id": 5, "image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 5], "area": 25},
      {"id": 7, "image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 5]}
    ]
  })");
  CocoGroundTruth gt;
  ffr::Status s = LoadCocoGroundTruth(path, &gt);
  ASSERT_FALSE(s.ok());
  EXPECT_CONTAINS(s.message(), path + ": annotations[1] (id 7): missing \"area\"");

  const std::string bad_box = Write("bad_box.json", R"({
    "images": [{"id": 1}],
    "annotations": [{"id": 9, "image_id": 1, "category_id": 1, "bbox": [0, 0, 5], "area": 25}]
  })");
  s = LoadCocoGroundTruth(bad_box, &gt);
  ASSERT_FALSE(s.ok());
  EXPECT_CONTAINS(s.message(), "annotations[0] (id 9)");
  EXPECT_CONTAINS(s.message(), "\"bbox\"");

  const std::string bad_id = Write("bad_id.json", R"({"images": [{"id": "x"}], "annotations": []})");
  s = LoadCocoGroundTruth(bad_id, &gt);
  ASSERT_FALSE(s.ok());
  EXPECT_CONTAINS(s.message(), "images[0]");
  EXPECT_CONTAINS(s.message(), "integer");
}

TEST_F(CocoJsonTest, BadDetectionNamesEntryAndField) {
  std::vector<CocoDetection> dets;
  const std::string not_list = Write("obj.json", R"({"annotations": []})");
  ffr::Status s = LoadCocoDetections(not_list, &dets);
  ASSERT_FALSE(s.ok());
  EXPECT_CONTAINS(s.message(), not_list);
  EXPECT_CONTAINS(s.message(), "list");

  const std::string no_score = Write("no_score.json", R"([
    {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5},
    {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5},
    {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}
  ])");
  s = LoadCocoDetections(no_score, &dets);
  ASSERT_FALSE(s.ok());
  EXPECT_CONTAINS(s.message(), no_score + ": detection 2: missing \"score\"");

  const std::string string_score = Write("string_score.json", R"([
    {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": "high"}
  ])");
  s = LoadCocoDetections(string_score, &dets);
  ASSERT_FALSE(s.ok());
  EXPECT_CONTAINS(s.message(), "detection 0: \"score\" is \"high\", expected a number");
}

}  // namespace
}  // namespace ffyolo
