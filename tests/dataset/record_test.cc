// The record, label index and manifest encodings round-trip and reject damage.
#include <gtest/gtest.h>
#include <zstd.h>

#include <cmath>

#include "ffyolo/label_index.h"
#include "ffyolo/manifest.h"
#include "ffyolo/record.h"
#include "testing/faulty_env.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

RecordInfo SampleInfo() {
  RecordInfo info;
  info.encoding = ImageEncoding::kPng;
  info.width = 640;
  info.height = 427;
  info.image_id = 9;
  info.file_name = "000000000009.jpg";
  info.boxes.push_back({45, false, 0.479f, 0.688f, 0.955f, 0.595f, 120057.1f});
  info.boxes.push_back({0, true, 0.1f, 0.2f, 0.05f, 0.07f, 33.5f});
  return info;
}

TEST(RecordTest, RoundTrip) {
  const RecordInfo info = SampleInfo();
  std::string rec;
  ASSERT_TRUE(EncodeRecord(info, "IMAGEBYTES", &rec).ok());
  EXPECT_EQ(rec.size(), kRecordHeaderSize + info.file_name.size() + 2 * kRecordBoxSize + 10);
  RecordView v;
  ASSERT_TRUE(RecordView::Parse(reinterpret_cast<const uint8_t*>(rec.data()), rec.size(), "s0", &v).ok());
  EXPECT_EQ(v.encoding(), ImageEncoding::kPng);
  EXPECT_EQ(v.width(), 640u);
  EXPECT_EQ(v.height(), 427u);
  EXPECT_EQ(v.image_id(), 9);
  EXPECT_EQ(v.file_name(), "000000000009.jpg");
  EXPECT_EQ(v.boxes(), info.boxes);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(v.image_data()), v.image_size()), "IMAGEBYTES");
}

// Byte 7 holds the EXIF orientation: 1 to 8 as packed, 0 in records packed before it was read; more is
// refused both ways.
TEST(RecordTest, ExifOrientationRoundTripsInByte7) {
  for (uint8_t orientation = 0; orientation <= 8; ++orientation) {
    RecordInfo info = SampleInfo();
    info.exif_orientation = orientation;
    std::string rec;
    ASSERT_TRUE(EncodeRecord(info, "IMAGE", &rec).ok());
    EXPECT_EQ(static_cast<uint8_t>(rec[7]), orientation);
    RecordView v;
    ASSERT_TRUE(RecordView::Parse(reinterpret_cast<const uint8_t*>(rec.data()), rec.size(), "s0", &v).ok());
    EXPECT_EQ(v.exif_orientation(), orientation);
    EXPECT_EQ(v.info().exif_orientation, orientation);
  }
  EXPECT_EQ(RecordInfo().exif_orientation, 1);  // a record made without reading EXIF says "as stored"
  RecordInfo info = SampleInfo();
  info.exif_orientation = 9;
  std::string rec;
  EXPECT_TRUE(EncodeRecord(info, "IMAGE", &rec).IsInvalidArgument());
  EXPECT_TRUE(rec.empty());  // nothing appended
  info.exif_orientation = 8;
  ASSERT_TRUE(EncodeRecord(info, "IMAGE", &rec).ok());
  rec[7] = 9;
  RecordView v;
  const Status s = RecordView::Parse(reinterpret_cast<const uint8_t*>(rec.data()), rec.size(), "s0", &v);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("s0: EXIF orientation 9"), std::string::npos) << s.message();
}

TEST(RecordTest, HeaderBytesAreLittleEndianAsDocumented) {
  std::string rec;
  ASSERT_TRUE(EncodeRecord(SampleInfo(), "", &rec).ok());
  EXPECT_EQ(rec.substr(0, 4), "FYR1");
  EXPECT_EQ(static_cast<uint8_t>(rec[4]), 1);    // version
  EXPECT_EQ(static_cast<uint8_t>(rec[6]), 2);    // png
  EXPECT_EQ(static_cast<uint8_t>(rec[8]), 0x80);  // width 640 = 0x280
  EXPECT_EQ(static_cast<uint8_t>(rec[9]), 0x02);
  EXPECT_EQ(static_cast<uint8_t>(rec[24]), 2);  // box count
  EXPECT_EQ(static_cast<uint8_t>(rec[28]), 16);  // name length
}

