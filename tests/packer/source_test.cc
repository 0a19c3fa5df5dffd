#include "ffyolo/source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "dataset/tiny_images.h"
#include "ffyolo/image_check.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ScratchDir;

void WriteFile(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  ASSERT_TRUE(testing::WriteStringToFile(path, content)) << path;
}

ScanOptions Layout(SourceLayout layout) {
  ScanOptions options;
  options.layout = layout;
  return options;
}

size_t CountBoxes(const SourceSplit& split, bool crowd) {
  size_t n = 0;
  for (const SourceImage& image : split.images)
    for (const Box& box : image.info.boxes) n += box.iscrowd == crowd;
  return n;
}

// A path over PATH_MAX said "is not a directory"; each case now says what it is.
TEST(ScanSourceTest, ARootThatIsNoDirectorySaysWhatItIs) {
  ScratchDir dir("source_root_kinds");
  std::ofstream(dir / "file") << "x";
  SourceDataset ds;
  const std::string too_long = dir.path() + "/" + std::string(5000, 'a');
  for (const auto& [root, says] : std::initializer_list<std::pair<std::string, std::string>>{
           {dir / "nope", "dataset root " + dir / "nope" + " does not exist"},
           {dir / "file", "dataset root " + dir / "file" + " is not a directory"},
           {too_long, "dataset root " + too_long + ": File name too long"}}) {
    const Status s = ScanSource(root, ScanOptions(), &ds);
    EXPECT_FALSE(s.ok()) << says;
    EXPECT_THAT(s.message(), HasSubstr(says));
  }
}

// ---------------------------------------------------------------- coco128

struct NamesYaml {
  std::vector<std::string> names;
  std::vector<int> category_ids;
};

NamesYaml ReadNamesYaml(const std::string& coco128) {
  const YAML::Node yaml = YAML::LoadFile(coco128 + "/names.yaml");
  NamesYaml out;
  for (size_t k = 0; k < yaml["names"].size(); ++k) out.names.push_back(yaml["names"][k].as<std::string>());
  out.category_ids = yaml["category_ids"].as<std::vector<int>>();
  return out;
}

TEST(Coco128Test, JsonScan) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  SourceDataset ds;
  ASSERT_TRUE(ScanSource(coco128, ScanOptions(), &ds).ok());
  EXPECT_EQ(ds.layout, SourceLayout::kCocoJson);  // both layouts are there: auto prefers the JSON
  ASSERT_EQ(ds.splits.size(), 1u);
  const SourceSplit& split = ds.splits[0];
  EXPECT_EQ(split.name, "train2017");
  ASSERT_EQ(split.images.size(), 128u);
  EXPECT_EQ(CountBoxes(split, false) + CountBoxes(split, true), 939u);
  EXPECT_EQ(CountBoxes(split, true), 10u);
  EXPECT_TRUE(split.orphan_labels.empty());

  const NamesYaml yaml = ReadNamesYaml(coco128);
  EXPECT_EQ(ds.class_names, yaml.names);
  EXPECT_EQ(ds.category_ids, yaml.category_ids);

  for (size_t i = 0; i < split.images.size(); ++i) {
    const SourceImage& image = split.images[i];
    EXPECT_TRUE(image.problem.ok()) << image.problem.ToString();
    EXPECT_FALSE(image.area_from_box);
    EXPECT_TRUE(fs::is_regular_file(image.path)) << image.path;
    EXPECT_GT(image.info.width, 0u);
    if (i > 0) {
      EXPECT_LT(split.images[i - 1].info.image_id, image.info.image_id);
    }
  }
  // 000000000009.jpg: id 9, 640x480, 8 boxes (README and its label file).
  EXPECT_EQ(split.images[0].info.file_name, "000000000009.jpg");
  EXPECT_EQ(split.images[0].info.image_id, 9);
  EXPECT_EQ(split.images[0].info.width, 640u);
  EXPECT_EQ(split.images[0].info.height, 480u);
  EXPECT_EQ(split.images[0].info.boxes.size(), 8u);
}

TEST(Coco128Test, YoloScan) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  SourceDataset ds;
  ASSERT_TRUE(ScanSource(coco128, Layout(SourceLayout::kYoloTxt), &ds).ok());
  EXPECT_EQ(ds.layout, SourceLayout::kYoloTxt);
  ASSERT_EQ(ds.splits.size(), 1u);
  const SourceSplit& split = ds.splits[0];
  ASSERT_EQ(split.images.size(), 128u);
  EXPECT_EQ(CountBoxes(split, false), 941u - 12u);  // the 12 rows of the orphans are not anyone's
  EXPECT_EQ(CountBoxes(split, true), 0u);
  ASSERT_EQ(split.orphan_labels.size(), 2u);
  EXPECT_THAT(split.orphan_labels[0], EndsWith("labels/train2017/000000000656.txt"));
  EXPECT_THAT(split.orphan_labels[1], EndsWith("labels/train2017/000000000659.txt"));

  const NamesYaml yaml = ReadNamesYaml(coco128);
  EXPECT_EQ(ds.class_names, yaml.names);
  EXPECT_EQ(ds.category_ids, yaml.category_ids);

  std::vector<std::string> background;
  for (const SourceImage& image : split.images) {
    EXPECT_TRUE(image.problem.ok()) << image.problem.ToString();
    EXPECT_TRUE(image.area_from_box);
    EXPECT_EQ(image.info.width, 0u);  // only the image knows
    EXPECT_EQ(image.info.image_id, std::stoll(fs::path(image.info.file_name).stem().string()));
    if (image.label_path.empty()) {
      EXPECT_TRUE(image.info.boxes.empty());
      background.push_back(image.info.file_name);
    }
  }
  EXPECT_THAT(background, ElementsAre("000000000250.jpg", "000000000508.jpg"));
}

TEST(Coco128Test, JsonBoxesEqualYoloBoxes) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  SourceDataset json, yolo;
  ASSERT_TRUE(ScanSource(coco128, Layout(SourceLayout::kCocoJson), &json).ok());
  ASSERT_TRUE(ScanSource(coco128, Layout(SourceLayout::kYoloTxt), &yolo).ok());
  std::map<std::string, SourceImage> yolo_by_name;
  for (const SourceImage& image : yolo.splits[0].images) yolo_by_name.emplace(image.info.file_name, image);
  ASSERT_EQ(yolo_by_name.size(), json.splits[0].images.size());

  for (const SourceImage& image : json.splits[0].images) {
    ASSERT_TRUE(yolo_by_name.count(image.info.file_name)) << image.info.file_name;
    const SourceImage& other = yolo_by_name.at(image.info.file_name);
    EXPECT_EQ(other.info.image_id, image.info.image_id);
    std::vector<Box> expected;
    for (const Box& box : image.info.boxes)
      if (!box.iscrowd) expected.push_back(box);
    ASSERT_EQ(other.info.boxes.size(), expected.size()) << image.info.file_name;
    std::vector<bool> used(expected.size(), false);
    for (const Box& box : other.info.boxes) {
      bool found = false;
      for (size_t k = 0; k < expected.size() && !found; ++k) {
        const Box& e = expected[k];
        found = !used[k] && e.class_index == box.class_index && std::fabs(e.cx - box.cx) < 1e-5 &&
                std::fabs(e.cy - box.cy) < 1e-5 && std::fabs(e.w - box.w) < 1e-5 && std::fabs(e.h - box.h) < 1e-5;
        if (found) used[k] = true;
      }
      EXPECT_TRUE(found) << image.info.file_name << ": YOLO box class " << box.class_index << " at " << box.cx
                         << "," << box.cy << " has no JSON twin";
    }
  }
}

