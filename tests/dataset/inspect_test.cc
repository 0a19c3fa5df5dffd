// yolo-ffr's library on a packed coco128: statistics checked against the COCO
// JSON, verify on a clean dataset and on damaged copies, reading samples back.
#include "ffyolo/inspect.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "dataset/packed_coco128.h"
#include "ffr/shard_writer.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using testing::kCocoSplit;
using testing::ReadFileToString;
using testing::ScratchDir;
using testing::SharedPath;

// What the official coco128 instances JSON says, counted independently of the packer.
struct CocoTruth {
  std::map<int, int64_t> boxes_per_category;
  std::map<int, std::set<int64_t>> images_per_category;
  std::map<int64_t, int64_t> boxes_per_image;
  std::map<int64_t, std::string> file_names;
  double min_aspect = 1e9, max_aspect = 0;

  static CocoTruth Load() {
    const auto json =
        nlohmann::json::parse(ReadFileToString(SharedPath("data/coco128/annotations/instances_train2017.json")));
    CocoTruth t;
    for (const auto& image : json["images"]) {
      const int64_t id = image["id"];
      t.file_names[id] = image["file_name"];
      t.boxes_per_image[id] = 0;
      const double aspect = image["width"].get<double>() / image["height"].get<double>();
      t.min_aspect = std::min(t.min_aspect, aspect);
      t.max_aspect = std::max(t.max_aspect, aspect);
    }
    for (const auto& a : json["annotations"]) {
      const int category = a["category_id"];
      ++t.boxes_per_category[category];
      t.images_per_category[category].insert(a["image_id"].get<int64_t>());
      ++t.boxes_per_image[a["image_id"].get<int64_t>()];
    }
    return t;
  }
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class InspectTest : public testing::PackedCoco128Test {
 protected:
  void SetUp() override {
    PackedCoco128Test::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(Dataset::Open(packed(), &dataset_).ok());
  }

  // A fresh copy of the packed dataset that the test may damage.
  std::string Copy() {
    copy_.reset(new ScratchDir("copy"));
    const std::string path = *copy_ / "coco128.ffr";
    testing::CopyTree(packed(), path);
    return path;
  }
  std::string Shard(const std::string& dataset, size_t k) const {
    return dataset + "/" + kCocoSplit + "/" + ShardInfoOf(k).file;
  }
  const ShardInfo& ShardInfoOf(size_t k) const { return dataset_->manifest().FindSplit(kCocoSplit)->shards.at(k); }
  // The split index of shard k's first sample, from the manifest.
  int64_t ShardStart(size_t k) const {
    int64_t start = 0;
    for (size_t i = 0; i < k; ++i) start += ShardInfoOf(i).samples;
    return start;
  }

  static VerifyReport Verify(const std::string& path, VerifyOptions options = VerifyOptions()) {
    VerifyReport report;
    if (options.workers == 0) options.workers = 2;
    const Status s = VerifyDataset(path, options, &report);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return report;
  }
  static std::string Problems(const VerifyReport& report) {
    std::string out;
    for (const VerifyProblem& p : report.problems) out += p.message + "\n";
    return out;
  }

  std::unique_ptr<Dataset> dataset_;
  std::unique_ptr<ScratchDir> copy_;
};

// ---- info

TEST_F(InspectTest, InfoCountsAgreeWithTheCocoJson) {
  SplitStats stats;
  ASSERT_TRUE(ComputeSplitStats(*dataset_, kCocoSplit, &stats).ok());
  EXPECT_EQ(stats.samples, 128);
  EXPECT_EQ(stats.boxes, 939);
  EXPECT_EQ(stats.crowd_boxes, 10);
  EXPECT_EQ(stats.background, 2);
  EXPECT_EQ(stats.skipped, 0);
  EXPECT_EQ(stats.shards, 3u);
  EXPECT_DOUBLE_EQ(stats.mean_boxes, 939.0 / 128);

  const CocoTruth truth = CocoTruth::Load();
  ASSERT_EQ(stats.classes.size(), 80u);
  int64_t sum = 0;
  for (const ClassCount& c : stats.classes) {
    sum += c.boxes;
    const auto boxes = truth.boxes_per_category.find(c.category_id);
    EXPECT_EQ(c.boxes, boxes == truth.boxes_per_category.end() ? 0 : boxes->second) << c.name;
    const auto images = truth.images_per_category.find(c.category_id);
    EXPECT_EQ(c.images, images == truth.images_per_category.end() ? 0 : images->second.size()) << c.name;
  }
  EXPECT_EQ(sum, 939);
  EXPECT_EQ(stats.classes[0].name, "person");
  for (const ClassCount& c : stats.classes) EXPECT_LE(c.boxes, stats.classes[0].boxes) << c.name;

  // The sizes the coco128 README gives.
  EXPECT_EQ(stats.width.min, 333);
  EXPECT_EQ(stats.width.max, 640);
  EXPECT_EQ(stats.height.min, 218);
  EXPECT_EQ(stats.height.max, 640);
  EXPECT_DOUBLE_EQ(stats.aspect.min, truth.min_aspect);
  EXPECT_DOUBLE_EQ(stats.aspect.max, truth.max_aspect);
  EXPECT_GT(stats.box_width.min, 0);
  EXPECT_LE(stats.box_width.max, 640);
  EXPECT_LE(stats.box_width.min, stats.box_width.median);
  EXPECT_LE(stats.box_width.median, stats.box_width.max);
}

TEST_F(InspectTest, InfoJsonAndTextCarryTheSameNumbers) {
  SplitStats stats;
  ASSERT_TRUE(ComputeSplitStats(*dataset_, kCocoSplit, &stats).ok());
  const auto json = nlohmann::json::parse(SplitStatsToJson(*dataset_, {stats}));
  ASSERT_EQ(json["splits"].size(), 1u);
  const auto& split = json["splits"][0];
  EXPECT_EQ(split["name"], kCocoSplit);
  EXPECT_EQ(split["samples"], 128);
  EXPECT_EQ(split["boxes"], 939);
  EXPECT_EQ(split["crowd_boxes"], 10);
  EXPECT_EQ(split["background"], 2);
  EXPECT_EQ(split["image_height"]["min"], 218);
  int64_t sum = 0;
  for (const auto& c : split["classes"]) sum += c["boxes"].get<int64_t>();
  EXPECT_EQ(sum, 939);
  EXPECT_EQ(json["names"].size(), 80u);

  const std::vector<std::string> lines = Lines(FormatSplitStats(stats));
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("128 samples, 939 boxes (10 crowd), 2 background"), std::string::npos) << lines[0];
  size_t header = 0;
  while (header < lines.size() && lines[header].find("class") == std::string::npos) ++header;
  ASSERT_LT(header + 1, lines.size());
  EXPECT_EQ(lines[header + 1].find("  person "), 0u) << "the most frequent class comes first: " << lines[header + 1];
  EXPECT_EQ(split["exif_oriented"], 0);  // coco128's JPEGs carry no orientation but 1
  EXPECT_EQ(FormatSplitStats(stats).find("EXIF"), std::string::npos);  // nothing to say
}

