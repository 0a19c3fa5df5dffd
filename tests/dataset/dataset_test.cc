// Dataset: which split a tool reads (the user's, a set of them, or the default), and what a set reads.
#include "ffyolo/dataset.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ffr/reader.h"
#include "ffr/shard_writer.h"
#include "ffyolo/inspect.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

// A dataset whose splits hold one sample each (the bytes of the split's name, image id 1) and
// whose manifest records `train` and `val` as the data YAML's lists.
std::string DatasetOfSplits(const testing::ScratchDir& dir, const std::vector<std::string>& names,
                            const std::vector<std::string>& train = {}, const std::vector<std::string>& val = {}) {
  Manifest m;
  m.names = {"a"};
  m.category_ids = {1};
  m.train = train;
  m.val = val;
  const std::string path = dir / "data.ffr";
  std::filesystem::remove_all(path);
  for (const std::string& name : names) {
    std::filesystem::create_directories(path + "/" + name);
    std::unique_ptr<ffr::ShardWriter> writer;
    EXPECT_TRUE(ffr::ShardWriter::Create(path + "/" + name + "/PART_00000.ffr", 1, ffr::Env::Default(), &writer).ok());
    EXPECT_TRUE(writer->Append(name.data(), name.size()).ok());
    EXPECT_TRUE(writer->Finish().ok());
    LabelIndex index;
    RecordInfo info;
    info.image_id = 1;
    info.file_name = name + ".jpg";
    index.Add(info, name.size());
    EXPECT_TRUE(index.WriteFile(path + "/" + name + "/" + kLabelIndexFile).ok());
    SplitInfo split;
    split.name = name;
    split.samples = 1;
    split.shards = {{"PART_00000.ffr", 1, writer->bytes(), writer->meta_crc()}};
    m.splits.push_back(split);
  }
  EXPECT_TRUE(testing::WriteStringToFile(path + "/" + kManifestFile, m.ToYaml()));
  return path;
}

Status Resolve(const Dataset& d, bool training, std::string* split) {
  split->clear();
  return d.ResolveSplit(training, split);
}

TEST(DatasetTest, TheOnlySplitOrTheOneOfItsKindIsTheDefault) {
  testing::ScratchDir dir("default_split");
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(DatasetOfSplits(dir, {"images"}), &d).ok());
  std::string split;
  ASSERT_TRUE(Resolve(*d, true, &split).ok());
  EXPECT_EQ(split, "images");
  ASSERT_TRUE(Resolve(*d, false, &split).ok());
  EXPECT_EQ(split, "images");
  ASSERT_TRUE(Dataset::Open(DatasetOfSplits(dir, {"train2017", "val2017"}), &d).ok());
  ASSERT_TRUE(Resolve(*d, false, &split).ok());
  EXPECT_EQ(split, "val2017");
}

// VOC as Ultralytics lays it out: yolo-train took the first train* split (4 of 16 images) without
// a word, and yolo-val scored train2017 when the other split was test2017.
TEST(DatasetTest, SeveralCandidatesOrNoneAreRefusedListingTheSplits) {
  testing::ScratchDir dir("ambiguous_split");
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(
      Dataset::Open(DatasetOfSplits(dir, {"train2012", "train2007", "val2012", "val2007", "test2007"}), &d).ok());
  std::string split;
  Status s = Resolve(*d, true, &split);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("2 splits could be the training split (train2012, train2007); name the one to use"),
            std::string::npos)
      << s.message();
  s = Resolve(*d, false, &split);
  EXPECT_NE(s.message().find("2 splits could be the validation split (val2012, val2007)"), std::string::npos)
      << s.message();

  ASSERT_TRUE(Dataset::Open(DatasetOfSplits(dir, {"train2017", "test2017"}), &d).ok());
  s = Resolve(*d, false, &split);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("no split starting with 'val' (splits: train2017, test2017)"), std::string::npos)
      << s.message();
}

// The data YAML's train: and val: lists, recorded at pack time, are the default: VOC trains on four
// splits and validates on test2007.
TEST(DatasetTest, TheDataYamlsListsAreTheDefault) {
  testing::ScratchDir dir("recorded_splits");
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(DatasetOfSplits(dir, {"test2007", "train2007", "train2012", "val2007", "val2012"},
                                            {"train2012", "train2007", "val2012", "val2007"}, {"test2007"}),
                            &d)
                  .ok());
  std::string split;
  ASSERT_TRUE(Resolve(*d, true, &split).ok());
  EXPECT_EQ(split, "train2007+train2012+val2007+val2012");  // Ultralytics' order: sorted by path
  ASSERT_TRUE(Resolve(*d, false, &split).ok());
  EXPECT_EQ(split, "test2007");
}