TEST(Coco128Test, UnknownSplitIsNamed) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  ScanOptions options;
  options.splits = {"val2017"};
  SourceDataset ds;
  const Status s = ScanSource(coco128, options, &ds);
  ASSERT_TRUE(s.IsNotFound());
  EXPECT_THAT(s.message(), HasSubstr("split 'val2017' not found"));
  EXPECT_THAT(s.message(), HasSubstr("instances_val2017.json"));
  EXPECT_THAT(s.message(), HasSubstr("found: train2017"));
}

TEST(Coco128Test, ScannedImagesPassTheImageChecks) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  SourceDataset ds;
  ASSERT_TRUE(ScanSource(coco128, ScanOptions(), &ds).ok());
  ImageInspector inspector;
  size_t gray = 0;
  for (SourceImage image : ds.splits[0].images) {
    ImageFacts facts;
    ASSERT_TRUE(inspector.Inspect(testing::ReadFileToString(image.path), image.path, true, &facts).ok());
    ASSERT_TRUE(ApplyImageFacts(facts, image.path, /*annotations_viewed=*/true, &image.info).ok()) << image.path;
    std::vector<std::string> warnings;
    ASSERT_TRUE(CheckBoxes(&image.info, ds.class_names.size(), image.path, &warnings).ok()) << image.path;
    gray += facts.components == 1;
  }
  EXPECT_EQ(gray, 1u);  // 000000000086.jpg
}

// ---------------------------------------------------------------- layouts

TEST(ScanSourceTest, NoLayoutSaysWhatWasLookedFor) {
  ScratchDir dir("empty");
  SourceDataset ds;
  const Status s = ScanSource(dir.path(), ScanOptions(), &ds);
  ASSERT_TRUE(s.IsNotFound());
  EXPECT_THAT(s.message(), HasSubstr(dir.path()));
  EXPECT_THAT(s.message(), HasSubstr("annotations/instances_<split>.json"));
  EXPECT_THAT(s.message(), HasSubstr("labels/<split>/"));
}

// ---------------------------------------------------------------- COCO JSON

// A tiny COCO tree: root/annotations/instances_train.json, root/images/train/.
class CocoJsonTest : public ::testing::Test {
 protected:
  CocoJsonTest() : dir_("coco") {}

  std::string JsonPath() const { return dir_ / "annotations/instances_train.json"; }

  Status Scan(const std::string& json) {
    WriteFile(JsonPath(), json);
    fs::create_directories(dir_ / "images/train");
    return ScanSource(dir_.path(), ScanOptions(), &ds_);
  }

  ScratchDir dir_;
  SourceDataset ds_;
};

const char kGoodJson[] = R"({
  "info": {"year": 2017}, "licenses": [],
  "images": [{"id": 7, "file_name": "7.jpg", "width": 40, "height": 30},
             {"id": 2, "file_name": "2.jpg", "width": 20, "height": 10}],
  "annotations": [
    {"id": 100, "image_id": 7, "category_id": 5, "bbox": [4, 3, 8, 6], "area": 40.5, "iscrowd": 0,
     "segmentation": [[4, 3, 12, 3, 12, 9]]},
    {"id": 101, "image_id": 2, "category_id": 3, "bbox": [0, 0, 20, 10], "area": 150, "iscrowd": 1,
     "segmentation": {"counts": [0, 200], "size": [10, 20]}},
    {"id": 102, "image_id": 7, "category_id": 3, "bbox": [10, 10, 0, 5], "area": 0, "iscrowd": 0}],
  "categories": [{"id": 5, "name": "cat"}, {"id": 3, "name": "dog"}]
})";

// A data YAML beside a COCO JSON tree (yolo-synth --yolo writes both): its lists are recorded; the
// classes are the JSON's, so a YAML naming others is refused when given and warned about when found.
TEST_F(CocoJsonTest, ADataYamlBesideTheJsonGivesItsListsNotItsNames) {
  WriteFile(dir_ / "data.yaml", "train: images/train\nval: images/train\nnames: [dog, cat]\n");
  ASSERT_TRUE(Scan(kGoodJson).ok());
  EXPECT_THAT(ds_.train_splits, ElementsAre("train"));
  EXPECT_THAT(ds_.val_splits, ElementsAre("train"));

  WriteFile(dir_ / "data.yaml", "train: images/train\nnames: [a, b, c]\n");
  ASSERT_TRUE(Scan(kGoodJson).ok());
  EXPECT_TRUE(ds_.train_splits.empty());
  EXPECT_THAT(ds_.warnings, Contains(HasSubstr("class names are not the COCO JSON's")));
  ScanOptions given;
  given.data_yaml = dir_ / "data.yaml";
  const Status s = ScanSource(dir_.path(), given, &ds_);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("its 3 class names are not the COCO JSON's 2 (dog, cat), which are packed"));
}

