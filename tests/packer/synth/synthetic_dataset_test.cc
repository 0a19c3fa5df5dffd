// The dataset generator: COCO JSON structure, boxes against the rendered scenes, JPEG
// kinds, the YOLO layout, byte-identical reruns and the output-directory rules.
#include "ffyolo/synthetic.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ffyolo/synthetic_classes.h"
#include "testing/faulty_env.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ReadFileToString;
using testing::ScratchDir;

SyntheticOptions SmallOptions(const std::string& out) {
  SyntheticOptions o;
  o.output_dir = out;
  o.train_images = 20;
  o.val_images = 4;
  o.min_size = 48;
  o.max_size = 96;
  o.num_classes = 12;
  o.seed = 7;
  o.num_threads = 2;
  return o;
}

SyntheticSummary GenerateOrDie(const SyntheticOptions& o) {
  SyntheticSummary summary;
  const ffr::Status s = GenerateSyntheticCoco(o, &summary);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return summary;
}

// Relative path -> file bytes, for every file under `root`.
std::map<std::string, std::string> ReadTree(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) {
      files[fs::relative(entry.path(), root).string()] = ReadFileToString(entry.path().string());
    }
  }
  return files;
}

json ReadJson(const std::string& path) { return json::parse(ReadFileToString(path)); }

struct JpegHeader {
  int width = 0, height = 0, subsampling = -1;
};

JpegHeader ReadJpegHeader(const std::string& jpeg) {
  JpegHeader h;
  int colorspace = 0;
  tjhandle tj = tjInitDecompress();
  const int rc = tjDecompressHeader3(tj, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(), &h.width,
                                     &h.height, &h.subsampling, &colorspace);
  tjDestroy(tj);
  EXPECT_EQ(rc, 0) << "not a JPEG";
  return h;
}

cv::Mat DecodeRgb(const std::string& jpeg, int width, int height) {
  cv::Mat rgb(height, width, CV_8UC3);
  tjhandle tj = tjInitDecompress();
  const int rc = tjDecompress2(tj, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size(), rgb.data, width,
                               0, height, TJPF_RGB, 0);
  tjDestroy(tj);
  EXPECT_EQ(rc, 0);
  return rgb;
}

std::map<int64_t, std::vector<json>> AnnotationsByImage(const json& coco) {
  std::map<int64_t, std::vector<json>> by_image;
  for (const json& a : coco["annotations"]) by_image[a["image_id"].get<int64_t>()].push_back(a);
  return by_image;
}

