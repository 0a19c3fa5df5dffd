// Data parallelism over two Gloo ranks reproduces one process: the weights
// after optimizer steps equal those of the single-process reference with and
// without gradient accumulation, with synchronized BatchNorm, and with the
// gradients all-reduced after the backward pass (the captured step's way), and
// both ranks hold identical weights.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ddp_steps.h"
#include "ffyolo/launcher.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

std::vector<at::Tensor> Load(const std::string& path) {
  std::vector<at::Tensor> state;
  torch::load(state, path);
  return state;
}

double MaxDifference(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, size_t count) {
  double worst = 0;
  for (size_t k = 0; k < count; ++k)
    worst = std::max(worst, (a[k].to(torch::kDouble) - b[k].to(torch::kDouble)).abs().max().item<double>());
  return worst;
}

class DdpTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DdpTest, TwoRanksMatchOneProcess) {
  const std::string mode = GetParam();
  testing::ScratchDir dir("ddp_" + mode);
  LaunchOptions lo;
  lo.executable = DDP_STEP_WORKER;
  lo.args = {DDP_STEP_WORKER, dir.path(), mode};
  lo.job.world_size = 2;
  lo.job.local_world_size = 2;
  ASSERT_TRUE(PickFreePort(&lo.job.master_port).ok());
  lo.grace = std::chrono::milliseconds(2000);
  ASSERT_EQ(LaunchWorkers(lo), 0);

  const std::vector<at::Tensor> rank0 = Load(dir / "rank0.pt"), rank1 = Load(dir / "rank1.pt");
  ASSERT_EQ(rank0.size(), rank1.size());
  const size_t params = DdpParameterCount();
  ASSERT_GT(rank0.size(), params);
  // Broadcast at start + identical averaged gradients: the ranks agree bit for bit.
  EXPECT_EQ(MaxDifference(rank0, rank1, params), 0.0);

  at::set_num_threads(1);
  const DdpStepsOptions options = DdpStepsMode(mode);
  const std::vector<at::Tensor> reference = RunReference(options, /*per_rank_bn=*/!options.sync_bn);
  const double error = MaxDifference(rank0, reference, params);
  EXPECT_LT(error, 2e-5) << "weights differ from the single-process reference";
  // Synchronized BatchNorm also keeps the running statistics of the global batch.
  if (options.sync_bn) {
    EXPECT_LT(MaxDifference(rank0, reference, rank0.size()), 2e-5);
  }

  // The comparison can fail: rank 0's half alone gives visibly different weights.
  const std::vector<at::Tensor> half = RunReference(options, true, /*only_rank=*/0);
  EXPECT_GT(MaxDifference(half, reference, params), 100 * error + 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Modes, DdpTest,
                         ::testing::Values("plain", "accumulate", "syncbn", "syncbn-accumulate", "after-backward",
                                           "after-backward-accumulate"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace ffyolo