// Images packed with an EXIF orientation other than 1 are counted in info's text and JSON; a dataset
// packed before yolo-pack read EXIF says the orientations were not recorded.
TEST_F(InspectTest, InfoCountsExifOrientedImages) {
  SplitStats stats;
  ASSERT_TRUE(ComputeSplitStats(*dataset_, kCocoSplit, &stats).ok());
  stats.exif_oriented = 37;
  stats.exif_applied = true;
  EXPECT_NE(FormatSplitStats(stats).find("37 images with an EXIF orientation other than 1: trained and shown as "
                                         "viewed"),
            std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(SplitStatsToJson(*dataset_, {stats}))["splits"][0]["exif_applied"], true);
  stats.exif_applied = false;
  EXPECT_NE(FormatSplitStats(stats).find("37 images with an EXIF orientation other than 1: trained and shown as "
                                         "stored, not turned"),
            std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(SplitStatsToJson(*dataset_, {stats}))["splits"][0]["exif_oriented"], 37);
  stats.exif_oriented = -1;
  EXPECT_NE(FormatSplitStats(stats).find("EXIF orientations not recorded"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(SplitStatsToJson(*dataset_, {stats}))["splits"][0]["exif_oriented"].is_null());
}

// ---- verify

TEST_F(InspectTest, VerifyPassesTheCleanDataset) {
  const VerifyReport report = Verify(packed());
  EXPECT_TRUE(report.ok()) << Problems(report);
  EXPECT_EQ(report.samples, 128);
  EXPECT_EQ(report.images, 128);
  EXPECT_EQ(report.shards, 3);

  VerifyOptions decode;
  decode.full_decode = true;
  decode.workers = 1;
  decode.batch_size = 5;
  int64_t last_done = 0, total = 0;
  decode.on_progress = [&](int64_t done, int64_t all) {
    EXPECT_GT(done, last_done);
    last_done = done;
    total = all;
  };
  const VerifyReport decoded = Verify(packed(), decode);
  EXPECT_TRUE(decoded.ok()) << Problems(decoded);
  EXPECT_EQ(last_done, 128);
  EXPECT_EQ(total, 128);
}

TEST_F(InspectTest, VerifyFindsAFlippedSampleByte) {
  const std::string path = Copy();
  const ffr::ShardHeader header = testing::ReadShardHeader(Shard(path, 1));
  const int64_t local = 5;
  testing::FlipByte(Shard(path, 1), header.offsets[local] + header.sample_size(local) / 2);

  const VerifyReport report = Verify(path);
  ASSERT_EQ(report.problems.size(), 1u) << Problems(report);
  const VerifyProblem& p = report.problems[0];
  EXPECT_EQ(p.split, kCocoSplit);
  EXPECT_EQ(p.file, ShardInfoOf(1).file);
  EXPECT_EQ(p.sample, ShardStart(1) + local);
  LabelIndex index;
  ASSERT_TRUE(dataset_->LoadLabelIndex(kCocoSplit, &index).ok());
  EXPECT_EQ(p.image, index.file_name(p.sample));
  EXPECT_NE(p.message.find("checksum mismatch"), std::string::npos) << p.message;
  EXPECT_NE(p.message.find(ShardInfoOf(1).file + " sample 5"), std::string::npos) << p.message;
  EXPECT_NE(p.message.find(p.image), std::string::npos) << p.message;
  EXPECT_EQ(report.samples, 128);
}

TEST_F(InspectTest, VerifyFindsAFlippedHeaderByteAndChecksTheOtherShards) {
  const std::string path = Copy();
  testing::FlipByte(Shard(path, 2), ffr::kShardPrefixSize + 4 * 3);  // sample 3's CRC

  const VerifyReport report = Verify(path);
  ASSERT_EQ(report.problems.size(), 1u) << Problems(report);
  EXPECT_EQ(report.problems[0].file, ShardInfoOf(2).file);
  EXPECT_EQ(report.problems[0].sample, -1);
  EXPECT_NE(report.problems[0].message.find("header checksum mismatch"), std::string::npos)
      << report.problems[0].message;
  EXPECT_EQ(report.samples, 128 - ShardInfoOf(2).samples);
  EXPECT_EQ(report.shards, 2);
}

TEST_F(InspectTest, VerifyFindsATruncatedShard) {
  const std::string path = Copy();
  fs::resize_file(Shard(path, 0), ShardInfoOf(0).bytes - 1000);

  const VerifyReport report = Verify(path);
  ASSERT_EQ(report.problems.size(), 2u) << Problems(report);
  EXPECT_EQ(report.problems[0].file, ShardInfoOf(0).file);
  EXPECT_EQ(report.problems[0].sample, -1);
  EXPECT_NE(report.problems[0].message.find("(truncated)"), std::string::npos) << report.problems[0].message;
  // The cut falls into the last sample.
  EXPECT_EQ(report.problems[1].file, ShardInfoOf(0).file);
  EXPECT_EQ(report.problems[1].sample, ShardInfoOf(0).samples - 1);
}

TEST_F(InspectTest, VerifyFindsAShardCutInsideItsHeader) {
  const std::string path = Copy();
  fs::resize_file(Shard(path, 1), 100);

  const VerifyReport report = Verify(path);
  ASSERT_EQ(report.problems.size(), 2u) << Problems(report);
  for (const VerifyProblem& p : report.problems) {
    EXPECT_EQ(p.file, ShardInfoOf(1).file);
    EXPECT_EQ(p.sample, -1);
  }
  EXPECT_NE(report.problems[0].message.find("(truncated)"), std::string::npos) << report.problems[0].message;
  EXPECT_EQ(report.samples, 128 - ShardInfoOf(1).samples);
}

TEST_F(InspectTest, VerifyFindsAMissingShard) {
  const std::string path = Copy();
  fs::remove(Shard(path, 1));

  const VerifyReport report = Verify(path);
  ASSERT_EQ(report.problems.size(), 1u) << Problems(report);
  EXPECT_EQ(report.problems[0].file, ShardInfoOf(1).file);
  EXPECT_NE(report.problems[0].message.find("missing shard"), std::string::npos) << report.problems[0].message;
  EXPECT_EQ(report.samples, 128 - ShardInfoOf(1).samples);
}

TEST_F(InspectTest, VerifyFindsADeletedLabelIndexAndStillChecksTheSamples) {
  const std::string path = Copy();
  fs::remove(path + "/" + kCocoSplit + "/" + kLabelIndexFile);

  const VerifyReport report = Verify(path);
  ASSERT_EQ(report.problems.size(), 1u) << Problems(report);
  EXPECT_EQ(report.problems[0].file, kLabelIndexFile);
  EXPECT_EQ(report.problems[0].sample, -1);
  EXPECT_NE(report.problems[0].message.find(kLabelIndexFile), std::string::npos) << report.problems[0].message;
  EXPECT_EQ(report.samples, 128);
}

TEST_F(InspectTest, VerifyFindsALabelIndexThatDisagreesWithItsRecord) {
  const std::string path = Copy();
  const size_t sample = 50;
  ASSERT_NO_FATAL_FAILURE(testing::ShiftIndexedBox(path + "/" + kCocoSplit, sample, 0.01f));

  const VerifyReport report = Verify(path);
  ASSERT_EQ(report.problems.size(), 1u) << Problems(report);
  const VerifyProblem& p = report.problems[0];
  EXPECT_EQ(p.sample, static_cast<int64_t>(sample));
  EXPECT_EQ(p.file, ShardInfoOf(1).file);  // shards of 43, 43 and 42 samples
  EXPECT_NE(p.message.find("disagree"), std::string::npos) << p.message;
  EXPECT_NE(p.message.find("box 0"), std::string::npos) << p.message;
}

TEST_F(InspectTest, LabelIndexWithAClassBeyondTheNamesIsRefused) {
  const std::string path = Copy();
  const size_t sample = 7;
  uint16_t original_class = 0;
  std::string file_name;
  const auto expect_refused = [&](const char* what) {
    std::unique_ptr<Dataset> dataset;
    ASSERT_TRUE(Dataset::Open(path, &dataset).ok());
    LabelIndex index;
    const Status s = dataset->LoadLabelIndex(kCocoSplit, &index);
    EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
    EXPECT_NE(s.message().find("sample 7 (" + file_name + ")"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("80 names"), std::string::npos) << s.message();
  };
  ASSERT_NO_FATAL_FAILURE(testing::EditLabelIndex(path + "/" + kCocoSplit, sample,
                                                  [&](RecordInfo* info, std::vector<EvalBox>* eval) {
                                                    ASSERT_FALSE(info->boxes.empty() || eval->empty());
                                                    file_name = info->file_name;
                                                    original_class = info->boxes[0].class_index;
                                                    info->boxes[0].class_index = 80;
                                                  }));
  expect_refused("a training box");
  ASSERT_NO_FATAL_FAILURE(testing::EditLabelIndex(path + "/" + kCocoSplit, sample,
                                                  [&](RecordInfo* info, std::vector<EvalBox>* eval) {
                                                    info->boxes[0].class_index = original_class;
                                                    eval->back().class_index = 80;
                                                  }));
  expect_refused("a COCO annotation");
}

TEST_F(InspectTest, VerifyFindsAnImageThatOnlyTheImageCheckSees) {
  const std::string path = Copy();
  const int64_t local = 7;
  ASSERT_NO_FATAL_FAILURE(testing::BreakImageEnd(Shard(path, 2), local));

  const VerifyReport report = Verify(path);
  ASSERT_EQ(report.problems.size(), 1u) << Problems(report);
  EXPECT_EQ(report.problems[0].sample, ShardStart(2) + local);
  EXPECT_NE(report.problems[0].message.find("truncated JPEG"), std::string::npos) << report.problems[0].message;

  VerifyOptions no_images;
  no_images.check_images = false;
  const VerifyReport unchecked = Verify(path, no_images);
  EXPECT_TRUE(unchecked.ok()) << Problems(unchecked);
  EXPECT_EQ(unchecked.images, 0);
}

TEST_F(InspectTest, VerifyRefusesADatasetWithoutManifest) {
  const std::string path = Copy();
  fs::remove(path + "/" + kManifestFile);
  VerifyReport report;
  const Status s = VerifyDataset(path, VerifyOptions(), &report);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(kManifestFile), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("did not finish"), std::string::npos) << s.message();
}

TEST_F(InspectTest, VerifyFindsAStrayShardTheManifestDoesNotList) {
  const std::string path = Copy();
  fs::copy_file(Shard(path, 0), path + "/" + kCocoSplit + "/PART_00099.ffr");

  const VerifyReport report = Verify(path);
  ASSERT_EQ(report.problems.size(), 1u) << Problems(report);
  EXPECT_EQ(report.problems[0].file, "PART_00099.ffr");
  EXPECT_NE(report.problems[0].message.find("does not list"), std::string::npos) << report.problems[0].message;
}

TEST_F(InspectTest, VerifyRefusesAManifestWithoutSplitsOrWithAWrongNc) {
  const std::string path = Copy();
  const std::string original = testing::ReadFileToString(path + "/" + kManifestFile);
  for (const auto& [from, to, expected] :
       std::vector<std::array<std::string, 3>>{{"nc: 80", "nc: 79", "nc is 79 but names lists 80 classes"},
                                               {"splits:", "old_splits:", "lists no splits"}}) {
    std::string manifest = original;
    const size_t at = manifest.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    manifest.replace(at, from.size(), to);
    ASSERT_TRUE(testing::WriteStringToFile(path + "/" + kManifestFile, manifest));
    VerifyReport report;
    const Status s = VerifyDataset(path, VerifyOptions(), &report);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.message().find(expected), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(kManifestFile), std::string::npos) << s.message();
  }
}