TEST(SyntheticDatasetTest, WritesCocoLayoutWithConsistentJson) {
  ScratchDir dir("coco");
  const SyntheticOptions o = SmallOptions(dir.path());
  const SyntheticSummary summary = GenerateOrDie(o);

  std::set<int64_t> image_ids, annotation_ids;
  int64_t images = 0, annotations = 0, background = 0;
  for (const auto& [split, count] : {std::pair<std::string, int>{"train2017", 20}, {"val2017", 4}}) {
    SCOPED_TRACE(split);
    const json coco = ReadJson(dir / ("annotations/instances_" + split + ".json"));
    for (const char* key : {"info", "licenses", "categories", "images", "annotations"}) {
      ASSERT_TRUE(coco.contains(key)) << key;
    }
    ASSERT_EQ(coco["categories"].size(), 12u);
    std::map<int, std::string> categories;
    int previous_id = 0;
    for (const json& c : coco["categories"]) {
      EXPECT_GT(c["id"].get<int>(), previous_id);
      previous_id = c["id"].get<int>();
      categories[previous_id] = c["name"].get<std::string>();
      EXPECT_FALSE(c["supercategory"].get<std::string>().empty());
    }
    EXPECT_GT(previous_id, 12) << "category ids must not be contiguous";

    ASSERT_EQ(coco["images"].size(), static_cast<size_t>(count));
    std::map<int64_t, std::pair<int, int>> sizes;
    for (const json& image : coco["images"]) {
      const int64_t id = image["id"].get<int64_t>();
      EXPECT_TRUE(image_ids.insert(id).second) << "duplicate image id " << id;
      const int w = image["width"].get<int>(), h = image["height"].get<int>();
      EXPECT_GE(w, 48);
      EXPECT_LE(w, 96);
      sizes[id] = {w, h};
      const std::string jpeg = ReadFileToString(dir / (split + "/" + image["file_name"].get<std::string>()));
      const JpegHeader header = ReadJpegHeader(jpeg);
      EXPECT_EQ(header.width, w);
      EXPECT_EQ(header.height, h);
      EXPECT_EQ(header.subsampling, TJSAMP_420);
    }
    for (const json& a : coco["annotations"]) {
      EXPECT_TRUE(annotation_ids.insert(a["id"].get<int64_t>()).second) << "duplicate annotation id";
      ASSERT_TRUE(sizes.count(a["image_id"].get<int64_t>())) << "annotation of an unknown image";
      EXPECT_TRUE(categories.count(a["category_id"].get<int>())) << "unknown category";
      EXPECT_EQ(a["iscrowd"].get<int>(), 0);
      const auto [w, h] = sizes[a["image_id"].get<int64_t>()];
      const std::vector<double> box = a["bbox"].get<std::vector<double>>();
      ASSERT_EQ(box.size(), 4u);
      EXPECT_GE(box[0], 0);
      EXPECT_GE(box[1], 0);
      EXPECT_GT(box[2], 0);
      EXPECT_GT(box[3], 0);
      EXPECT_LE(box[0] + box[2], w);
      EXPECT_LE(box[1] + box[3], h);
      const double area = a["area"].get<double>();
      EXPECT_GT(area, 0);
      EXPECT_LE(area, box[2] * box[3]);
      ASSERT_FALSE(a["segmentation"].empty());
      for (const json& polygon : a["segmentation"]) {
        EXPECT_GE(polygon.size(), 6u);
        EXPECT_EQ(polygon.size() % 2, 0u);
      }
    }
    const auto by_image = AnnotationsByImage(coco);
    for (const auto& entry : sizes) background += by_image.count(entry.first) ? 0 : 1;
    images += static_cast<int64_t>(coco["images"].size());
    annotations += static_cast<int64_t>(coco["annotations"].size());
    EXPECT_EQ(std::distance(fs::directory_iterator(dir / split), fs::directory_iterator()), count);
  }
  EXPECT_EQ(summary.images, 24);
  EXPECT_EQ(images, 24);
  EXPECT_EQ(summary.objects, annotations);
  EXPECT_GE(annotations, 24) << "few objects for 23 non-background images";
  EXPECT_EQ(summary.background_images, background);
  EXPECT_GE(background, 1) << "image 19 of train is a background image at 5%";
  EXPECT_GT(summary.bytes, 0);
  EXPECT_FALSE(fs::exists(dir / "data.yaml"));
  EXPECT_FALSE(fs::exists(dir / "labels"));
}