TEST_F(CocoJsonTest, ConvertsTheCocoConventions) {
  ASSERT_TRUE(Scan(kGoodJson).ok());
  EXPECT_EQ(ds_.layout, SourceLayout::kCocoJson);
  EXPECT_THAT(ds_.class_names, ElementsAre("dog", "cat"));  // sorted by category id
  EXPECT_THAT(ds_.category_ids, ElementsAre(3, 5));
  ASSERT_EQ(ds_.splits.size(), 1u);
  const SourceSplit& split = ds_.splits[0];
  EXPECT_EQ(split.name, "train");
  ASSERT_EQ(split.images.size(), 2u);

  const SourceImage& first = split.images[0];  // sorted by image id
  EXPECT_EQ(first.info.image_id, 2);
  EXPECT_EQ(first.path, dir_.path() + "/images/train/2.jpg");
  ASSERT_EQ(first.info.boxes.size(), 1u);
  EXPECT_TRUE(first.info.boxes[0].iscrowd);  // crowd boxes are kept
  EXPECT_EQ(first.info.boxes[0].class_index, 0);
  EXPECT_FLOAT_EQ(first.info.boxes[0].w, 1.0f);

  const SourceImage& second = split.images[1];
  EXPECT_EQ(second.info.image_id, 7);
  EXPECT_EQ(second.info.file_name, "7.jpg");
  EXPECT_EQ(second.info.width, 40u);
  EXPECT_EQ(second.info.height, 30u);
  ASSERT_EQ(second.info.boxes.size(), 1u);  // the empty bbox of 102 is dropped
  const Box& box = second.info.boxes[0];
  EXPECT_EQ(box.class_index, 1);
  EXPECT_FALSE(box.iscrowd);
  EXPECT_FLOAT_EQ(box.cx, (4 + 4) / 40.0f);
  EXPECT_FLOAT_EQ(box.cy, (3 + 3) / 30.0f);
  EXPECT_FLOAT_EQ(box.w, 8 / 40.0f);
  EXPECT_FLOAT_EQ(box.h, 6 / 30.0f);
  EXPECT_FLOAT_EQ(box.area, 40.5f);
  ASSERT_EQ(ds_.warnings.size(), 1u) << ::testing::PrintToString(ds_.warnings);
  EXPECT_THAT(ds_.warnings[0], HasSubstr("instances_train.json: 1 annotations have a bbox without width or height"));

  // pycocotools' ground truth: every annotation as the JSON gives it, the empty one included.
  EXPECT_TRUE(split.images.has_eval_boxes());
  ASSERT_EQ(first.eval_boxes.size(), 1u);
  EXPECT_TRUE(first.eval_boxes[0].iscrowd);
  ASSERT_EQ(second.eval_boxes.size(), 2u);
  EXPECT_EQ(second.eval_boxes[0], (EvalBox{1, false, 4, 3, 8, 6, 40.5}));
  EXPECT_EQ(second.eval_boxes[1], (EvalBox{0, false, 10, 10, 0, 5, 0}));
}

TEST_F(CocoJsonTest, TruncatedJsonNamesFileAndPosition) {
  const std::string json = kGoodJson;
  const Status s = Scan(json.substr(0, json.size() / 2));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(JsonPath()));
  EXPECT_THAT(s.message(), HasSubstr("malformed or truncated JSON at byte"));
}

// Found by coco_json_fuzz: nlohmann throws out_of_range, not parse_error, for a
// number past double's range, and it ended the process (std::terminate).
TEST_F(CocoJsonTest, NumberPastDoubleRangeIsMalformedJson) {
  const Status s = Scan(R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 1e400, "height": 4}],
                            "annotations": [], "categories": [{"id": 1, "name": "a"}]})");
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("instances_train.json: malformed JSON:"));
  EXPECT_THAT(s.message(), HasSubstr("1e400"));
}

// The segmentation polygons (most of a COCO file) are skipped, not read, but a
// malformed one still fails the scan with the place of the error.
TEST_F(CocoJsonTest, SegmentationIsSkippedButValidated) {
  std::string polygon;
  for (int k = 0; k < 200000; ++k) polygon += (k ? ", " : "") + std::to_string(k % 40) + ".25";
  const std::string deep = std::string(5000, '[') + "1e-5" + std::string(5000, ']');
  const std::string json = R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 40, "height": 40}],
    "categories": [{"id": 1, "name": "a"}],
    "annotations": [{"id": 5, "segmentation": [[)" + polygon + R"(]], "image_id": 1, "category_id": 1,
                     "bbox": [1, 2, 10, 10], "extra": {"rle": )" + deep + R"(}}]})";
  ASSERT_TRUE(Scan(json).ok()) << Scan(json).ToString();
  ASSERT_EQ(ds_.splits[0].images[0].info.boxes.size(), 1u);
  EXPECT_FLOAT_EQ(ds_.splits[0].images[0].info.boxes[0].cx, 6 / 40.0f);

  const Status comma = Scan(R"({"images": [], "categories": [{"id": 1, "name": "a"}],
    "annotations": [{"id": 5, "segmentation": [[1, 2, 3,]], "image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4]}]})");
  EXPECT_TRUE(comma.IsCorruption());
  EXPECT_THAT(comma.message(), HasSubstr(JsonPath() + ": malformed or truncated JSON at byte offset 111 (line 2, "
                                         "column 57): a trailing comma before ']'"));
  const Status overflow = Scan(R"({"images": [], "categories": [{"id": 1, "name": "a"}],
    "annotations": [{"id": 5, "segmentation": [[1, 2e999]], "image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4]}]})");
  EXPECT_THAT(overflow.message(), HasSubstr(JsonPath() + ": malformed JSON: number overflow parsing '2e999'"));
}

// Escapes are decoded in names and keys alike; numbers may be written as floats.
TEST_F(CocoJsonTest, EscapesAndNumberForms) {
  ASSERT_TRUE(Scan(R"({"images": [{"id": 1.0, "file\u005fname": "caf\u00e9 \"1\".jpg", "width": 4e1, "height": 30}],
                       "categories": [{"id": 1, "name": "tab\tbed"}],
                       "annotations": [{"id": 5, "image_id": 1, "category_id": 1, "bbox": [1e0, 2.5, 10, 1E1],
                                        "iscrowd": true}]})")
                  .ok());
  const SourceImage& image = ds_.splits[0].images[0];
  EXPECT_EQ(image.info.file_name, "caf\xC3\xA9 \"1\".jpg");
  EXPECT_EQ(image.info.width, 40u);
  EXPECT_THAT(ds_.class_names, ElementsAre("tab\tbed"));
  ASSERT_EQ(image.info.boxes.size(), 1u);
  EXPECT_TRUE(image.info.boxes[0].iscrowd);
  EXPECT_FLOAT_EQ(image.info.boxes[0].h, 10 / 30.0f);

  const Status fraction = Scan(R"({"images": [{"id": 1.5, "file_name": "1.jpg", "width": 4, "height": 4}],
                                   "annotations": [], "categories": [{"id": 1, "name": "a"}]})");
  EXPECT_THAT(fraction.message(), HasSubstr(JsonPath() + ": images[0] has no integer \"id\""));
  const Status crowd = Scan(R"({"images": [], "categories": [{"id": 1, "name": "a"}],
    "annotations": [{"id": 5, "image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "iscrowd": 2}]})");
  EXPECT_THAT(crowd.message(), HasSubstr("annotations[0] (id 5) has an \"iscrowd\" other than 0 or 1"));
  const Status bbox = Scan(R"({"images": [], "categories": [{"id": 1, "name": "a"}],
    "annotations": [{"id": 5, "image_id": 1, "category_id": 1, "bbox": [1, 2, "3", 4]}]})");
  EXPECT_THAT(bbox.message(), HasSubstr("annotations[0] (id 5) has a non-numeric \"bbox\" value"));
}