TEST_F(InspectTest, VerifyRefusesAnUnknownSplit) {
  VerifyOptions options;
  options.splits = {"val2017"};
  VerifyReport report;
  const Status s = VerifyDataset(packed(), options, &report);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("val2017"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(kCocoSplit), std::string::npos) << s.message();
}

// ---- ls, cat, extract

TEST_F(InspectTest, IndexEntryNamesTheSample) {
  LabelIndex index;
  ASSERT_TRUE(dataset_->LoadLabelIndex(kCocoSplit, &index).ok());
  const CocoTruth truth = CocoTruth::Load();
  for (size_t i = 0; i < index.size(); ++i) {
    const std::string line = FormatIndexEntry(index, i);
    ASSERT_EQ(Lines(line).size(), 1u) << line;
    std::istringstream in(line);
    size_t position;
    int64_t id;
    std::string name, size, encoding;
    uint64_t bytes;
    size_t boxes;
    in >> position >> id >> name >> size >> encoding >> bytes >> boxes;
    EXPECT_EQ(position, i);
    EXPECT_EQ(truth.file_names.at(id), name);
    EXPECT_EQ(bytes, fs::file_size(SharedPath("data/coco128/images/train2017/" + name)));
    EXPECT_EQ(static_cast<int64_t>(boxes), truth.boxes_per_image.at(id)) << line;
    EXPECT_EQ(encoding, "jpeg");
  }
}