TEST(SyntheticDatasetTest, JsonMatchesTheRenderedScenes) {
  ScratchDir dir("scenes");
  SyntheticOptions o = SmallOptions(dir.path());
  o.subsampling = JpegSubsampling::k444;
  o.jpeg_quality = 95;
  GenerateOrDie(o);
  const json coco = ReadJson(dir / "annotations/instances_train2017.json");
  const auto by_image = AnnotationsByImage(coco);
  for (int i = 0; i < o.train_images; ++i) {
    SCOPED_TRACE("train image " + std::to_string(i));
    const json& image = coco["images"][i];
    const SyntheticScene scene = RenderSyntheticScene(SyntheticSceneSpecFor(o, "train2017", i));
    ASSERT_EQ(image["width"].get<int>(), scene.rgb.cols);
    ASSERT_EQ(image["height"].get<int>(), scene.rgb.rows);
    const auto it = by_image.find(image["id"].get<int64_t>());
    const std::vector<json> annotations = it == by_image.end() ? std::vector<json>{} : it->second;
    ASSERT_EQ(annotations.size(), scene.objects.size());
    for (size_t k = 0; k < annotations.size(); ++k) {
      const SyntheticObject& o = scene.objects[k];
      EXPECT_EQ(annotations[k]["bbox"].get<std::vector<double>>(),
                (std::vector<double>{double(o.x), double(o.y), double(o.width), double(o.height)}));
      EXPECT_EQ(annotations[k]["area"].get<double>(), static_cast<double>(o.area));
      EXPECT_EQ(annotations[k]["category_id"].get<int>(), GetSyntheticClass(o.class_index).category_id);
    }
    // The JPEG holds the rendered RGB pixels (not BGR), up to compression loss.
    if (!scene.objects.empty()) {
      const cv::Mat decoded = DecodeRgb(ReadFileToString(dir / ("train2017/" + image["file_name"].get<std::string>())),
                                        scene.rgb.cols, scene.rgb.rows);
      cv::Mat diff;
      cv::absdiff(decoded, scene.rgb, diff);
      const cv::Scalar mean_error = cv::mean(diff, scene.object_map > 0);
      for (int ch = 0; ch < 3; ++ch) EXPECT_LT(mean_error[ch], 8.0) << "channel " << ch;
    }
  }
}

TEST(SyntheticDatasetTest, SameOptionsGiveIdenticalBytesWhateverTheThreads) {
  ScratchDir dir("determinism");
  SyntheticOptions o = SmallOptions(dir.path());
  o.yolo_layout = true;
  o.num_threads = 1;
  GenerateOrDie(o);
  const auto first = ReadTree(dir.path());
  o.num_threads = 3;
  o.force = true;
  GenerateOrDie(o);
  const auto second = ReadTree(dir.path());
  ASSERT_EQ(first.size(), second.size());
  for (const auto& [path, bytes] : first) {
    EXPECT_NE(path.find(".tmp"), path.size() - 4) << "temporary file left: " << path;
    ASSERT_TRUE(second.count(path)) << path;
    EXPECT_TRUE(second.at(path) == bytes) << path << " differs between runs";
  }

  o.seed = 8;
  GenerateOrDie(o);
  const auto reseeded = ReadTree(dir.path());
  int differing_images = 0;
  for (const auto& [path, bytes] : first) {
    if (path.rfind("images/", 0) == 0 && reseeded.count(path) && reseeded.at(path) != bytes) ++differing_images;
  }
  EXPECT_EQ(differing_images, 24) << "another seed must give other images";
}