// What the user names is read as one split, in one canonical order and spelling, whatever the
// separator: the same set of splits is the same pixel cache and the same resume.
TEST(DatasetTest, NamedSplitsAreCheckedAndMadeCanonical) {
  testing::ScratchDir dir("named_splits");
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(DatasetOfSplits(dir, {"a", "a-b", "b"}), &d).ok());
  for (const std::string given : {"b,a-b,a", "a+a-b+b", "a-b,b+a"}) {
    std::string split = given;
    ASSERT_TRUE(d->ResolveSplit(true, &split).ok()) << given;
    EXPECT_EQ(split, "a-b+a+b") << given;  // by path: images/a-b/ sorts before images/a/ ('-' < '/')
  }
  std::string split = "a,c";
  Status s = d->ResolveSplit(true, &split);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("no split 'c' (splits: a, a-b, b)"), std::string::npos) << s.message();
  split = "b,a,b";
  s = d->ResolveSplit(true, &split);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("names a split twice"), std::string::npos) << s.message();
  split = "a,";
  EXPECT_TRUE(d->ResolveSplit(true, &split).IsNotFound());
}

// A set of splits reads as one: samples and labels split after split, image ids that collide
// numbered 1..n so that evaluation tells the images apart.
TEST(DatasetTest, ASetOfSplitsReadsAsOne) {
  testing::ScratchDir dir("split_set");
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(DatasetOfSplits(dir, {"one", "two"}), &d).ok());
  std::string split = "two,one";
  ASSERT_TRUE(d->ResolveSplit(true, &split).ok());
  std::unique_ptr<ffr::Reader> reader;
  ASSERT_TRUE(d->OpenReader(split, ffr::ReaderOptions(), &reader).ok());
  ASSERT_EQ(reader->size(), 2);
  ffr::ReadBuffer buffer;
  std::vector<std::string> read;
  for (int64_t i = 0; i < 2; ++i) {
    ffr::Sample sample;
    ASSERT_TRUE(reader->Read(i, &buffer, &sample).ok());
    read.emplace_back(reinterpret_cast<const char*>(sample.data), sample.size);
  }
  EXPECT_EQ(read, (std::vector<std::string>{"one", "two"}));
  LabelIndex index;
  ASSERT_TRUE(d->LoadLabelIndex(split, &index).ok());
  ASSERT_EQ(index.size(), 2u);
  EXPECT_EQ(index.file_name(0), "one.jpg");
  EXPECT_EQ(index.file_name(1), "two.jpg");
  EXPECT_EQ(index.image_id(0), 1);
  EXPECT_EQ(index.image_id(1), 2);
  // One split keeps its own ids.
  ASSERT_TRUE(d->LoadLabelIndex("two", &index).ok());
  EXPECT_EQ(index.image_id(0), 1);
  // yolo-ffr cat --by-id found a set's new id and printed the record's own, and yolo-val scored one
  // split's predictions against the set's ids: uses of the records' own ids refuse such a set.
  bool renumbered = false;
  ASSERT_TRUE(d->LoadLabelIndex(split, &index, &renumbered).ok());
  EXPECT_TRUE(renumbered);
  const Status s = d->CheckOwnImageIds(split, "--by-id");
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("--by-id: the image ids of one+two repeat across its splits"), std::string::npos)
      << s.message();
  EXPECT_TRUE(d->CheckOwnImageIds("two", "--by-id").ok());
  int64_t found = -1;
  ASSERT_TRUE(FindSampleByImageId(*d, "two", 1, &found).ok());
  EXPECT_EQ(found, 0);
}

// yolo-val --data DATA/dataset.yaml advised packing the tree the YAML describes with yolo-pack.
TEST(DatasetTest, TheManifestGivenForItsFolderSaysToPassTheFolder) {
  testing::ScratchDir dir("manifest_given");
  const std::string path = DatasetOfSplits(dir, {"a"});
  std::unique_ptr<Dataset> d;
  const Status s = Dataset::Open(path + "/" + kManifestFile, &d);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("the manifest of a packed dataset; pass its folder, " + path), std::string::npos)
      << s.message();
}

// A manifest whose train:/val: names a split it lacks is refused, as is a split name that would
// read as a set.
TEST(DatasetTest, AManifestsSplitListsMustNameItsSplits) {
  testing::ScratchDir dir("bad_lists");
  std::unique_ptr<Dataset> d;
  Status s = Dataset::Open(DatasetOfSplits(dir, {"a"}, {"a", "b"}), &d);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("train names split 'b', which the manifest lacks"), std::string::npos) << s.message();
  s = Dataset::Open(DatasetOfSplits(dir, {"a+b"}), &d);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("'a+b' cannot be a split's name"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ffyolo