// Duplicate keys behave as they did with nlohmann::json: within an entry the last
// one wins; a repeated top-level array adds its entries, and the last copy is
// the one that must be an array.
TEST_F(CocoJsonTest, DuplicateKeys) {
  ASSERT_TRUE(Scan(R"({"images": [{"id": 1, "file_name": "1.jpg", "width": "x", "width": 40, "height": 40}],
                       "categories": [{"id": 1, "name": "a"}],
                       "annotations": [{"id": 5, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1],
                                        "bbox": [1, 2, 10, 10]}],
                       "images": [{"id": 2, "file_name": "2.jpg", "width": 8, "height": 8}]})")
                  .ok());
  const SourceSplit& split = ds_.splits[0];
  ASSERT_EQ(split.images.size(), 2u);
  EXPECT_EQ(split.images[0].info.width, 40u);
  ASSERT_EQ(split.images[0].info.boxes.size(), 1u);
  EXPECT_FLOAT_EQ(split.images[0].info.boxes[0].w, 10 / 40.0f);
  EXPECT_EQ(split.images[1].info.file_name, "2.jpg");

  const Status last_wins = Scan(R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 40, "width": null,
                                                "height": 40}], "annotations": [], "categories": [{"id": 1, "name": "a"}]})");
  EXPECT_THAT(last_wins.message(), HasSubstr("images[0] (id 1) has no positive integer \"width\""));
  const Status not_array = Scan(R"({"images": [], "annotations": [], "categories": [{"id": 1, "name": "a"}],
                                    "images": 3})");
  EXPECT_THAT(not_array.message(), HasSubstr(JsonPath() + ": \"images\" is not an array"));
  const Status second_index = Scan(R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 4, "height": 4}],
                                       "annotations": [], "categories": [{"id": 1, "name": "a"}],
                                       "images": [{"id": 2}]})");
  EXPECT_THAT(second_index.message(), HasSubstr(JsonPath() + ": images[1] (id 2) has no \"file_name\""));
}

// A malformed entry is reported only if the rest of the file is well-formed JSON
// (the syntax error wins), and the top level must be an object.
TEST_F(CocoJsonTest, SyntaxErrorsComeFirst) {
  const Status both = Scan(R"({"images": [{"file_name": "1.jpg"}], "annotations": [], "categories": [], "x": tru})");
  EXPECT_THAT(both.message(), HasSubstr("malformed or truncated JSON at byte offset"));
  EXPECT_THAT(both.message(), HasSubstr("expected 'true'"));
  const Status top = Scan(R"([{"images": [], "annotations": [], "categories": []}])");
  EXPECT_THAT(top.message(), HasSubstr(JsonPath() + ": the top level is not a JSON object"));
  const Status entry = Scan(R"({"images": [7], "annotations": [], "categories": []})");
  EXPECT_THAT(entry.message(), HasSubstr(JsonPath() + ": images[0] is not an object"));
}

TEST_F(CocoJsonTest, MissingImagesArray) {
  const Status s = Scan(R"({"annotations": [], "categories": [{"id": 1, "name": "a"}]})");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(JsonPath() + ": has no \"images\" array"));
}

TEST_F(CocoJsonTest, MissingFieldNamesTheEntry) {
  const Status s = Scan(R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 4, "height": 4},
                                       {"id": 9, "file_name": "9.jpg", "height": 4}],
                            "annotations": [], "categories": [{"id": 1, "name": "a"}]})");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(JsonPath() + ": images[1] (id 9)"));
  EXPECT_THAT(s.message(), HasSubstr("\"width\""));

  const Status bbox = Scan(R"({"images": [], "categories": [{"id": 1, "name": "a"}],
                               "annotations": [{"id": 5, "image_id": 1, "category_id": 1, "bbox": [1, 2]}]})");
  ASSERT_FALSE(bbox.ok());
  EXPECT_THAT(bbox.message(), HasSubstr("annotations[0] (id 5) has no \"bbox\""));
}

TEST_F(CocoJsonTest, AnnotationOfUnknownImageIsAnOrphan) {
  ASSERT_TRUE(Scan(R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 4, "height": 4}],
                       "categories": [{"id": 1, "name": "a"}],
                       "annotations": [{"id": 5, "image_id": 99, "category_id": 1, "bbox": [0, 0, 1, 1]}]})")
                  .ok());
  const SourceSplit& split = ds_.splits[0];
  ASSERT_EQ(split.orphan_labels.size(), 1u);
  EXPECT_THAT(split.orphan_labels[0], HasSubstr("annotation id 5 (image_id 99 is not in \"images\")"));
  EXPECT_TRUE(split.images[0].info.boxes.empty());
}

TEST_F(CocoJsonTest, DuplicateAnnotationsArePackedAndWarnedAbout) {
  ASSERT_TRUE(Scan(R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 40, "height": 40}],
                       "categories": [{"id": 1, "name": "a"}],
                       "annotations": [{"id": 5, "image_id": 1, "category_id": 1, "bbox": [1, 2, 10, 10]},
                                       {"id": 6, "image_id": 1, "category_id": 1, "bbox": [1, 2, 10, 11]},
                                       {"id": 7, "image_id": 1, "category_id": 1, "bbox": [1, 2, 10, 10]}]})")
                  .ok());
  EXPECT_EQ(ds_.splits[0].images[0].info.boxes.size(), 3u);
  ASSERT_EQ(ds_.warnings.size(), 1u) << ::testing::PrintToString(ds_.warnings);
  EXPECT_THAT(ds_.warnings[0], HasSubstr("instances_train.json: 1 annotations repeat an earlier one"));
  EXPECT_THAT(ds_.warnings[0], HasSubstr("(the first: id 7)"));
}

// Image entries naming one file: each packed as a sample, with a warning naming the first such file (in
// image id order, the packing order) and both ids.
TEST_F(CocoJsonTest, ImagesNamingOneFileArePackedAndWarnedAbout) {
  ASSERT_TRUE(Scan(R"({"images": [{"id": 9, "file_name": "b.jpg", "width": 4, "height": 4},
                                  {"id": 2, "file_name": "a.jpg", "width": 4, "height": 4},
                                  {"id": 4, "file_name": "b.jpg", "width": 4, "height": 4},
                                  {"id": 7, "file_name": "a.jpg", "width": 4, "height": 4}],
                       "categories": [{"id": 1, "name": "a"}], "annotations": []})")
                  .ok());
  EXPECT_EQ(ds_.splits[0].images.size(), 4u);
  ASSERT_EQ(ds_.warnings.size(), 1u) << ::testing::PrintToString(ds_.warnings);
  EXPECT_THAT(ds_.warnings[0], HasSubstr("instances_train.json: 2 images name the file of an earlier image "
                                         "(the first: 'a.jpg', image ids 2 and 7)"));
}