TEST_F(InspectTest, CatByImageId) {
  int64_t index = -1;
  ASSERT_TRUE(FindSampleByImageId(*dataset_, kCocoSplit, 9, &index).ok());
  std::unique_ptr<ffr::Reader> reader;
  ASSERT_TRUE(dataset_->OpenReader(kCocoSplit, ffr::ReaderOptions(), &reader).ok());
  ffr::ReadBuffer buffer;
  RecordView record;
  ASSERT_TRUE(ReadRecord(*reader, index, &buffer, &record).ok());
  EXPECT_EQ(record.image_id(), 9);
  EXPECT_EQ(record.file_name(), "000000000009.jpg");
  const CocoTruth truth = CocoTruth::Load();
  ASSERT_EQ(static_cast<int64_t>(record.box_count()), truth.boxes_per_image.at(9));

  const std::vector<std::string> lines =
      Lines(FormatRecord(dataset_->manifest(), index, record, /*exif_applied=*/true));
  ASSERT_EQ(lines.size(), 2 + record.box_count());
  EXPECT_NE(lines[0].find("image id 9, 000000000009.jpg, 640x480 jpeg"), std::string::npos) << lines[0];
  for (size_t j = 0; j < record.box_count(); ++j)
    EXPECT_NE(lines[2 + j].find(dataset_->manifest().names[record.box(j).class_index]), std::string::npos)
        << lines[2 + j];

  EXPECT_TRUE(FindSampleByImageId(*dataset_, kCocoSplit, 1, &index).IsNotFound());
  EXPECT_TRUE(ReadRecord(*reader, 128, &buffer, &record).IsInvalidArgument());
}