TEST(SyntheticDatasetTest, YoloLabelsAgreeWithJson) {
  ScratchDir dir("yolo");
  SyntheticOptions o = SmallOptions(dir.path());
  o.yolo_layout = true;
  GenerateOrDie(o);
  EXPECT_FALSE(fs::exists(dir / "train2017")) << "with --yolo the images move to images/<split>";

  for (const std::string split : {"train2017", "val2017"}) {
    SCOPED_TRACE(split);
    const json coco = ReadJson(dir / ("annotations/instances_" + split + ".json"));
    std::vector<int> category_ids;
    for (const json& c : coco["categories"]) category_ids.push_back(c["id"].get<int>());
    std::sort(category_ids.begin(), category_ids.end());
    const auto by_image = AnnotationsByImage(coco);
    for (const json& image : coco["images"]) {
      const std::string file = image["file_name"].get<std::string>();
      const std::string stem = file.substr(0, file.size() - 4);
      ASSERT_TRUE(fs::exists(dir / ("images/" + split + "/" + file)));
      ASSERT_TRUE(fs::exists(dir / ("labels/" + split + "/" + stem + ".txt"))) << stem;
      const double w = image["width"].get<double>(), h = image["height"].get<double>();
      std::istringstream rows(ReadFileToString(dir / ("labels/" + split + "/" + stem + ".txt")));
      const auto it = by_image.find(image["id"].get<int64_t>());
      const std::vector<json> annotations = it == by_image.end() ? std::vector<json>{} : it->second;
      int cls;
      double cx, cy, bw, bh;
      size_t row = 0;
      while (rows >> cls >> cx >> cy >> bw >> bh) {
        ASSERT_LT(row, annotations.size()) << "more label rows than annotations in " << stem;
        const json& a = annotations[row++];
        const std::vector<double> box = a["bbox"].get<std::vector<double>>();
        const auto pos = std::find(category_ids.begin(), category_ids.end(), a["category_id"].get<int>());
        EXPECT_EQ(cls, pos - category_ids.begin());
        EXPECT_NEAR(cx, (box[0] + box[2] / 2) / w, 1e-5);
        EXPECT_NEAR(cy, (box[1] + box[3] / 2) / h, 1e-5);
        EXPECT_NEAR(bw, box[2] / w, 1e-5);
        EXPECT_NEAR(bh, box[3] / h, 1e-5);
      }
      EXPECT_EQ(row, annotations.size()) << stem;
    }
  }

  const YAML::Node yaml = YAML::LoadFile(dir / "data.yaml");
  EXPECT_EQ(fs::path(yaml["path"].as<std::string>()), fs::absolute(dir.path()).lexically_normal());
  EXPECT_EQ(yaml["train"].as<std::string>(), "images/train2017");
  EXPECT_EQ(yaml["val"].as<std::string>(), "images/val2017");
  ASSERT_EQ(yaml["nc"].as<int>(), 12);
  const json categories = ReadJson(dir / "annotations/instances_val2017.json")["categories"];
  for (int c = 0; c < 12; ++c) {
    EXPECT_EQ(yaml["names"][c].as<std::string>(), categories[c]["name"].get<std::string>());
    EXPECT_EQ(yaml["category_ids"][c].as<int>(), categories[c]["id"].get<int>());
  }
}

TEST(SyntheticDatasetTest, SubsamplingOptionsGiveThatKindOfJpeg) {
  for (const auto& [subsampling, expected] : {std::pair{JpegSubsampling::k420, TJSAMP_420},
                                              std::pair{JpegSubsampling::k444, TJSAMP_444},
                                              std::pair{JpegSubsampling::kGray, TJSAMP_GRAY}}) {
    ScratchDir dir("subsampling" + std::to_string(expected));
    SyntheticOptions o = SmallOptions(dir.path());
    o.train_images = 2;
    o.val_images = 0;
    o.subsampling = subsampling;
    GenerateOrDie(o);
    EXPECT_FALSE(fs::exists(dir / "annotations/instances_val2017.json")) << "val 0 writes no val split";
    for (const auto& entry : fs::directory_iterator(dir / "train2017")) {
      EXPECT_EQ(ReadJpegHeader(ReadFileToString(entry.path().string())).subsampling, expected) << entry.path();
    }
  }
}

TEST(SyntheticDatasetTest, FixedSizeAndSizeRange) {
  ScratchDir dir("sizes");
  SyntheticOptions o = SmallOptions(dir.path());
  o.width = 80;
  o.height = 60;
  GenerateOrDie(o);
  const json fixed = ReadJson(dir / "annotations/instances_train2017.json");
  for (const json& image : fixed["images"]) {
    EXPECT_EQ(image["width"].get<int>(), 80);
    EXPECT_EQ(image["height"].get<int>(), 60);
  }

  ScratchDir range_dir("range");
  GenerateOrDie(SmallOptions(range_dir.path()));
  const json ranged = ReadJson(range_dir / "annotations/instances_train2017.json");
  std::set<std::pair<int, int>> sizes;
  for (const json& image : ranged["images"]) {
    sizes.insert({image["width"].get<int>(), image["height"].get<int>()});
  }
  EXPECT_GT(sizes.size(), 5u) << "a size range must give varied sizes";
}