TEST(RecordTest, RejectsDamage) {
  std::string rec;
  ASSERT_TRUE(EncodeRecord(SampleInfo(), "IMAGEBYTES", &rec).ok());
  RecordView v;
  auto parse = [&](const std::string& r) {
    return RecordView::Parse(reinterpret_cast<const uint8_t*>(r.data()), r.size(), "train2017 sample 3", &v);
  };
  std::string bad_magic = rec;
  bad_magic[0] = 'X';
  Status s = parse(bad_magic);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("train2017 sample 3"), std::string::npos);
  std::string bad_version = rec;
  bad_version[4] = 9;
  EXPECT_TRUE(parse(bad_version).IsNotSupported());
  EXPECT_TRUE(parse(rec.substr(0, rec.size() - 1)).IsCorruption());
  EXPECT_TRUE(parse(rec.substr(0, 20)).IsCorruption());
  std::string bad_encoding = rec;
  bad_encoding[6] = 7;
  EXPECT_TRUE(parse(bad_encoding).IsCorruption());
}

TEST(RecordTest, ZeroPaddingAfterTheImageIsNotPartOfIt) {
  const RecordInfo info = SampleInfo();
  std::string rec;
  ASSERT_TRUE(EncodeRecord(info, "IMAGEBYTES", &rec).ok());
  for (size_t padding : {size_t{1}, size_t{4000}, kMaxRecordPadding - 1}) {
    const std::string padded = rec + std::string(padding, '\0');
    RecordView v;
    const Status s = RecordView::Parse(reinterpret_cast<const uint8_t*>(padded.data()), padded.size(), "s0", &v);
    ASSERT_TRUE(s.ok()) << padding << ": " << s.ToString();
    EXPECT_EQ(v.file_name(), "000000000009.jpg");
    EXPECT_EQ(v.image_id(), 9);
    EXPECT_EQ(v.width(), 640u);
    EXPECT_EQ(v.boxes(), info.boxes);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(v.image_data()), v.image_size()), "IMAGEBYTES");
  }
}

TEST(RecordTest, RejectsPaddingThatIsNotZeroOrTooLong) {
  std::string rec;
  ASSERT_TRUE(EncodeRecord(SampleInfo(), "IMAGEBYTES", &rec).ok());
  RecordView v;
  auto parse = [&](const std::string& r) {
    return RecordView::Parse(reinterpret_cast<const uint8_t*>(r.data()), r.size(), "train2017 sample 3", &v);
  };
  for (size_t at : {0, 100, 4095}) {
    std::string dirty = rec + std::string(4096, '\0');
    dirty[rec.size() + at] = 1;
    const Status s = parse(dirty);
    EXPECT_TRUE(s.IsCorruption()) << at;
    EXPECT_NE(s.message().find("train2017 sample 3"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("not all zero"), std::string::npos) << s.message();
  }
  const Status s = parse(rec + std::string(kMaxRecordPadding, '\0'));
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("train2017 sample 3"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("left over"), std::string::npos) << s.message();
}

TEST(LabelIndexTest, RoundTripAndCorruption) {
  LabelIndex idx;
  RecordInfo a = SampleInfo();
  RecordInfo b;
  b.image_id = 77;
  b.width = 10;
  b.height = 20;
  b.file_name = "bg.jpg";
  idx.Add(a, 1234);
  idx.Add(b, 55);
  const std::string data = idx.Encode();
  LabelIndex back;
  ASSERT_TRUE(LabelIndex::Decode(data, "labels.idx.zst", &back).ok());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back.total_boxes(), 2u);
  EXPECT_EQ(back.info(0).boxes, a.boxes);
  EXPECT_EQ(back.image_bytes(0), 1234u);
  EXPECT_EQ(back.box_count(1), 0u);
  EXPECT_EQ(back.file_name(1), "bg.jpg");
  EXPECT_EQ(back.image_id(1), 77);
  std::string damaged = data;
  damaged[damaged.size() / 2] ^= 0x55;
  Status s = LabelIndex::Decode(damaged, "labels.idx.zst", &back);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("labels.idx.zst"), std::string::npos);
  EXPECT_FALSE(LabelIndex::Decode(data.substr(0, 10), "x", &back).ok());
}