// Parses "cls cx cy w h" rows.
std::vector<std::vector<double>> YoloRows(const std::string& text) {
  std::vector<std::vector<double>> rows;
  for (const std::string& line : Lines(text)) {
    std::istringstream in(line);
    std::vector<double> row(5);
    for (double& v : row) in >> v;
    EXPECT_FALSE(in.fail()) << line;
    rows.push_back(row);
  }
  return rows;
}

TEST_F(InspectTest, ExtractGivesBackTheSourceBytesAndItsLabels) {
  ScratchDir out("extract");
  std::unique_ptr<ffr::Reader> reader;
  ASSERT_TRUE(dataset_->OpenReader(kCocoSplit, ffr::ReaderOptions(), &reader).ok());
  ffr::ReadBuffer buffer;
  const std::string source = SharedPath("data/coco128");
  for (int64_t i = 0; i < reader->size(); ++i) {
    RecordView record;
    ASSERT_TRUE(ReadRecord(*reader, i, &buffer, &record).ok());
    std::string image_path;
    const Status s = ExtractRecord(dataset_->manifest(), i, record, /*exif_applied=*/true, out.path(),
                                   /*replace=*/false, &image_path);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const std::string name(record.file_name());
    const std::string stem = name.substr(0, name.rfind('.'));
    EXPECT_EQ(image_path, out / name);
    ASSERT_TRUE(ReadFileToString(image_path) == ReadFileToString(source + "/images/train2017/" + name))
        << name << " differs from the source image";

    // The YOLO labels of coco128 are the non-crowd JSON boxes rounded to ~6 digits.
    const std::string yolo = source + "/labels/train2017/" + stem + ".txt";
    const auto expected = YoloRows(fs::exists(yolo) ? ReadFileToString(yolo) : "");
    const auto got = YoloRows(ReadFileToString(out / (stem + ".txt")));
    ASSERT_EQ(got.size(), expected.size()) << name;
    for (size_t r = 0; r < got.size(); ++r)
      for (size_t k = 0; k < 5; ++k) EXPECT_NEAR(got[r][k], expected[r][k], 1e-4) << name << " row " << r;

    const auto meta = nlohmann::json::parse(ReadFileToString(out / (stem + ".json")));
    EXPECT_EQ(meta["index"], i);
    EXPECT_EQ(meta["image_id"], record.image_id());
    EXPECT_EQ(meta["file_name"], name);
    EXPECT_EQ(meta["boxes"].size(), record.box_count());
  }
}

