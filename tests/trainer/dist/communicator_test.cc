// One-rank jobs (a real TCPStore and Gloo group of size 1): synchronized
// BatchNorm computes what BatchNorm2d computes, GradientSync leaves plain and
// accumulated gradients as backward made them, and collectives behave.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ffyolo/communicator.h"
#include "ffyolo/gradient_sync.h"
#include "ffyolo/sync_batch_norm.h"

namespace ffyolo {
namespace {

std::unique_ptr<Communicator> OneRank() {
  DistEnv env;
  EXPECT_TRUE(PickFreePort(&env.master_port).ok());
  std::unique_ptr<Communicator> comm;
  const ffr::Status s = Communicator::Create(env, -1, std::chrono::seconds(30), &comm);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return comm;
}

TEST(CommunicatorTest, CollectivesOfOneRank) {
  std::unique_ptr<Communicator> comm = OneRank();
  ASSERT_TRUE(comm);
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->world_size(), 1);
  EXPECT_STREQ(comm->backend(), "gloo");
  torch::Tensor t = torch::arange(5, torch::kFloat);
  comm->AllReduceSum(t);
  EXPECT_TRUE(torch::equal(t, torch::arange(5, torch::kFloat)));
  EXPECT_TRUE(comm->AnyRank(true));
  EXPECT_FALSE(comm->AnyRank(false));
  torch::Tensor a = torch::ones({2, 3}), b = torch::arange(4, torch::kDouble);
  comm->Broadcast({a, b}, 0);  // mixed dtypes go as one message each
  EXPECT_TRUE(torch::equal(a, torch::ones({2, 3})));
  EXPECT_TRUE(torch::equal(b, torch::arange(4, torch::kDouble)));
}

TEST(CommunicatorTest, JoiningAnUnreachableJobFailsWithItsAddress) {
  DistEnv env;
  env.rank = 1;
  env.world_size = 2;
  ASSERT_TRUE(PickFreePort(&env.master_port).ok());  // nobody listens there
  std::unique_ptr<Communicator> comm;
  const ffr::Status s = Communicator::Create(env, -1, std::chrono::seconds(1), &comm);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rank 1 of 2"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(std::to_string(env.master_port)), std::string::npos) << s.ToString();
}

TEST(SyncBatchNormTest, OneRankEqualsBatchNorm2d) {
  std::unique_ptr<Communicator> comm = OneRank();
  ASSERT_TRUE(comm);
  torch::manual_seed(0);
  torch::nn::BatchNorm2d reference(torch::nn::BatchNorm2dOptions(4).eps(1e-3).momentum(0.03));
  torch::nn::BatchNorm2d synced(torch::nn::BatchNorm2dOptions(4).eps(1e-3).momentum(0.03));
  {
    torch::NoGradGuard no_grad;
    reference->weight.uniform_(0.5, 1.5);
    reference->bias.uniform_(-0.5, 0.5);
    synced->weight.copy_(reference->weight);
    synced->bias.copy_(reference->bias);
  }
  const torch::Tensor x = (torch::randn({3, 4, 5, 6}) * 3 + 2);
  const torch::Tensor x1 = x.clone().requires_grad_(), x2 = x.clone().requires_grad_();
  const torch::Tensor weights = torch::randn({3, 4, 5, 6});
  const torch::Tensor y1 = reference->forward(x1), y2 = SyncBatchNorm2d(x2, *synced, *comm);
  EXPECT_LT((y1 - y2).abs().max().item<double>(), 1e-5);
  (y1 * weights).sum().backward();
  (y2 * weights).sum().backward();
  EXPECT_LT((x1.grad() - x2.grad()).abs().max().item<double>(), 1e-5);
  EXPECT_LT((reference->weight.grad() - synced->weight.grad()).abs().max().item<double>(), 1e-4);
  EXPECT_LT((reference->bias.grad() - synced->bias.grad()).abs().max().item<double>(), 1e-4);
  EXPECT_LT((reference->running_mean - synced->running_mean).abs().max().item<double>(), 1e-6);
  EXPECT_LT((reference->running_var - synced->running_var).abs().max().item<double>(), 1e-5);
  EXPECT_EQ(synced->num_batches_tracked.item<int64_t>(), 1);
}

// A small network whose last layer can be left out of the graph.
struct Net {
  torch::nn::Linear a{8, 300}, b{300, 200}, unused{3, 3};
  std::vector<torch::Tensor> parameters() const {
    std::vector<torch::Tensor> p;
    for (const auto& m : {a->parameters(), b->parameters(), unused->parameters()}) p.insert(p.end(), m.begin(), m.end());
    return p;
  }
  torch::Tensor Loss(const torch::Tensor& x) { return b->forward(torch::relu(a->forward(x))).pow(2).mean(); }
};

std::vector<torch::Tensor> Grads(const Net& net) {
  std::vector<torch::Tensor> g;
  for (const torch::Tensor& p : net.parameters()) g.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
  return g;
}

TEST(GradientSyncTest, OneRankKeepsPlainAndAccumulatedGradients) {
  std::unique_ptr<Communicator> comm = OneRank();
  ASSERT_TRUE(comm);
  torch::manual_seed(0);
  Net synced, plain;
  {
    torch::NoGradGuard no_grad;
    for (size_t k = 0; k < synced.parameters().size(); ++k) synced.parameters()[k].copy_(plain.parameters()[k]);
  }
  // Small buckets: several of them, each started when complete.
  GradientSync sync(comm.get(), synced.parameters(), /*bucket_bytes=*/64 << 10, /*first_bucket_bytes=*/8 << 10);
  EXPECT_GE(sync.num_buckets(), 3u);
  const torch::Tensor x1 = torch::randn({5, 8}), x2 = torch::randn({5, 8});
  for (bool accumulate : {false, true}) {
    for (Net* n : {&synced, &plain})
      for (torch::Tensor p : n->parameters()) p.mutable_grad() = torch::Tensor();
    if (accumulate) {
      sync.Prepare(false);
      synced.Loss(x1).backward();
      sync.Finish();
      plain.Loss(x1).backward();
    }
    sync.Prepare(true);
    synced.Loss(x2).backward();
    sync.Finish();
    plain.Loss(x2).backward();
    const std::vector<torch::Tensor> got = Grads(synced), want = Grads(plain);
    for (size_t k = 0; k + 2 < got.size(); ++k)
      EXPECT_TRUE(torch::allclose(got[k], want[k], 1e-6, 1e-7)) << "parameter " << k << " accumulate " << accumulate;
    // A parameter outside the graph gets a zero gradient, as every rank must send something for it.
    EXPECT_TRUE(torch::equal(got.back(), torch::zeros_like(synced.unused->bias)));
  }
}

}  // namespace
}  // namespace ffyolo