// pycocotools keeps one annotation per id, so evaluation could not be COCO's.
TEST_F(CocoJsonTest, RepeatedAnnotationIdIsRefused) {
  const Status s = Scan(R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 40, "height": 40}],
                       "categories": [{"id": 1, "name": "a"}],
                       "annotations": [{"id": 5, "image_id": 1, "category_id": 1, "bbox": [1, 2, 10, 10]},
                                       {"id": 5, "image_id": 1, "category_id": 1, "bbox": [3, 2, 10, 10]}]})");
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("instances_train.json: annotation id 5 appears twice"));
}

// A stranger's JSON must not make the packer read files outside the image folder.
TEST_F(CocoJsonTest, FileNameLeadingOutOfTheImageFolderIsAnImageProblem) {
  ASSERT_TRUE(Scan(R"({"images": [{"id": 1, "file_name": "../../../etc/passwd", "width": 4, "height": 4},
                                  {"id": 2, "file_name": "/etc/passwd", "width": 4, "height": 4},
                                  {"id": 3, "file_name": "sub/3.jpg", "width": 4, "height": 4}],
                       "categories": [{"id": 1, "name": "a"}], "annotations": []})")
                  .ok());
  const SourceSplit& split = ds_.splits[0];
  ASSERT_EQ(split.images.size(), 3u);
  EXPECT_THAT(split.images[0].problem.message(), HasSubstr("image id 1: file_name '../../../etc/passwd' leads outside"));
  EXPECT_THAT(split.images[1].problem.message(), HasSubstr("image id 2: file_name '/etc/passwd' leads outside"));
  EXPECT_TRUE(split.images[2].problem.ok()) << split.images[2].problem.ToString();
}

TEST_F(CocoJsonTest, UnknownCategoryIsAnImageProblem) {
  ASSERT_TRUE(Scan(R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 4, "height": 4},
                                  {"id": 2, "file_name": "2.jpg", "width": 4, "height": 4}],
                       "categories": [{"id": 1, "name": "a"}],
                       "annotations": [{"id": 5, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]},
                                       {"id": 6, "image_id": 1, "category_id": 12, "bbox": [0, 0, 1, 1]},
                                       {"id": 7, "image_id": 2, "category_id": 1, "bbox": [0, 0, 1, 1]}]})")
                  .ok());
  const SourceSplit& split = ds_.splits[0];
  EXPECT_FALSE(split.images[0].problem.ok());
  EXPECT_THAT(split.images[0].problem.message(), HasSubstr("annotation id 6 (image 1.jpg): unknown category_id 12"));
  EXPECT_TRUE(split.images[0].info.boxes.empty());
  EXPECT_TRUE(split.images[1].problem.ok());
  EXPECT_EQ(split.images[1].info.boxes.size(), 1u);
}

// Found while writing coco_json_fuzz (no sanitizer flags it): finite JSON numbers past float's range
// were packed as infinite boxes and areas.
TEST_F(CocoJsonTest, BboxOrAreaPastFloatRangeIsAnImageProblem) {
  ASSERT_TRUE(Scan(R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 4, "height": 4},
                                  {"id": 2, "file_name": "2.jpg", "width": 4, "height": 4},
                                  {"id": 3, "file_name": "3.jpg", "width": 4, "height": 4}],
                       "categories": [{"id": 1, "name": "a"}],
                       "annotations": [{"id": 5, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1e300, 1]},
                                       {"id": 6, "image_id": 2, "category_id": 1, "bbox": [0, 0, 1, 1],
                                        "area": -1e39},
                                       {"id": 7, "image_id": 3, "category_id": 1, "bbox": [0, 0, 1, 1]}]})")
                  .ok());
  const SourceSplit& split = ds_.splits[0];
  EXPECT_THAT(split.images[0].problem.message(), HasSubstr("annotation id 5 (image 1.jpg): bbox or area out of range"));
  EXPECT_THAT(split.images[1].problem.message(), HasSubstr("annotation id 6 (image 2.jpg): bbox or area out of range"));
  EXPECT_TRUE(split.images[0].info.boxes.empty());
  EXPECT_TRUE(split.images[2].problem.ok());
  EXPECT_EQ(split.images[2].info.boxes.size(), 1u);
}

TEST_F(CocoJsonTest, ImageSizeDifferentFromTheJsonIsCaught) {
  ASSERT_TRUE(Scan(R"({"images": [{"id": 1, "file_name": "1.jpg", "width": 30, "height": 40}],
                       "categories": [{"id": 1, "name": "a"}], "annotations": []})")
                  .ok());
  WriteFile(dir_ / "images/train/1.jpg", testing::MakeJpeg(40, 30, 3));
  SourceImage image = ds_.splits[0].images[0];
  ImageInspector inspector;
  ImageFacts facts;
  ASSERT_TRUE(inspector.Inspect(testing::ReadFileToString(image.path), image.path, false, &facts).ok());
  const Status s = ApplyImageFacts(facts, image.path, /*annotations_viewed=*/true, &image.info);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(image.path + ": the image is 40x30 but the annotations say 30x40"));
}

// ---------------------------------------------------------------- YOLO txt

// A tiny Ultralytics tree: root/images/train/*.jpg, root/labels/train/*.txt.
class YoloTxtTest : public ::testing::Test {
 protected:
  YoloTxtTest() : dir_("yolo") {}

  void AddImage(const std::string& name) { WriteFile(dir_ / ("images/train/" + name), jpeg_); }
  void AddLabel(const std::string& stem, const std::string& rows) {
    WriteFile(dir_ / ("labels/train/" + stem + ".txt"), rows);
  }
  std::string LabelPath(const std::string& stem) const { return dir_ / ("labels/train/" + stem + ".txt"); }

  // Scans, expecting one image, and returns its problem.
  Status ScanOneImageProblem(const std::string& rows) {
    AddImage("a.jpg");
    AddLabel("a", rows);
    const Status s = ScanSource(dir_.path(), ScanOptions(), &ds_);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok() || ds_.splits.empty() || ds_.splits[0].images.size() != 1) return s;
    return ds_.splits[0].images[0].problem;
  }

  ScratchDir dir_;
  SourceDataset ds_;
  const std::string jpeg_ = testing::MakeJpeg(8, 8, 3);
};