// A shard swapped for one of the same sample count (another pack's) passed yolo-train, yolo-val,
// cat and show: its size differs from the manifest's, which opening the split checks.
TEST_F(InspectTest, AShardOfAnotherPackIsRefusedWhenTheSplitIsOpened) {
  const std::string copy = Copy();
  size_t a = 0, b = 1;  // two shards of one sample count
  const size_t shards = dataset_->manifest().FindSplit(kCocoSplit)->shards.size();
  while (a + 1 < shards && ShardInfoOf(a).samples != ShardInfoOf(b).samples)
    if (++b == shards) b = ++a + 1;
  ASSERT_LT(b, shards) << "no two shards hold as many samples";
  const std::string first = Shard(copy, a), second = Shard(copy, b);
  fs::rename(first, first + ".swap");
  fs::rename(second, first);
  fs::rename(first + ".swap", second);
  std::unique_ptr<Dataset> dataset;
  ASSERT_TRUE(Dataset::Open(copy, &dataset).ok());
  std::unique_ptr<ffr::Reader> reader;
  const Status s = dataset->OpenReader(kCocoSplit, ffr::ReaderOptions(), &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(first + ": " + std::to_string(ShardInfoOf(b).bytes) + " bytes, the manifest lists " +
                             std::to_string(ShardInfoOf(a).bytes)),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(": a damaged shard, or another pack's"), std::string::npos)
      << s.message();
}

