// yolo-bench loader's measurements run and count what they say they count.
#include <gtest/gtest.h>

#include <filesystem>

#include "ffyolo/dataset.h"
#include "ffyolo/loader_bench.h"
#include "test_dataset.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

TEST(LoaderBenchTest, LoaderDecodeBoundAndBaselineMeasure) {
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(testing::PackedSyntheticDataset(), &d).ok());
  testing::ScratchDir dir("bench");
  LoaderBenchOptions o;
  o.img_size = 128;
  o.batch_size = 8;
  o.workers = 2;
  o.samples = 16;
  o.workdir = dir / "files";
  BenchResult loader, decode, baseline;
  ASSERT_TRUE(BenchLoader(*d, o, &loader).ok());
  EXPECT_EQ(loader.items, 16);  // after the untimed warm-up batch
  EXPECT_GT(loader.rate(), 0);
  ASSERT_TRUE(BenchDecodeBound(*d, o, &decode).ok());
  EXPECT_GE(decode.items, 48);  // at least one pass over the 48 training images
  EXPECT_GE(decode.seconds, 2.0);
  // One decoding thread: CPU time accrues, at most at the wall clock's pace (plus the process's idle threads' crumbs).
  EXPECT_GT(decode.cpu_seconds, 0.2);
  EXPECT_LT(decode.cpu_seconds, decode.seconds * 1.2);
  EXPECT_GT(loader.cpu_seconds, 0);
  EXPECT_GT(loader.cpu_rate(), 0);
  ffr::Status s = BenchSmallFileBaseline(*d, o, &baseline);
  if (s.IsNotSupported()) GTEST_SKIP() << s.message();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(baseline.items, 16);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(o.workdir), {}), 48);  // one file per sample
  o.validation = true;
  ASSERT_TRUE(BenchLoader(*d, o, &loader).ok());
  EXPECT_EQ(loader.items, 16);
}

}  // namespace
}  // namespace ffyolo