TEST(LabelIndexTest, EvalBoxesRoundTripBitForBit) {
  LabelIndex idx;
  const std::vector<EvalBox> first = {{45, false, 0.1 + 0.2, 1e-300, 0, 7.25, 1234.5678901234567},
                                      {0, true, -0.0, 639.9999999999999, 1e15, 0.30000000000000004, 0}};
  idx.Add(SampleInfo(), 1);
  RecordInfo background;
  background.file_name = "bg.jpg";
  idx.Add(background, 2);
  ASSERT_TRUE(idx.SetEvalBoxes({0, 2, 2}, first).ok());
  ASSERT_TRUE(idx.has_eval_boxes());
  LabelIndex back;
  ASSERT_TRUE(LabelIndex::Decode(idx.Encode(), "labels.idx.zst", &back).ok());
  ASSERT_TRUE(back.has_eval_boxes());
  ASSERT_EQ(back.eval_box_count(0), 2u);
  EXPECT_EQ(back.eval_box_count(1), 0u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(back.eval_boxes(0)[k], first[k]) << "annotation " << k;
    EXPECT_TRUE(std::signbit(back.eval_boxes(0)[k].x) == std::signbit(first[k].x)) << "annotation " << k;
  }
  EXPECT_EQ(back.info(0).boxes, SampleInfo().boxes);  // the training boxes beside them

  LabelIndex without;
  without.Add(SampleInfo(), 1);
  ASSERT_TRUE(LabelIndex::Decode(without.Encode(), "labels.idx.zst", &back).ok());
  EXPECT_FALSE(back.has_eval_boxes());
}

// The label index's bytes before compression, and again compressed.
std::string Decompress(const std::string& frame) {
  std::string raw(ZSTD_getFrameContentSize(frame.data(), frame.size()), '\0');
  EXPECT_EQ(ZSTD_decompress(raw.data(), raw.size(), frame.data(), frame.size()), raw.size());
  return raw;
}
std::string Compress(const std::string& raw) {
  std::string frame(ZSTD_compressBound(raw.size()), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), raw.data(), raw.size(), 3));
  return frame;
}

// An index several times larger than the 1 MB chunks Encode compresses at a time.
LabelIndex LargeIndex() {
  LabelIndex idx;
  constexpr int kSamples = 20000;
  std::vector<uint64_t> eval_begin{0};
  std::vector<EvalBox> eval;
  for (int i = 0; i < kSamples; ++i) {
    RecordInfo info = SampleInfo();
    info.image_id = i;
    info.file_name = "image_" + std::to_string(i) + ".jpg";
    info.boxes.resize(i % 9);
    for (size_t b = 0; b < info.boxes.size(); ++b) info.boxes[b].cx = static_cast<float>(i + b);
    idx.Add(info, 1000 + i);
    for (int b = 0; b < i % 9; ++b) eval.push_back({0, false, i * 10.0 + b, 0, 0, 0, 0});
    eval_begin.push_back(eval.size());
  }
  EXPECT_TRUE(idx.SetEvalBoxes(std::move(eval_begin), std::move(eval)).ok());
  return idx;
}

// Every sample, box and EvalBox comes back, whatever chunk it was in.
TEST(LabelIndexTest, LargeIndexRoundTripsAcrossCompressionChunks) {
  const LabelIndex idx = LargeIndex();
  const std::string frame = idx.Encode();
  ASSERT_GT(Decompress(frame).size(), size_t{4} << 20);
  LabelIndex back;
  ASSERT_TRUE(LabelIndex::Decode(frame, "labels.idx.zst", &back).ok());
  ASSERT_EQ(back.size(), idx.size());
  ASSERT_TRUE(back.has_eval_boxes());
  for (size_t i = 0; i < back.size(); ++i) {
    ASSERT_EQ(back.file_name(i), "image_" + std::to_string(i) + ".jpg");
    ASSERT_EQ(back.image_bytes(i), 1000u + i);
    ASSERT_EQ(back.box_count(i), size_t(i % 9));
    ASSERT_EQ(back.eval_box_count(i), size_t(i % 9));
    for (size_t b = 0; b < back.box_count(i); ++b) {
      ASSERT_EQ(back.boxes(i)[b].cx, static_cast<float>(i + b));
      ASSERT_EQ(back.eval_boxes(i)[b].x, i * 10.0 + b);
    }
  }
}

