#include "dataset/packed_coco128.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "ffyolo/label_index.h"
#include "ffyolo/manifest.h"
#include "ffyolo/pack.h"
#include "testing/test_env.h"

namespace ffyolo::testing {

namespace fs = std::filesystem;

std::string PackCoco128(const std::string& dir) {
  PackOptions options;
  options.source = SharedPath("data/coco128");
  options.output = dir + "/coco128.ffr";
  options.scan.layout = SourceLayout::kCocoJson;
  options.shards = 3;
  options.threads = 2;
  PackSummary summary;
  const Status s = Pack(options, &summary);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return s.ok() ? options.output : "";
}

ScratchDir* PackedCoco128Test::scratch_ = nullptr;
std::string PackedCoco128Test::packed_;

void PackedCoco128Test::SetUpTestSuite() {
  if (SharedPath("data/coco128").empty()) return;
  scratch_ = new ScratchDir("packed");
  packed_ = PackCoco128(scratch_->path());
}

void PackedCoco128Test::TearDownTestSuite() {
  delete scratch_;
  scratch_ = nullptr;
  packed_.clear();
}

void PackedCoco128Test::SetUp() {
  FFYOLO_REQUIRE_SHARED(coco128, "data/coco128");
  ASSERT_FALSE(packed_.empty()) << "packing coco128 failed";
}

void CopyTree(const std::string& from, const std::string& to) {
  fs::copy(from, to, fs::copy_options::recursive);
}

ffr::ShardHeader ReadShardHeader(const std::string& shard) {
  const std::string data = ReadFileToString(shard);
  ffr::ShardHeader header;
  const Status s = ffr::ParseShardHeader(shard, reinterpret_cast<const uint8_t*>(data.data()), data.size(),
                                         data.size(), /*verify_meta_crc=*/false, &header);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return header;
}

void FlipByte(const std::string& path, uint64_t offset) {
  std::string data = ReadFileToString(path);
  ASSERT_LT(offset, data.size()) << path;
  data[offset] = static_cast<char>(~data[offset]);
  ASSERT_TRUE(WriteStringToFile(path, data));
}

void BreakImageEnd(const std::string& shard, int64_t local) {
  EditSample(shard, local, [&](std::string* sample) {
    ASSERT_EQ(sample->substr(sample->size() - 2), "\xFF\xD9") << "sample " << local << " does not end with a JPEG EOI";
    (*sample)[sample->size() - 2] = (*sample)[sample->size() - 1] = 0;
  });
}

void EditSample(const std::string& shard, int64_t local, const std::function<void(std::string* sample)>& edit) {
  std::string data = ReadFileToString(shard);
  const ffr::ShardHeader header = ReadShardHeader(shard);
  ASSERT_LT(local, header.count());
  std::string sample = data.substr(header.offsets[local], header.sample_size(local));
  const size_t size = sample.size();
  edit(&sample);
  ASSERT_EQ(sample.size(), size) << "EditSample keeps the sample's length";
  data.replace(header.offsets[local], size, sample);
  std::vector<uint32_t> crcs = header.crcs;
  crcs[local] = ffr::Crc32(data.data() + header.offsets[local], header.sample_size(local));
  const std::vector<uint64_t> offsets(header.offsets.begin(), header.offsets.end() - 1);
  const std::string encoded = ffr::EncodeShardHeader(crcs, offsets);
  data.replace(0, encoded.size(), encoded);
  ASSERT_TRUE(WriteStringToFile(shard, data));
  RecordShardHeaderInManifest(shard);
}

void RecordShardHeaderInManifest(const std::string& shard) {
  const fs::path path(shard);
  const std::string manifest_path = path.parent_path().parent_path() / kManifestFile;
  Manifest m;
  ASSERT_TRUE(Manifest::FromYaml(ReadFileToString(manifest_path), manifest_path, &m).ok());
  const std::string split = path.parent_path().filename().string(), file = path.filename().string();
  bool found = false;
  for (SplitInfo& s : m.splits)
    for (ShardInfo& info : s.shards)
      if (s.name == split && info.file == file) {
        info.meta_crc = ReadShardHeader(shard).meta_crc;
        found = true;
      }
  ASSERT_TRUE(found) << shard << " is not in " << manifest_path;
  ASSERT_TRUE(WriteStringToFile(manifest_path, m.ToYaml()));
}

void EditLabelIndex(const std::string& split_dir, size_t sample,
                    const std::function<void(RecordInfo*, std::vector<EvalBox>*)>& edit) {
  const std::string path = split_dir + "/" + kLabelIndexFile;
  LabelIndex original, rewritten;
  const Status s = LabelIndex::ReadFile(path, &original);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_LT(sample, original.size());
  std::vector<uint64_t> eval_begin{0};
  std::vector<EvalBox> all_eval;
  for (size_t i = 0; i < original.size(); ++i) {
    RecordInfo info = original.info(i);
    std::vector<EvalBox> eval;
    if (original.has_eval_boxes()) eval.assign(original.eval_boxes(i), original.eval_boxes(i) + original.eval_box_count(i));
    if (i == sample) edit(&info, &eval);
    rewritten.Add(info, original.image_bytes(i));
    all_eval.insert(all_eval.end(), eval.begin(), eval.end());
    eval_begin.push_back(all_eval.size());
  }
  if (original.has_eval_boxes()) {
    ASSERT_TRUE(rewritten.SetEvalBoxes(std::move(eval_begin), std::move(all_eval)).ok());
  }
  uint32_t crc = 0;
  ASSERT_TRUE(rewritten.WriteFile(path, ffr::Env::Default(), &crc).ok());
  // As a pack of labels saying so would have recorded it.
  const fs::path split(split_dir);
  const std::string manifest_path = split.parent_path() / kManifestFile;
  Manifest m;
  ASSERT_TRUE(Manifest::FromYaml(ReadFileToString(manifest_path), manifest_path, &m).ok());
  for (SplitInfo& info : m.splits)
    if (info.name == split.filename().string()) info.label_index_crc = crc;
  ASSERT_TRUE(WriteStringToFile(manifest_path, m.ToYaml()));
}

void ShiftIndexedBox(const std::string& split_dir, size_t sample, float dx) {
  EditLabelIndex(split_dir, sample, [&](RecordInfo* info, std::vector<EvalBox>*) {
    ASSERT_GT(info->boxes.size(), 0u) << "sample " << sample << " has no box to shift";
    info->boxes[0].cx += dx;
  });
}

}  // namespace ffyolo::testing
