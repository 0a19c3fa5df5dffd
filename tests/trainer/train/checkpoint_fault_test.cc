// Run-folder writes under injected faults: each file-system call of a save is
// failed in turn while last.pt (or results.csv) is overwritten. The save must
// say so naming the file, and the file must stay whole: the previous one, or
// the new one when only the directory fsync after the rename failed.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <functional>

#include "ffyolo/checkpoint.h"
#include "ffyolo/model.h"
#include "ffyolo/model_config.h"
#include "ffyolo/results.h"
#include "testing/faulty_env.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

using testing::FaultyEnv;
using testing::ReadFileToString;
using testing::ScratchDir;
using testing::WriteOp;

// Writes a file at `path` through an Env.
using Save = std::function<ffr::Status(const std::string& path, ffr::Env* env)>;

// Counts the calls of a clean `save`, then overwrites `path` once per call with
// that call failing, runs `check(op)` on what is left and puts the previous
// file back for the next round.
void SaveWithEachCallFailing(const std::string& path, const Save& save, const std::function<void(WriteOp)>& check) {
  FaultyEnv counting;
  ASSERT_TRUE(save(path + ".probe", &counting).ok());
  const std::string previous = ReadFileToString(path);
  ASSERT_FALSE(previous.empty());
  for (WriteOp op : {WriteOp::kCreate, WriteOp::kAppend, WriteOp::kSync, WriteOp::kRename, WriteOp::kSyncDir}) {
    ASSERT_GT(counting.calls(op), 0) << WriteOpName(op) << " is never called, so never tested";
    for (int64_t k = 0; k < counting.calls(op); ++k) {
      SCOPED_TRACE(std::string("failing ") + WriteOpName(op) + " #" + std::to_string(k));
      FaultyEnv env;
      env.FailFrom(op, k);
      const ffr::Status s = save(path, &env);
      ASSERT_FALSE(s.ok());
      ASSERT_FALSE(env.failed_path().empty());
      EXPECT_NE(s.message().find(env.failed_path()), std::string::npos) << s.ToString();
      EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
      check(op);
      ASSERT_TRUE(testing::WriteStringToFile(path, previous));
    }
  }
}

std::shared_ptr<YoloModel> Nano() {
  std::shared_ptr<YoloModel> m;
  const ffr::Status s = BuildModel(ResolveModelYaml("yolov5n"), 2, &m);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return m;
}

std::vector<torch::Tensor> Weights(const YoloModel& m) {
  std::vector<torch::Tensor> w;
  for (const auto& p : m.named_parameters()) w.push_back(p.value().detach().clone());
  return w;
}

TEST(CheckpointFaultTest, FailedOverwriteLeavesTheLastCheckpointWhole) {
  torch::manual_seed(0);
  ScratchDir dir("last");
  const std::string path = dir / "last.pt";
  auto model = Nano();
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  CheckpointInfo info;
  info.epoch = 1;
  ASSERT_TRUE(SaveCheckpoint(path, info, *model, nullptr, &opt).ok());
  const std::string epoch1_bytes = ReadFileToString(path);
  const std::vector<torch::Tensor> epoch1 = Weights(*model);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.add_(1);
  }
  const std::vector<torch::Tensor> epoch2 = Weights(*model);
  info.epoch = 2;

  SaveWithEachCallFailing(
      path, [&](const std::string& p, ffr::Env* env) { return SaveCheckpoint(p, info, *model, nullptr, &opt, env); },
      [&](WriteOp op) {
        CheckpointInfo left;
        const ffr::Status read = ReadCheckpointInfo(path, &left);
        ASSERT_TRUE(read.ok()) << read.ToString();
        const bool renamed = left.epoch == 2;
        if (renamed) {
          EXPECT_EQ(op, WriteOp::kSyncDir) << "only the directory fsync comes after the rename";
        } else {
          EXPECT_EQ(left.epoch, 1);
          EXPECT_TRUE(ReadFileToString(path) == epoch1_bytes) << "last.pt changed";
        }
        auto back = Nano();
        torch::optim::SGD back_opt(back->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
        const ffr::Status load = LoadCheckpointState(path, back.get(), nullptr, &back_opt);
        ASSERT_TRUE(load.ok()) << load.ToString();
        const std::vector<torch::Tensor> want = renamed ? epoch2 : epoch1;
        const std::vector<torch::Tensor> got = Weights(*back);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(torch::equal(got[i], want[i])) << "parameter " << i;
      });
}

TEST(CheckpointFaultTest, FailedRewriteLeavesResultsCsvWhole) {
  ScratchDir dir("csv");
  const std::string path = dir / "results.csv";
  std::vector<EpochResult> rows(2);
  rows[1].epoch = 1;
  ASSERT_TRUE(WriteResultsCsv(path, rows).ok());
  rows.push_back(rows[1]);
  rows[2].epoch = 2;
  SaveWithEachCallFailing(
      path, [&](const std::string& p, ffr::Env* env) { return WriteResultsCsv(p, rows, env); },
      [&](WriteOp op) {
        std::vector<EpochResult> left;
        ASSERT_TRUE(ReadResultsCsv(path, &left).ok());
        if (left.size() == 3) {
          EXPECT_EQ(op, WriteOp::kSyncDir) << "only the directory fsync comes after the rename";
        } else {
          EXPECT_EQ(left.size(), 2u);
        }
      });
}

}  // namespace
}  // namespace ffyolo