TEST_F(YoloTxtTest, ReadsImagesLabelsAndNames) {
  WriteFile(dir_ / "data.yaml", "names: {0: cat, 1: dog}\ncategory_ids: [17, 18]\n");
  AddImage("b.jpg");
  AddImage("a.PNG");  // extensions are case-insensitive
  AddImage("notes.txt");
  AddLabel("a", "1 0.5 0.5 0.25 0.5\n\n0 0.1 0.2 0.1 0.2\r\n");
  AddLabel("b", "");  // empty: background
  ASSERT_TRUE(ScanSource(dir_.path(), ScanOptions(), &ds_).ok());
  EXPECT_EQ(ds_.layout, SourceLayout::kYoloTxt);
  EXPECT_THAT(ds_.class_names, ElementsAre("cat", "dog"));
  EXPECT_THAT(ds_.category_ids, ElementsAre(17, 18));
  const SourceSplit& split = ds_.splits[0];
  ASSERT_EQ(split.images.size(), 2u);
  const SourceImage& a = split.images[0];
  EXPECT_EQ(a.info.file_name, "a.PNG");
  EXPECT_EQ(a.path, dir_.path() + "/images/train/a.PNG");
  EXPECT_EQ(a.label_path, LabelPath("a"));
  EXPECT_EQ(a.info.image_id, 1);  // stems are not integers: positions
  ASSERT_EQ(a.info.boxes.size(), 2u);
  EXPECT_EQ(a.info.boxes[0].class_index, 1);
  EXPECT_FLOAT_EQ(a.info.boxes[0].w, 0.25f);
  EXPECT_FLOAT_EQ(a.info.boxes[1].cy, 0.2f);
  EXPECT_EQ(split.images[1].info.image_id, 2);
  EXPECT_TRUE(split.images[1].info.boxes.empty());
  EXPECT_TRUE(split.images[1].problem.ok());
}

// Ultralytics' VOC.yaml trains on four split folders and validates on a fifth; yolo-train took the
// first train* split (4 of 16 images) without a word. The data YAML's lists are what the scan reports.
class DataYamlSplitsTest : public YoloTxtTest {
 protected:
  void SetUp() override {
    for (const std::string split : {"train2007", "train2012", "val2007", "val2012", "test2007"})
      for (const std::string name : {"x.jpg", "y.jpg"}) {
        WriteFile(dir_ / ("images/" + split + "/" + name), jpeg_);
        WriteFile(dir_ / ("labels/" + split + "/" + name.substr(0, 1) + ".txt"), "0 0.5 0.5 0.2 0.2\n");
      }
  }
  Status Scan(const std::string& yaml, ScanOptions options = ScanOptions()) {
    WriteFile(dir_ / "data.yaml", "names: [thing]\n" + yaml);
    return ScanSource(dir_.path(), options, &ds_);
  }
};

TEST_F(DataYamlSplitsTest, ListsOfFoldersNameTheSplits) {
  const Status s = Scan("path: ../datasets/VOC\ntrain:\n  - images/train2012\n  - images/train2007\n"
                        "  - images/val2012/\n  - " + dir_.path() + "/images/val2007\nval: images/test2007\n"
                        "test: images/test2007\n");
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_THAT(ds_.train_splits, ElementsAre("train2012", "train2007", "val2012", "val2007"));
  EXPECT_THAT(ds_.val_splits, ElementsAre("test2007"));
}

TEST_F(DataYamlSplitsTest, AnImageListNamesTheSplitsItListsWhole) {
  WriteFile(dir_ / "train.txt", "./images/train2007/x.jpg\n./images/train2007/y.jpg\r\n" +
                                    dir_.path() + "/images/train2012/x.jpg\n./images/train2012/y.jpg\n\n");
  Status s = Scan("train: train.txt\nval: [images/test2007]\n");
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_THAT(ds_.train_splits, ElementsAre("train2007", "train2012"));

  // A list of part of a split: ffyolo would train on images the user left out.
  WriteFile(dir_ / "train.txt", "./images/train2007/x.jpg\n");
  s = Scan("train: train.txt\n");
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("train.txt: lists 1 of the 2 images of split train2007; ffyolo trains on whole "
                                     "splits"));
  WriteFile(dir_ / "train.txt", "./images/train2007/x.jpg\n./images/train2007/z.jpg\n");
  s = Scan("train: train.txt\n");
  EXPECT_THAT(s.message(), HasSubstr("images/train2007/z.jpg, which is not an image of split train2007"));
  WriteFile(dir_ / "train.txt", "./pictures/x.jpg\n");
  s = Scan("train: train.txt\n");
  EXPECT_THAT(s.message(), HasSubstr("train.txt: line 1 (./pictures/x.jpg) is not an image in the image folder of a "
                                     "split of"));
  // Another tree's split of the same name is not this one's.
  const std::string other = dir_.path() + ".other";
  WriteFile(other + "/images/train2007/x.jpg", jpeg_);
  WriteFile(dir_ / "train.txt", other + "/images/train2007/x.jpg\n");
  s = Scan("train: train.txt\n");
  EXPECT_THAT(s.message(), HasSubstr("line 1 (" + other + "/images/train2007/x.jpg) is not an image"));
  fs::remove_all(other);
  WriteFile(dir_ / "train.txt", "\n\n");
  s = Scan("train: train.txt\n");
  EXPECT_THAT(s.message(), HasSubstr("train: the image list 'train.txt' lists no images"));
  s = Scan("train: missing.txt\n");
  EXPECT_THAT(s.message(), HasSubstr("train: cannot read the image list 'missing.txt'"));
}

TEST_F(DataYamlSplitsTest, WhatIsNoSplitOrNamedTwiceIsRefused) {
  Status s = Scan("train: images/train2099\n");
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("data.yaml: train: 'images/train2099' is not the image folder of a split of " +
                                     dir_.path() + " (images/<split>/; splits: test2007, train2007, train2012, "
                                     "val2007, val2012)"));
  // A folder of another tree named like a split, or a split's name alone, is no split folder of this one.
  const std::string elsewhere = dir_.path() + ".elsewhere";
  WriteFile(elsewhere + "/images/train2012/x.jpg", jpeg_);
  s = Scan("train: " + elsewhere + "/images/train2012\n");
  EXPECT_THAT(s.message(), HasSubstr("is not the image folder of a split of"));
  fs::remove_all(elsewhere);
  s = Scan("train: train2012\n");
  EXPECT_THAT(s.message(), HasSubstr("'train2012' is not the image folder of a split of"));
  for (const std::string empty : {"train: []\n", "train:\n", "val: ''\n"}) {
    s = Scan(empty);
    EXPECT_THAT(s.message(), HasSubstr("names no images")) << empty;
  }
  s = Scan("val: [images/val2007, ./images//val2007/]\n");
  EXPECT_THAT(s.message(), HasSubstr("data.yaml: val: names split val2007 twice"));
  s = Scan("train: {a: b}\n");
  EXPECT_THAT(s.message(), HasSubstr("`train` is neither a path nor a list of paths"));
}

// An absolute path: naming another tree (a copied tree's stale one, or another tree's YAML) made its
// entries read as this source's folders without a word: it is said.
TEST_F(DataYamlSplitsTest, APathKeyNamingAnotherTreeIsSaid) {
  const std::string said = "path: /elsewhere/VOC is not the source " + dir_.path();
  ASSERT_TRUE(Scan("path: /elsewhere/VOC\ntrain: images/train2007\n").ok());
  EXPECT_THAT(ds_.warnings, Contains(HasSubstr(said)));
  ASSERT_TRUE(Scan("path: " + dir_.path() + "/\ntrain: images/train2007\n").ok());
  EXPECT_THAT(ds_.warnings, Not(Contains(HasSubstr("is not the source"))));
  ASSERT_TRUE(Scan("path: ../datasets/VOC\ntrain: images/train2007\n").ok());  // relative to a YOLOv5 checkout
  EXPECT_THAT(ds_.warnings, Not(Contains(HasSubstr("is not the source"))));
}

