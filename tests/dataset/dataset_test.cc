// Dataset: which split a tool uses when the user names none.
#include "ffyolo/dataset.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "testing/test_env.h"

namespace ffyolo {
namespace {

// A dataset folder holding only a manifest with these splits (enough for Open and DefaultSplit).
std::string DatasetOfSplits(const testing::ScratchDir& dir, const std::vector<std::string>& names) {
  Manifest m;
  m.names = {"a"};
  m.category_ids = {1};
  for (const std::string& name : names) {
    SplitInfo split;
    split.name = name;
    split.samples = 1;
    split.shards = {{"PART_00000.ffr", 1, 10}};
    m.splits.push_back(split);
  }
  const std::string path = dir / "data.ffr";
  std::filesystem::create_directories(path);
  EXPECT_TRUE(testing::WriteStringToFile(path + "/" + kManifestFile, m.ToYaml()));
  return path;
}

TEST(DatasetTest, TheOnlySplitOrTheOneOfItsKindIsTheDefault) {
  testing::ScratchDir dir("default_split");
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(DatasetOfSplits(dir, {"images"}), &d).ok());
  std::string split;
  ASSERT_TRUE(d->DefaultSplit(true, &split).ok());
  EXPECT_EQ(split, "images");
  ASSERT_TRUE(d->DefaultSplit(false, &split).ok());
  EXPECT_EQ(split, "images");
  ASSERT_TRUE(Dataset::Open(DatasetOfSplits(dir, {"train2017", "val2017"}), &d).ok());
  ASSERT_TRUE(d->DefaultSplit(false, &split).ok());
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
  Status s = d->DefaultSplit(true, &split);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("2 splits could be the training split (train2012, train2007); name the one to use"),
            std::string::npos)
      << s.message();
  s = d->DefaultSplit(false, &split);
  EXPECT_NE(s.message().find("2 splits could be the validation split (val2012, val2007)"), std::string::npos)
      << s.message();

  ASSERT_TRUE(Dataset::Open(DatasetOfSplits(dir, {"train2017", "test2017"}), &d).ok());
  s = d->DefaultSplit(false, &split);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("no split starting with 'val' (splits: train2017, test2017)"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace ffyolo