TEST(SyntheticDatasetTest, CocoSizesFollowCoco128) {
  SyntheticOptions o;
  o.coco_sizes = true;
  std::map<std::pair<int, int>, int> counts;
  constexpr int kImages = 12800;
  double pixels = 0;
  for (int i = 0; i < kImages; ++i) {
    const SyntheticSceneSpec spec = SyntheticSceneSpecFor(o, "train2017", i);
    ++counts[{spec.width, spec.height}];
    pixels += static_cast<double>(spec.width) * spec.height;
  }
  // coco128: 35 of 128 images are 640x480, 9 are 480x640, 58 distinct sizes, 280,623 pixels on average.
  // Binomial standard deviations at 12,800 draws: 50 and 32 images.
  const int landscape = counts[{640, 480}], portrait = counts[{480, 640}];
  EXPECT_NEAR(landscape, kImages * 35 / 128, 200);
  EXPECT_NEAR(portrait, kImages * 9 / 128, 130);
  EXPECT_EQ(counts.size(), 58u);
  EXPECT_NEAR(pixels / kImages, 280623, 280623 * 0.02);
  for (const auto& [size, n] : counts) EXPECT_LE(std::max(size.first, size.second), 640);

  ScratchDir dir("coco_sizes");
  o = SmallOptions(dir.path());
  o.coco_sizes = true;
  o.train_images = 3;
  o.val_images = 0;
  GenerateOrDie(o);
  const json written = ReadJson(dir / "annotations/instances_train2017.json");
  for (int i = 0; i < 3; ++i) {
    const SyntheticSceneSpec spec = SyntheticSceneSpecFor(o, "train2017", i);
    EXPECT_EQ(written["images"][i]["width"].get<int>(), spec.width);
    EXPECT_EQ(written["images"][i]["height"].get<int>(), spec.height);
  }
}

// A folder of someone else's files is refused, forced or not: --force replaces only what yolo-synth
// wrote. Neither refusal names the library's fields, and only the one of an earlier run points at --force.
TEST(SyntheticDatasetTest, RefusesNonEmptyOutputWithoutForce) {
  ScratchDir dir("refuse");
  ASSERT_TRUE(testing::WriteStringToFile(dir / "keep.txt", "mine"));
  SyntheticOptions o = SmallOptions(dir.path());
  for (const bool force : {false, true}) {
    o.force = force;
    SyntheticSummary summary;
    const ffr::Status refused = GenerateSyntheticCoco(o, &summary);
    EXPECT_TRUE(refused.IsAlreadyExists()) << refused.ToString();
    EXPECT_NE(refused.message().find(dir.path() + ": holds files that are not a synthetic dataset yolo-synth wrote "
                                                  "(keep.txt); choose a new or empty output directory"),
              std::string::npos)
        << refused.ToString();
    EXPECT_EQ(fs::directory_iterator(dir.path())->path().filename(), "keep.txt");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
  }

  o.output_dir = dir / "synth";
  o.force = false;
  GenerateOrDie(o);
  SyntheticSummary summary;
  const ffr::Status again = GenerateSyntheticCoco(o, &summary);
  EXPECT_TRUE(again.IsAlreadyExists()) << again.ToString();
  EXPECT_NE(again.message().find("--force replaces what it wrote there"), std::string::npos) << again.ToString();
  EXPECT_EQ(again.message().find("SyntheticOptions"), std::string::npos) << again.ToString();
}