// A label file that is a FIFO, a folder or a link to nothing made its image background, saying it had
// no label file (a FIFO would block the read): it is that image's problem, named.
TEST_F(DataYamlSplitsTest, ALabelThatIsNoRegularFileIsTheImagesProblem) {
  const std::string label = dir_ / "labels/train2007/x.txt";
  fs::remove(label);
  ASSERT_EQ(::mkfifo(label.c_str(), 0600), 0);
  fs::remove(dir_ / "labels/train2007/y.txt");
  fs::create_symlink(dir_ / "nothing", dir_ / "labels/train2007/y.txt");
  ASSERT_TRUE(Scan("").ok());
  const SourceSplit& split = ds_.splits[1];
  ASSERT_EQ(split.name, "train2007");
  EXPECT_THAT(split.images[0].problem.message(), HasSubstr(label + ": the label file is not a regular file"));
  EXPECT_THAT(split.images[1].problem.message(), HasSubstr("(a link to nothing)"));
}

// A pack of some splits (--splits) cannot record lists naming the others: they are dropped, saying so.
TEST_F(DataYamlSplitsTest, ListsNamingSplitsLeftOutAreNotRecorded) {
  ScanOptions options;
  options.splits = {"test2007"};
  const Status s = Scan("train: [images/train2007]\nval: images/test2007\n", options);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(ds_.train_splits.empty());
  EXPECT_THAT(ds_.val_splits, ElementsAre("test2007"));
  EXPECT_THAT(ds_.warnings, Contains(HasSubstr("train: names splits this pack leaves out (train2007): not recorded")));
}

// Ultralytics' COCO tree has YOLO labels for train2017 and val2017 and a JSON for val2017 only:
// the automatic choice took the JSON and packed val2017 alone, which yolo-train then trained on.
TEST_F(YoloTxtTest, BothLayoutsAtOnceAreAChoiceForTheUser) {
  AddImage("a.jpg");
  AddLabel("a", "0 0.5 0.5 0.2 0.2\n");
  WriteFile(dir_ / "images/val/b.jpg", jpeg_);
  WriteFile(dir_ / "labels/val/b.txt", "0 0.5 0.5 0.2 0.2\n");
  WriteFile(dir_ / "annotations/instances_val.json",
            R"({"images": [{"id": 1, "file_name": "b.jpg", "width": 8, "height": 8}], "annotations": [], )"
            R"("categories": [{"id": 1, "name": "thing"}]})");
  Status s = ScanSource(dir_.path(), ScanOptions(), &ds_);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_THAT(s.message(),
              HasSubstr("both layouts are here: COCO JSON for val, YOLO labels for train too; choose one"));
  ASSERT_TRUE(ScanSource(dir_.path(), Layout(SourceLayout::kYoloTxt), &ds_).ok());
  EXPECT_EQ(ds_.splits.size(), 2u);
  ASSERT_TRUE(ScanSource(dir_.path(), Layout(SourceLayout::kCocoJson), &ds_).ok());
  EXPECT_EQ(ds_.splits.size(), 1u);
}

TEST_F(YoloTxtTest, ASplitFolderNamedLikeASetIsRefused) {
  AddImage("a.jpg");
  WriteFile(dir_ / "images/a+b/c.jpg", jpeg_);
  ASSERT_TRUE(fs::create_directories(dir_ / "labels/a+b"));
  const Status s = ScanSource(dir_.path(), ScanOptions(), &ds_);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("'a+b' cannot be a split's name"));
}

TEST_F(YoloTxtTest, IntegerStemsAreImageIds) {
  AddImage("000000000042.jpg");
  AddImage("7.jpg");
  ASSERT_TRUE(fs::create_directories(dir_ / "labels/train"));
  ASSERT_TRUE(ScanSource(dir_.path(), ScanOptions(), &ds_).ok());
  ASSERT_EQ(ds_.splits[0].images.size(), 2u);
  EXPECT_EQ(ds_.splits[0].images[0].info.image_id, 42);
  EXPECT_EQ(ds_.splits[0].images[1].info.image_id, 7);
}

TEST_F(YoloTxtTest, WithoutYamlClassesComeFromTheLabels) {
  ASSERT_TRUE(ScanOneImageProblem("2 0.5 0.5 0.1 0.1\n").ok());
  EXPECT_THAT(ds_.class_names, ElementsAre("0", "1", "2"));
  EXPECT_THAT(ds_.category_ids, ElementsAre(1, 2, 3));
  ASSERT_FALSE(ds_.warnings.empty());
  EXPECT_THAT(ds_.warnings.back(), HasSubstr("no data YAML"));
}

TEST_F(YoloTxtTest, CocoNamesGetCocoCategoryIds) {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  // names.yaml without its category_ids: the 80 COCO names alone must map to COCO's ids.
  const YAML::Node names = YAML::LoadFile(coco128 + "/names.yaml")["names"];
  YAML::Emitter yaml;
  yaml << YAML::BeginMap << YAML::Key << "names" << YAML::Value << names << YAML::EndMap;
  WriteFile(dir_ / "data.yaml", yaml.c_str());
  ASSERT_TRUE(ScanOneImageProblem("0 0.5 0.5 0.1 0.1\n").ok());
  EXPECT_EQ(ds_.category_ids, ReadNamesYaml(coco128).category_ids);
}

TEST_F(YoloTxtTest, PolygonRowBecomesItsBoundingBox) {
  const Status s = ScanOneImageProblem("0 0.1 0.2 0.5 0.3 0.3 0.6\n");
  ASSERT_TRUE(s.ok()) << s.ToString();
  const Box box = ds_.splits[0].images[0].info.boxes.at(0);
  EXPECT_FLOAT_EQ(box.cx, 0.3f);
  EXPECT_FLOAT_EQ(box.cy, 0.4f);
  EXPECT_FLOAT_EQ(box.w, 0.4f);
  EXPECT_FLOAT_EQ(box.h, 0.4f);
}

TEST_F(YoloTxtTest, DuplicateRowsAreRemovedWithAWarning) {
  ASSERT_TRUE(ScanOneImageProblem("0 0.5 0.5 0.1 0.1\n1 0.5 0.5 0.1 0.1\n0 0.5 0.5 0.1 0.1\n").ok());
  EXPECT_EQ(ds_.splits[0].images[0].info.boxes.size(), 2u);
  EXPECT_THAT(ds_.warnings, ::testing::Contains(LabelPath("a") + ": 1 duplicate rows removed"));
}