// WriteFile streams the frame into the file as it is compressed: the file holds
// Encode()'s bytes, and a write failing part way leaves no file, not a torn one.
TEST(LabelIndexTest, WriteFileStreamsEncodeAndLeavesNothingOnFailure) {
  const LabelIndex idx = LargeIndex();
  testing::ScratchDir dir("label_index_write");
  const std::string path = dir / "labels.idx.zst";
  ASSERT_TRUE(idx.WriteFile(path).ok());
  EXPECT_EQ(testing::ReadFileToString(path), idx.Encode());

  testing::FaultyEnv env;
  env.FailFrom(testing::WriteOp::kAppend, 1);  // the second piece
  const std::string failed = dir / "failed.idx.zst";
  const Status s = idx.WriteFile(failed, &env);
  ASSERT_FALSE(s.ok());
  EXPECT_GE(env.calls(testing::WriteOp::kAppend), 2);
  EXPECT_NE(s.message().find(failed), std::string::npos) << s.message();
  EXPECT_FALSE(ffr::Env::Default()->FileExists(failed));
  EXPECT_FALSE(ffr::Env::Default()->FileExists(failed + ".tmp"));
}

// EvalBoxes are given for every sample at once, by offsets that must fit the samples.
TEST(LabelIndexTest, SetEvalBoxesRefusesOffsetsThatDoNotFit) {
  LabelIndex idx;
  idx.Add(SampleInfo(), 1);
  idx.Add(SampleInfo(), 1);
  const std::vector<EvalBox> two(2);
  for (const std::vector<uint64_t>& begin : std::vector<std::vector<uint64_t>>{
           {0, 2}, {0, 1, 1, 2}, {1, 1, 2}, {0, 2, 1}, {0, 1, 3}}) {
    LabelIndex copy = idx;
    EXPECT_TRUE(copy.SetEvalBoxes(begin, two).IsInvalidArgument());
    EXPECT_FALSE(copy.has_eval_boxes());
  }
  EXPECT_TRUE(idx.SetEvalBoxes({0, 1, 2}, two).ok());
  EXPECT_TRUE(idx.has_eval_boxes());
}

TEST(LabelIndexTest, ReadsVersionOneAndRefusesNewerVersions) {
  LabelIndex idx;
  idx.Add(SampleInfo(), 1);
  std::string raw = Decompress(idx.Encode());
  ASSERT_EQ(raw[4], LabelIndex::kVersion);
  raw[4] = 1;  // version 1 had no flags and no EvalBoxes: the same bytes
  LabelIndex back;
  Status s = LabelIndex::Decode(Compress(raw), "labels.idx.zst", &back);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(back.info(0).boxes, SampleInfo().boxes);
  EXPECT_FALSE(back.has_eval_boxes());
  raw[4] = LabelIndex::kVersion + 1;
  s = LabelIndex::Decode(Compress(raw), "labels.idx.zst", &back);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.message().find("labels.idx.zst: label index version 3"), std::string::npos) << s.message();
  raw[4] = LabelIndex::kVersion;
  raw[6] = 2;  // an unknown flag
  EXPECT_TRUE(LabelIndex::Decode(Compress(raw), "labels.idx.zst", &back).IsCorruption());
}

TEST(ManifestTest, YamlRoundTrip) {
  Manifest m;
  m.created = "2026-11-22T00:00:00Z";
  m.source = "/data/coco";
  m.source_layout = "coco-json";
  m.names = {"person", "traffic light"};
  m.category_ids = {1, 10};
  SplitInfo s;
  s.name = "val2017";
  s.samples = 5;
  s.boxes = 7;
  s.crowd_boxes = 1;
  s.background = 2;
  s.bytes = 999;
  s.shards = {{"PART_00000.ffr", 3, 600}, {"PART_00001.ffr", 2, 399}};
  m.splits = {s};
  m.options["quality"] = "90";
  Manifest back;
  ASSERT_TRUE(Manifest::FromYaml(m.ToYaml(), "dataset.yaml", &back).ok());
  EXPECT_EQ(back.names, m.names);
  EXPECT_EQ(back.category_ids, m.category_ids);
  ASSERT_EQ(back.splits.size(), 1u);
  EXPECT_EQ(back.splits[0].shards.size(), 2u);
  EXPECT_EQ(back.splits[0].shards[1].samples, 2);
  EXPECT_EQ(back.splits[0].crowd_boxes, 1);
  EXPECT_EQ(back.options["quality"], "90");
  Status bad = Manifest::FromYaml("format: something-else\n", "x/dataset.yaml", &back);
  EXPECT_TRUE(bad.IsCorruption());
  EXPECT_NE(bad.message().find("x/dataset.yaml"), std::string::npos);
}