// A shard of another pack with as many samples and as many bytes (here: one byte of one image differs,
// the shard otherwise sound) is told apart by its header's CRC, which the manifest records.
TEST_F(InspectTest, AShardOfTheSameSizeButOtherSamplesIsRefused) {
  const std::string copy = Copy();
  const std::string path = Shard(copy, 0);
  std::unique_ptr<ffr::Reader> original;
  ASSERT_TRUE(ffr::Reader::Open(path, ffr::ReaderOptions(), &original).ok());
  ffr::ShardWriterOptions options;
  options.sample_alignment = std::stoull(dataset_->manifest().options.at("align"));
  std::unique_ptr<ffr::ShardWriter> writer;
  ASSERT_TRUE(ffr::ShardWriter::Create(path + ".other", original->size(), options, &writer).ok());
  ffr::ReadBuffer buffer;
  for (int64_t i = 0; i < original->size(); ++i) {
    ffr::Sample sample;
    ASSERT_TRUE(original->Read(i, &buffer, &sample).ok());
    std::string bytes(reinterpret_cast<const char*>(sample.data), sample.size);
    if (i == 0) bytes[bytes.size() / 2] ^= 0x01;
    ASSERT_TRUE(writer->Append(bytes.data(), bytes.size()).ok());
  }
  ASSERT_TRUE(writer->Finish().ok());
  original.reset();
  ASSERT_EQ(fs::file_size(path + ".other"), fs::file_size(path));
  fs::rename(path + ".other", path);

  std::unique_ptr<Dataset> dataset;
  ASSERT_TRUE(Dataset::Open(copy, &dataset).ok());
  std::unique_ptr<ffr::Reader> reader;
  const Status s = dataset->OpenReader(kCocoSplit, ffr::ReaderOptions(), &reader);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(path + ": its header's CRC is "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("another pack's shard"), std::string::npos) << s.message();
  dataset.reset();
  EXPECT_NE(Problems(Verify(copy)).find(path + ": its header's CRC is "), std::string::npos);
}

// A label index copied from another pack (same sample count) gave yolo-ffr info, ls and yolo-train
// another dataset's boxes: its CRC, which the manifest records, tells it apart.
TEST_F(InspectTest, ALabelIndexOfAnotherPackIsRefused) {
  const std::string copy = Copy();
  const std::string index_path = copy + "/" + kCocoSplit + "/" + kLabelIndexFile;
  LabelIndex index;
  ASSERT_TRUE(LabelIndex::ReadFile(index_path, &index).ok());
  LabelIndex other;
  for (size_t i = 0; i < index.size(); ++i) {
    RecordInfo info = index.info(i);
    if (i == 0) info.boxes.clear();
    other.Add(info, index.image_bytes(i));
  }
  ASSERT_TRUE(other.WriteFile(index_path).ok());
  std::unique_ptr<Dataset> dataset;
  ASSERT_TRUE(Dataset::Open(copy, &dataset).ok());
  LabelIndex loaded;
  const Status s = dataset->LoadLabelIndex(kCocoSplit, &loaded);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(index_path + ": its CRC is "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("another pack's label index"), std::string::npos) << s.message();
}

// Extracting into a folder of labelled images overwrote the user's own label file (a polygon) with a
// box: a file of the same name is refused, untouched, unless replacing is asked for.
TEST_F(InspectTest, ExtractRefusesToReplaceAFileUnlessAsked) {
  ScratchDir out("extract_over");
  std::unique_ptr<ffr::Reader> reader;
  ASSERT_TRUE(dataset_->OpenReader(kCocoSplit, ffr::ReaderOptions(), &reader).ok());
  ffr::ReadBuffer buffer;
  RecordView record;
  ASSERT_TRUE(ReadRecord(*reader, 0, &buffer, &record).ok());
  const std::string name(record.file_name());
  const std::string labels = out / (name.substr(0, name.rfind('.')) + ".txt");
  const std::string polygon = "0 0.1 0.1 0.5 0.1 0.3 0.6\n";
  std::ofstream(labels) << polygon;
  std::string image_path;
  Status s = ExtractRecord(dataset_->manifest(), 0, record, /*exif_applied=*/true, out.path(), /*replace=*/false,
                           &image_path);
  EXPECT_TRUE(s.IsAlreadyExists()) << s.ToString();
  EXPECT_NE(s.message().find(labels + " exists, and extracting sample 0 would replace it; --force replaces it"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(ReadFileToString(labels), polygon);
  EXPECT_FALSE(fs::exists(out / name)) << "nothing is written when one file is refused";
  s = ExtractRecord(dataset_->manifest(), 0, record, /*exif_applied=*/true, out.path(), /*replace=*/true,
                    &image_path);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ReadFileToString(labels), YoloLabelText(record));
}

}  // namespace
}  // namespace ffyolo