TEST_F(YoloTxtTest, WrongFieldCount) {
  const Status s = ScanOneImageProblem("0 0.5 0.5 0.1 0.1\n0 0.5 0.5 0.1\n");
  EXPECT_THAT(s.message(), HasSubstr(LabelPath("a") + ":2: expected 5 fields"));
  EXPECT_TRUE(ds_.splits[0].images[0].info.boxes.empty());
}

TEST_F(YoloTxtTest, NonNumber) {
  const Status s = ScanOneImageProblem("0 0.5 abc 0.1 0.1\n");
  EXPECT_THAT(s.message(), HasSubstr(LabelPath("a") + ":1: 'abc' is not a number"));
}

// Notepad saves UTF-8 with a byte-order mark, which read as "'\xef\xbb\xbf45' is not
// a number" and printed as "'45' is not a number".
TEST_F(YoloTxtTest, ByteOrderMarkAtTheStartIsSkipped) {
  const Status s = ScanOneImageProblem("\xEF\xBB\xBF" "45 0.5 0.5 0.1 0.1\n1 0.5 0.5 0.2 0.2\n");
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::vector<Box> boxes = ds_.splits[0].images[0].info.boxes;
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_EQ(boxes[0].class_index, 45);
  EXPECT_EQ(ds_.class_names.size(), 46u);
}

TEST_F(YoloTxtTest, ByteOrderMarkElsewhereIsShownEscaped) {
  const Status s = ScanOneImageProblem("0 0.5 0.5 0.1 0.1\n\xEF\xBB\xBF" "1 0.5 0.5 0.2 0.2\n");
  EXPECT_THAT(s.message(), HasSubstr(LabelPath("a") + ":2: '\\xef\\xbb\\xbf1' is not a number"));
}

// A NUL byte ended the message where it was printed.
TEST_F(YoloTxtTest, NulByteIsShownEscaped) {
  const Status s = ScanOneImageProblem(std::string("0 0.5 0.5") + '\0' + " 0.1 0.1\n");
  EXPECT_THAT(s.message(), HasSubstr(LabelPath("a") + ":1: '0.5\\0' is not a number"));
  EXPECT_EQ(s.ToString().find('\0'), std::string::npos) << s.ToString();
}

TEST_F(YoloTxtTest, NegativeValue) {
  const Status s = ScanOneImageProblem("0 0.5 -0.5 0.1 0.1\n");
  EXPECT_THAT(s.message(), HasSubstr(LabelPath("a") + ":1: negative value -0.5"));
}

TEST_F(YoloTxtTest, CoordinateAboveOne) {
  const Status s = ScanOneImageProblem("0 1.5 0.5 0.1 0.1\n");
  EXPECT_THAT(s.message(), HasSubstr(LabelPath("a") + ":1: coordinate 1.5 > 1"));
}

TEST_F(YoloTxtTest, ClassOutOfRange) {
  WriteFile(dir_ / "data.yaml", "nc: 2\nnames: [cat, dog]\n");
  const Status s = ScanOneImageProblem("1 0.5 0.5 0.1 0.1\n2 0.5 0.5 0.1 0.1\n");
  EXPECT_THAT(s.message(), HasSubstr(LabelPath("a") + ":2: class 2 is out of range (nc=2)"));
}

TEST_F(YoloTxtTest, BadYamlIsAnError) {
  WriteFile(dir_ / "data.yaml", "nc: 3\nnames: [cat, dog]\n");
  AddImage("a.jpg");
  AddLabel("a", "");
  const Status s = ScanSource(dir_.path(), ScanOptions(), &ds_);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(dir_ / "data.yaml" + ": nc is 3 but `names` has 2 entries"));
}

// yaml-cpp would take the first `names`, PyYAML (Ultralytics) the last: refused, naming both lines.
TEST_F(YoloTxtTest, YamlWithARepeatedKeyIsRefused) {
  WriteFile(dir_ / "data.yaml", "names: [cat, dog]\nnc: 2\nnames: [dog, cat]\n");
  AddImage("a.jpg");
  AddLabel("a", "");
  const Status s = ScanSource(dir_.path(), ScanOptions(), &ds_);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(dir_ / "data.yaml" + ":3: key 'names' appears twice (first on line 1)"));
}

// v7.0's check_dataset names the classes of a YAML with only `nc`: class0, class1, ...
TEST_F(YoloTxtTest, YamlWithNcOnlyNamesTheClassesAsV7Does) {
  WriteFile(dir_ / "data.yaml", "nc: 2\n");
  AddImage("a.jpg");
  AddLabel("a", "1 0.5 0.5 0.1 0.1\n");
  const Status s = ScanSource(dir_.path(), ScanOptions(), &ds_);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_THAT(ds_.class_names, ElementsAre("class0", "class1"));
}

// A null entry read as a class named "null"; an empty file as an obscure yaml-cpp error.
TEST_F(YoloTxtTest, YamlWithoutUsableNamesSaysWhy) {
  AddImage("a.jpg");
  AddLabel("a", "");
  for (const auto& [yaml, says] : std::vector<std::pair<std::string, std::string>>{
           {"names: [a, ~]\n", "`names` entry 1 is not a name"},
           {"names: {0: a, 1: [b]}\n", "`names` entry 1 is not a name"},
           {"", "not a data YAML (a map with `names` or `nc`)"}}) {
    WriteFile(dir_ / "data.yaml", yaml);
    const Status s = ScanSource(dir_.path(), ScanOptions(), &ds_);
    EXPECT_FALSE(s.ok()) << yaml;
    EXPECT_THAT(s.message(), HasSubstr(says)) << yaml;
    EXPECT_THAT(s.message(), HasSubstr("data.yaml")) << yaml;
  }
}

TEST_F(YoloTxtTest, LabelWithoutImageIsAnOrphan) {
  AddImage("a.jpg");
  AddLabel("a", "0 0.5 0.5 0.1 0.1\n");
  AddLabel("lost", "0 0.5 0.5 0.1 0.1\n");
  ASSERT_TRUE(ScanSource(dir_.path(), ScanOptions(), &ds_).ok());
  EXPECT_THAT(ds_.splits[0].orphan_labels, ElementsAre(LabelPath("lost")));
  EXPECT_EQ(ds_.splits[0].images.size(), 1u);
}

TEST_F(YoloTxtTest, JsonLayoutAbsentIsAnErrorWhenAskedFor) {
  AddImage("a.jpg");
  AddLabel("a", "");
  const Status s = ScanSource(dir_.path(), Layout(SourceLayout::kCocoJson), &ds_);
  ASSERT_TRUE(s.IsNotFound());
  EXPECT_THAT(s.message(), HasSubstr("no COCO JSON dataset: looked for annotations/instances_<split>.json"));
}

}  // namespace
}  // namespace ffyolo
