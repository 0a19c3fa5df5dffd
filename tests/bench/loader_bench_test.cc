// yolo-bench loader's measurements run and count what they say they count.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "ffr/format.h"
#include "ffr/reader.h"
#include "ffyolo/dataset.h"
#include "ffyolo/record.h"
#include "ffyolo/loader_bench.h"
#include "test_dataset.h"
#include "dataset/packed_coco128.h"
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
  std::filesystem::create_directories(o.workdir);
  BenchResult loader, decode, baseline;
  ASSERT_TRUE(BenchLoader(*d, o, &loader).ok());
  EXPECT_EQ(loader.items, 16);  // after the untimed warm-up batch
  EXPECT_GT(loader.rate(), 0);
  ASSERT_TRUE(BenchDecodeBound(*d, o, nullptr, &decode).ok());
  EXPECT_GE(decode.items, 48);  // at least one pass over the 48 training images
  EXPECT_GE(decode.seconds, 2.0);
  // One decoding thread: CPU time accrues, at most at the wall clock's pace (plus the process's idle threads' crumbs).
  EXPECT_GT(decode.cpu_seconds, 0.2);
  EXPECT_LT(decode.cpu_seconds, decode.seconds * 1.2);
  EXPECT_GT(loader.cpu_seconds, 0);
  EXPECT_GT(loader.cpu_rate(), 0);
  ffr::Status s = BenchSmallFileBaseline(*d, o, nullptr, &baseline);
  if (s.IsNotSupported()) GTEST_SKIP() << s.message();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(baseline.items, 16);
  // Its files went into a folder of its own there, removed afterwards.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(o.workdir), {}), 0);
  o.validation = true;
  ASSERT_TRUE(BenchLoader(*d, o, &loader).ok());
  EXPECT_EQ(loader.items, 16);
}

// Beside the loader (--alongside) the bound and the baseline say when they
// are set up and run until told to stop, the bound never less than one pass.
// fs::create_directories threw out of yolo-bench (exit 134) for these.
TEST(LoaderBenchTest, BaselineWorkdirThatCannotBeCreatedIsAnError) {
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(testing::PackedSyntheticDataset(), &d).ok());
  testing::ScratchDir dir("bench_workdir");
  ASSERT_TRUE(testing::WriteStringToFile(dir / "file", "not a directory"));
  LoaderBenchOptions o;
  o.img_size = 64;
  o.samples = 1;
  for (const std::string& workdir : {std::string("/proc/nope"), dir / "file", dir / "file/below"}) {
    o.workdir = workdir;
    BenchResult baseline;
    const ffr::Status s = BenchSmallFileBaseline(*d, o, nullptr, &baseline);
    if (s.IsNotSupported()) GTEST_SKIP() << s.message();
    EXPECT_TRUE(s.IsIOError()) << workdir << ": " << s.ToString();
    EXPECT_NE(s.message().find(workdir + ": cannot "), std::string::npos) << s.message();
  }
}

// An image that does not decode stopped the decode-bound stage naming only the split.
TEST(LoaderBenchTest, TheDecodeBoundNamesTheSampleThatFailed) {
  testing::ScratchDir dir("bench_bad_image");
  const std::string copy = dir / "data.ffr";
  std::filesystem::copy(testing::PackedSyntheticDataset(), copy, std::filesystem::copy_options::recursive);
  // Sample 1's JPEG loses its start marker; its CRC and the shard header are made to match.
  const std::string shard = copy + "/train2017/PART_00000.ffr";
  std::string data = testing::ReadFileToString(shard);
  std::unique_ptr<ffr::Reader> reader;
  ASSERT_TRUE(ffr::Reader::Open(shard, ffr::ReaderOptions(), &reader).ok());
  ffr::ShardHeader header;
  ASSERT_TRUE(ffr::ParseShardHeader(shard, reinterpret_cast<const uint8_t*>(data.data()), 12 + 12 * reader->size(),
                                    data.size(), true, &header)
                  .ok());
  RecordView record;
  ASSERT_TRUE(RecordView::Parse(reinterpret_cast<const uint8_t*>(data.data()) + header.offsets[1],
                                header.sample_size(1), "sample 1", &record)
                  .ok());
  const std::string name(record.file_name());
  const size_t image = record.image_data() - reinterpret_cast<const uint8_t*>(data.data());
  data[image] = data[image + 1] = 0;
  std::vector<uint32_t> crcs = header.crcs;
  crcs[1] = ffr::Crc32(data.data() + header.offsets[1], header.sample_size(1));
  const std::string encoded =
      ffr::EncodeShardHeader(crcs, std::vector<uint64_t>(header.offsets.begin(), header.offsets.end() - 1));
  data.replace(0, encoded.size(), encoded);
  ASSERT_TRUE(testing::WriteStringToFile(shard, data));
  reader.reset();
  testing::RecordShardHeaderInManifest(shard);

  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(copy, &d).ok());
  LoaderBenchOptions o;
  o.img_size = 64;
  BenchResult decode;
  const ffr::Status s = BenchDecodeBound(*d, o, nullptr, &decode);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(copy + "/train2017 sample 1 (" + name + ")"), std::string::npos) << s.message();
}

TEST(LoaderBenchTest, AlongsideMeasurementsRunUntilStopped) {
  std::unique_ptr<Dataset> d;
  ASSERT_TRUE(Dataset::Open(testing::PackedSyntheticDataset(), &d).ok());
  testing::ScratchDir dir("bench-alongside");
  LoaderBenchOptions o;
  o.img_size = 128;
  o.samples = 1000;  // ignored beside the loader
  o.workdir = dir / "files";
  std::filesystem::create_directories(o.workdir);
  Alongside stopped;
  stopped.stop = true;
  BenchResult decode;
  ASSERT_TRUE(BenchDecodeBound(*d, o, &stopped, &decode).ok());
  EXPECT_TRUE(stopped.ready);
  EXPECT_EQ(decode.items, 48);  // stopped before it began: exactly one pass
  EXPECT_LT(decode.seconds, 2.0);

  const auto stop_after = [](Alongside* a, int ms) {
    return std::thread([a, ms] {
      while (!a->ready) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      a->stop = true;
    });
  };
  Alongside bound_side;
  std::thread stopper = stop_after(&bound_side, 2500);
  BenchResult longer;
  ASSERT_TRUE(BenchDecodeBound(*d, o, &bound_side, &longer).ok());
  stopper.join();
  EXPECT_GT(longer.items, 48);
  EXPECT_GE(longer.seconds, 2.4);

  Alongside base_side;
  stopper = stop_after(&base_side, 500);
  BenchResult baseline;
  const ffr::Status s = BenchSmallFileBaseline(*d, o, &base_side, &baseline);
  stopper.join();
  if (s.IsNotSupported()) GTEST_SKIP() << s.message();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GT(baseline.items, 0);
  EXPECT_LT(baseline.items, 1000);  // stopped, not run to o.samples
  EXPECT_GT(baseline.cpu_seconds, 0.1);
  EXPECT_LT(baseline.cpu_seconds, baseline.seconds * 1.2);  // one worker thread's time
}

}  // namespace
}  // namespace ffyolo