// A manifest cut short (a full disk, a copy that stopped) read as a dataset of fewer splits and
// passed verify: every prefix of a manifest, up to any line, is refused.
TEST(ManifestTest, AManifestCutShortIsRefusedWhereverItEnds) {
  Manifest m;
  m.names = {"a"};
  m.category_ids = {1};
  SplitInfo train, val;
  train.name = "train2017";
  train.samples = 3;
  train.shards = {{"PART_00000.ffr", 2, 10}, {"PART_00001.ffr", 1, 10}};
  val.name = "val2017";
  val.samples = 1;
  val.shards = {{"PART_00000.ffr", 1, 10}};
  m.splits = {train, val};
  m.options["quality"] = "90";
  const std::string good = m.ToYaml();
  Manifest back;
  ASSERT_TRUE(Manifest::FromYaml(good, "d/dataset.yaml", &back).ok());
  for (size_t end = good.find('\n'); end + 1 < good.size(); end = good.find('\n', end + 1)) {
    const std::string cut = good.substr(0, end + 1);
    const Status s = Manifest::FromYaml(cut, "d/dataset.yaml", &back);
    EXPECT_FALSE(s.ok()) << "cut after:\n" << cut;
  }
  const Status s = Manifest::FromYaml(good.substr(0, good.find("  val2017:")), "d/dataset.yaml", &back);
  EXPECT_NE(s.message().find("the manifest ends before its last entry (options): it was cut short"),
            std::string::npos)
      << s.message();
}

// Edits that yaml-cpp reads without a word: a repeated key (the later split or
// shard list was hidden behind the first), a repeated category id, and shard
// names that lead out of the split's folder.
TEST(ManifestTest, EditedManifestsAreRefusedSayingWhat) {
  Manifest m;
  m.names = {"a", "b"};
  m.category_ids = {1, 2};
  SplitInfo train, val;
  train.name = "train2017";
  train.samples = val.samples = 1;
  train.shards = {{"PART_00000.ffr", 1, 10}};
  val.name = "val2017";
  val.shards = {{"PART_00000.ffr", 1, 10}};
  m.splits = {train, val};
  const std::string good = m.ToYaml();
  Manifest back;
  ASSERT_TRUE(Manifest::FromYaml(good, "d/dataset.yaml", &back).ok());
  const auto refused = [&](const std::string& from, const std::string& to, const std::string& says) {
    std::string text = good;
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    const Status s = Manifest::FromYaml(text, "d/dataset.yaml", &back);
    EXPECT_TRUE(s.IsCorruption()) << to << ": " << s.ToString();
    EXPECT_NE(s.message().find(says), std::string::npos) << s.message();
  };
  refused("val2017:", "train2017:", "key 'train2017' appears twice");
  refused("nc: 2", "names: [x, y]\nnc: 2", "key 'names' appears twice");
  refused("category_ids: [1, 2]", "category_ids: [1, 1]", "category_ids repeat an id");
  refused("PART_00000.ffr", "../../x.ffr", "'../../x.ffr' is not a plain file name");
  refused("PART_00000.ffr", "/etc/passwd", "'/etc/passwd' is not a plain file name");
}

}  // namespace
}  // namespace ffyolo

namespace ffyolo {
namespace {

TEST(RecordTest, CraftedSizesCannotWrapAround) {
  std::string rec;
  ASSERT_TRUE(EncodeRecord(RecordInfo(), "abc", &rec).ok());
  // A huge box count with an image size that makes the naive 64-bit sum wrap to the record size.
  rec[24] = rec[25] = rec[26] = rec[27] = '\xff';
  const uint64_t boxes = 0xffffffffull;
  const uint64_t wrapped = 0 - (kRecordBoxSize * boxes) + 3;
  for (int i = 0; i < 8; ++i) rec[32 + i] = static_cast<char>(wrapped >> (8 * i));
  RecordView v;
  EXPECT_TRUE(RecordView::Parse(reinterpret_cast<const uint8_t*>(rec.data()), rec.size(), "s", &v).IsCorruption());
}

}  // namespace
}  // namespace ffyolo