// --force into an earlier run's folder replaces what that run wrote, and only that: the user's own
// files beside it, in its split folders too, stay (they were deleted with the split folders).
TEST(SyntheticDatasetTest, ForceReplacesOnlyWhatYoloSynthWrote) {
  ScratchDir dir("own_files");
  SyntheticOptions o = SmallOptions(dir.path());
  o.train_images = 6;
  GenerateOrDie(o);
  const std::map<std::string, std::string> mine = {
      {"train2017/mine.jpg", "my photo"}, {"val2017/notes.txt", "my notes"}, {"annotations/mine.json", "{}"},
      {"notes.txt", "mine"}};
  for (const auto& [file, text] : mine) ASSERT_TRUE(testing::WriteStringToFile(dir / file, text));
  o.force = true;
  o.train_images = 3;
  o.val_images = 0;
  o.seed = 8;
  GenerateOrDie(o);
  for (const auto& [file, text] : mine) EXPECT_EQ(ReadFileToString(dir / file), text) << file;
  std::set<std::string> images;
  for (const auto& entry : fs::directory_iterator(dir / "train2017")) images.insert(entry.path().filename());
  const json written = ReadJson(dir / "annotations/instances_train2017.json");
  ASSERT_EQ(written["images"].size(), 3u);
  std::set<std::string> expected = {"mine.jpg"};
  for (const json& image : written["images"]) expected.insert(image["file_name"].get<std::string>());
  EXPECT_EQ(images, expected) << "the earlier run's other images are gone, this run's written";
  EXPECT_FALSE(fs::exists(dir / "annotations/instances_val2017.json"));
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir / "val2017")) left.push_back(entry.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"notes.txt"});
  // This run's images are its own (seed 8), not the earlier run's kept.
  SyntheticOptions fresh = o;
  fresh.output_dir = dir / "fresh";
  fresh.force = false;
  GenerateOrDie(fresh);
  for (const std::string& image : expected)
    if (image != "mine.jpg")
      EXPECT_EQ(ReadFileToString(dir / ("train2017/" + image)), ReadFileToString(dir / ("fresh/train2017/" + image)));
}

TEST(SyntheticDatasetTest, ForceRemovesWhatAnEarlierRunWrote) {
  ScratchDir dir("stale");
  SyntheticOptions o = SmallOptions(dir.path());
  o.train_images = 6;
  GenerateOrDie(o);
  o.force = true;
  o.train_images = 3;
  o.val_images = 0;
  o.yolo_layout = true;
  GenerateOrDie(o);
  EXPECT_FALSE(fs::exists(dir / "train2017"));
  EXPECT_FALSE(fs::exists(dir / "val2017"));
  EXPECT_FALSE(fs::exists(dir / "annotations/instances_val2017.json"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "images/train2017"), fs::directory_iterator()), 3);
}

// A record made by hand or damaged: sizes past what yolo-synth writes are refused naming the record
// (its names were listed one by one, std::bad_alloc at 2^31 images), as is a split name holding a NUL;
// a size it may write costs what
// the folders hold, not the size (2^30 names were listed, tens of GB). A split folder that is a link
// (yolo-synth makes none) is refused: its files were removed through it.
TEST(SyntheticDatasetTest, ForceTrustsARecordOnlyAsFarAsTheFolderGoes) {
  ScratchDir dir("damaged_record");
  SyntheticOptions o = SmallOptions(dir.path());
  o.train_images = 2;
  o.val_images = 0;
  GenerateOrDie(o);
  const std::string record = dir / ".yolo-synth";
  const std::string text = ReadFileToString(record);
  const auto with_train_images = [&](const std::string& count) {
    std::string damaged = text;
    const std::string field = "\"train_images\": 2";
    damaged.replace(damaged.find(field), field.size(), "\"train_images\": " + count);
    ASSERT_TRUE(testing::WriteStringToFile(record, damaged));
  };
  o.force = true;
  SyntheticSummary summary;
  with_train_images("2147483647");
  const ffr::Status refused = GenerateSyntheticCoco(o, &summary);
  EXPECT_TRUE(refused.IsCorruption()) << refused.ToString();
  EXPECT_NE(refused.message().find(record + ": not the record yolo-synth keeps"), std::string::npos)
      << refused.ToString();
  // A split name the file system would cut at its NUL (the record's JSON may hold one).
  std::string nul_split = text;
  nul_split.replace(nul_split.find("\"val2017\""), 9, "\"x\\u0000y\"");
  ASSERT_TRUE(testing::WriteStringToFile(record, nul_split));
  EXPECT_TRUE(GenerateSyntheticCoco(o, &summary).IsCorruption());
  with_train_images("1073741823");
  GenerateOrDie(o);
  EXPECT_EQ(ReadFileToString(record), text);

  fs::create_directory(dir / "photos");
  ASSERT_TRUE(testing::WriteStringToFile(dir / "photos/000000000001.jpg", "my photo"));
  fs::rename(dir / "train2017", dir / "old");
  fs::create_directory_symlink(dir / "photos", dir / "train2017");
  const ffr::Status linked = GenerateSyntheticCoco(o, &summary);
  EXPECT_TRUE(linked.IsAlreadyExists()) << linked.ToString();
  EXPECT_NE(linked.message().find(dir / "train2017" + ": a link"), std::string::npos) << linked.ToString();
  EXPECT_EQ(ReadFileToString(dir / "photos/000000000001.jpg"), "my photo");
}

