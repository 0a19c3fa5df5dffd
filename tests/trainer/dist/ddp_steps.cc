#include "ddp_steps.h"

#include <torch/torch.h>

#include <stdexcept>

#include "ffyolo/communicator.h"
#include "ffyolo/gradient_sync.h"
#include "ffyolo/hyp.h"
#include "ffyolo/loss.h"
#include "ffyolo/model.h"
#include "ffyolo/model_config.h"

namespace ffyolo {
namespace {

constexpr int64_t kClasses = 2;
constexpr int64_t kImage = 64;

std::shared_ptr<YoloModel> Model(uint64_t seed) {
  torch::manual_seed(seed);
  std::shared_ptr<YoloModel> model;
  const ffr::Status s = BuildModel(ResolveModelYaml("yolov5n"), kClasses, &model);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  model->train();
  return model;
}

// Global batch `step`: random images, and the same two boxes in every image so
// that every share of the batch has as many matched targets (YOLOv5 averages
// the box and class losses over a rank's targets).
void GlobalBatch(int step, int64_t images, torch::Tensor* x, torch::Tensor* targets) {
  torch::manual_seed(1000 + step);
  *x = torch::rand({images, 3, kImage, kImage});
  static constexpr float kBoxes[2][5] = {{0, .5f, .5f, .3f, .4f}, {1, .25f, .3f, .2f, .15f}};  // class cx cy w h
  std::vector<float> rows;
  for (int64_t i = 0; i < images; ++i)
    for (const auto& box : kBoxes) {
      rows.push_back(static_cast<float>(i));
      rows.insert(rows.end(), box, box + 5);
    }
  *targets = torch::tensor(rows).view({-1, 6});
}

// Images [first, first + count) of a global batch, targets renumbered from 0.
void Share(const torch::Tensor& x, const torch::Tensor& targets, int64_t first, int64_t count, torch::Tensor* xs,
           torch::Tensor* ts) {
  *xs = x.narrow(0, first, count);
  const torch::Tensor index = targets.select(1, 0);
  *ts = targets.index({(index >= first).logical_and(index < first + count)}).clone();
  ts->select(1, 0).sub_(static_cast<double>(first));
}

struct Trainer {
  std::shared_ptr<YoloModel> model;
  std::unique_ptr<torch::optim::SGD> sgd;
  std::unique_ptr<ComputeLoss> loss;

  explicit Trainer(std::shared_ptr<YoloModel> m) : model(std::move(m)) {
    sgd = std::make_unique<torch::optim::SGD>(model->parameters(),
                                             torch::optim::SGDOptions(0.01).momentum(0.9).nesterov(true));
    loss = std::make_unique<ComputeLoss>(ScaleLossGains(Hyp(), kClasses, 3, kImage), 0.0, kClasses,
                                         model->detect().anchors);
  }
  torch::Tensor Loss(const torch::Tensor& x, const torch::Tensor& targets) {
    return (*loss)(model->forward(x).raw, targets).total;
  }
  std::vector<torch::Tensor> State() {
    std::vector<torch::Tensor> state;
    for (const torch::Tensor& p : model->parameters()) state.push_back(p.detach().clone());
    for (const torch::Tensor& b : model->buffers()) state.push_back(b.clone());
    return state;
  }
};

}  // namespace

DdpStepsOptions DdpStepsMode(const std::string& mode) {
  DdpStepsOptions o;
  o.sync_bn = mode.rfind("syncbn", 0) == 0;
  o.after_backward = mode.rfind("after-backward", 0) == 0;
  o.micro_steps = mode.find("accumulate") != std::string::npos ? 2 : 1;
  if (mode != "plain" && mode != "accumulate" && mode != "syncbn" && mode != "syncbn-accumulate" &&
      mode != "after-backward" && mode != "after-backward-accumulate")
    throw std::invalid_argument("unknown mode " + mode);
  return o;
}

size_t DdpParameterCount() { return Model(0)->parameters().size(); }

std::vector<torch::Tensor> RunDdpRank(const DdpStepsOptions& o, Communicator* comm) {
  const int rank = comm->rank(), world = comm->world_size();
  Trainer t(Model(1 + rank));
  {
    std::vector<torch::Tensor> state = t.model->parameters();
    for (const torch::Tensor& b : t.model->buffers()) state.push_back(b);
    comm->Broadcast(state, 0);
  }
  if (o.sync_bn) t.model->SetSyncBatchNorm(comm);
  GradientSync sync(comm, t.model->parameters(), /*bucket_bytes=*/1 << 20, /*first_bucket_bytes=*/256 << 10);
  int step = 0;
  for (int u = 0; u < o.updates; ++u) {
    for (int m = 0; m < o.micro_steps; ++m, ++step) {
      torch::Tensor x, targets, xs, ts;
      GlobalBatch(step, int64_t{o.per_rank_batch} * world, &x, &targets);
      Share(x, targets, int64_t{rank} * o.per_rank_batch, o.per_rank_batch, &xs, &ts);
      const bool last = m + 1 == o.micro_steps;
      sync.Prepare(last && !o.after_backward);
      (t.Loss(xs, ts) * world).backward();
      sync.Finish();
      if (last && o.after_backward) sync.AllReduceGradients();
    }
    t.sgd->step();
    t.sgd->zero_grad();
  }
  return t.State();
}

std::vector<torch::Tensor> RunReference(const DdpStepsOptions& o, bool per_rank_bn, int only_rank) {
  Trainer t(Model(1));
  int step = 0;
  for (int u = 0; u < o.updates; ++u) {
    for (int m = 0; m < o.micro_steps; ++m, ++step) {
      torch::Tensor x, targets;
      GlobalBatch(step, int64_t{o.per_rank_batch} * o.world_size, &x, &targets);
      if (only_rank >= 0 || per_rank_bn) {
        for (int r = 0; r < o.world_size; ++r) {
          if (only_rank >= 0 && r != only_rank) continue;
          torch::Tensor xs, ts;
          Share(x, targets, int64_t{r} * o.per_rank_batch, o.per_rank_batch, &xs, &ts);
          t.Loss(xs, ts).backward();
        }
      } else {
        t.Loss(x, targets).backward();
      }
    }
    t.sgd->step();
    t.sgd->zero_grad();
  }
  return t.State();
}

}  // namespace ffyolo
