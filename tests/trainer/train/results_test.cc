// results.csv in Ultralytics' format, and the plot.
#include <gtest/gtest.h>

#include "ffyolo/results.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

TEST(ResultsTest, CsvHasUltralyticsColumnsAndFormat) {
  const std::string header = ResultsCsvHeader();
  EXPECT_EQ(header.substr(0, 42), "               epoch,      train/box_loss,");
  EXPECT_NE(header.find("metrics/mAP_0.5:0.95"), std::string::npos);
  EXPECT_EQ(header.substr(header.size() - 21), ",               x/lr2");
  EpochResult r;
  r.epoch = 3;
  r.train_box = 0.046183;
  r.map = 0.48712345;
  r.lr[2] = 0.0070297;
  const std::string row = ResultsCsvRow(r);
  EXPECT_EQ(row.substr(0, 42), "                   3,            0.046183,");
  EXPECT_NE(row.find("             0.48712,"), std::string::npos) << row;  // %20.5g
  EXPECT_EQ(row.size(), header.size());
}

TEST(ResultsTest, CsvRoundTripsAndRejectsDamage) {
  testing::ScratchDir dir("csv");
  std::vector<EpochResult> rows(2);
  rows[1].epoch = 1;
  rows[1].val_cls = 0.125;
  ASSERT_TRUE(WriteResultsCsv(dir / "results.csv", rows).ok());
  std::vector<EpochResult> back;
  ASSERT_TRUE(ReadResultsCsv(dir / "results.csv", &back).ok());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].epoch, 1);
  EXPECT_DOUBLE_EQ(back[1].val_cls, 0.125);
  ASSERT_TRUE(testing::WriteStringToFile(dir / "bad.csv", ResultsCsvHeader() + "\n1,2,oops\n"));
  ffr::Status s = ReadResultsCsv(dir / "bad.csv", &back);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("bad.csv:2"), std::string::npos) << s.message();
}

TEST(ResultsTest, PlotIsWritten) {
  testing::ScratchDir dir("plot");
  std::vector<EpochResult> rows(3);
  for (int i = 0; i < 3; ++i) {
    rows[i].epoch = i;
    rows[i].train_box = 0.1 - 0.01 * i;
    rows[i].map50 = 0.2 * i;
  }
  std::string written;
  ASSERT_TRUE(PlotResults(rows, dir / "results.png", &written).ok());
  EXPECT_GT(testing::ReadFileToString(written).size(), 5000u);
}

}  // namespace
}  // namespace ffyolo