// Every file the generator writes goes through its Env: each failed call of a run is reported naming
// the file, leaves no temporary file, and never a JSON (the mark of a complete dataset).
TEST(SyntheticDatasetTest, EveryFailedWriteIsReportedAndLeavesNoCompleteDataset) {
  ScratchDir dir("synth_faults");
  SyntheticOptions o = SmallOptions(dir / "clean");
  o.train_images = 3;
  o.val_images = 1;
  o.yolo_layout = true;
  o.num_threads = 1;
  testing::FaultyEnv counting;
  o.env = &counting;
  GenerateOrDie(o);
  for (const testing::WriteOp op : {testing::WriteOp::kCreate, testing::WriteOp::kAppend, testing::WriteOp::kRename,
                                    testing::WriteOp::kCreateDirs}) {
    ASSERT_GT(counting.calls(op), 0) << testing::WriteOpName(op);
    for (int64_t n = 0; n < counting.calls(op); ++n) {
      SCOPED_TRACE(std::string(testing::WriteOpName(op)) + " #" + std::to_string(n));
      testing::FaultyEnv faulty;
      faulty.FailFrom(op, n);
      o.output_dir = dir / ("failed_" + std::to_string(static_cast<int>(op)) + "_" + std::to_string(n));
      o.env = &faulty;
      SyntheticSummary summary;
      const ffr::Status s = GenerateSyntheticCoco(o, &summary);
      ASSERT_FALSE(s.ok());
      EXPECT_TRUE(faulty.NamesAFailedPath(s.message())) << s.ToString();
      EXPECT_FALSE(fs::exists(o.output_dir + "/annotations/instances_val2017.json"));
      if (!fs::exists(o.output_dir)) continue;  // its first folder was not made
      for (const auto& entry : fs::recursive_directory_iterator(o.output_dir))
        EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
    }
  }
}

TEST(SyntheticDatasetTest, RejectsBadOptions) {
  ScratchDir dir("bad");
  const std::vector<std::pair<std::string, std::function<void(SyntheticOptions*)>>> cases = {
      {"no classes", [](SyntheticOptions* o) { o->num_classes = 0; }},
      {"too many classes", [](SyntheticOptions* o) { o->num_classes = MaxSyntheticClasses() + 1; }},
      {"empty size range", [](SyntheticOptions* o) { o->min_size = 200, o->max_size = 100; }},
      {"tiny fixed size", [](SyntheticOptions* o) { o->width = 8, o->height = 8; }},
      {"coco sizes and a fixed size", [](SyntheticOptions* o) { o->coco_sizes = true, o->width = o->height = 64; }},
      {"quality 0", [](SyntheticOptions* o) { o->jpeg_quality = 0; }},
      {"same split names", [](SyntheticOptions* o) { o->val_split = o->train_split; }},
      {"split named images", [](SyntheticOptions* o) { o->train_split = "images"; }},
      {"no train images", [](SyntheticOptions* o) { o->train_images = 0; }},
  };
  for (const auto& [what, mutate] : cases) {
    SyntheticOptions o = SmallOptions(dir.path());
    mutate(&o);
    SyntheticSummary summary;
    const ffr::Status s = GenerateSyntheticCoco(o, &summary);
    EXPECT_TRUE(s.IsInvalidArgument()) << what << ": " << s.ToString();
  }
  EXPECT_TRUE(fs::is_empty(dir.path())) << "bad options must not touch the output directory";
}

}  // namespace
}  // namespace ffyolo
