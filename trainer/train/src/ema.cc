#include "ffyolo/ema.h"

#include <torch/torch.h>

#include <cmath>
#include <vector>

namespace ffyolo {
namespace {

// Parameters then buffers, by name, as state_dict orders them.
std::vector<std::pair<std::string, torch::Tensor>> StateEntries(const torch::nn::Module& m) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : m.named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : m.named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

}  // namespace

void CopyModelState(const YoloModel& from, YoloModel* to) {
  torch::NoGradGuard no_grad;
  const auto src = StateEntries(from);
  const auto dst = StateEntries(*to);
  TORCH_CHECK(src.size() == dst.size(), "CopyModelState: models differ");
  for (size_t i = 0; i < src.size(); ++i) dst[i].second.copy_(src[i].second);
}

ModelEma::ModelEma(std::shared_ptr<YoloModel> ema, const YoloModel& model, int64_t updates, double decay, double tau)
    : ema_(std::move(ema)), updates_(updates), decay_(decay), tau_(tau) {
  CopyModelState(model, ema_.get());
  ema_->eval();
  for (auto& p : ema_->parameters()) p.set_requires_grad(false);
}

double ModelEma::Decay(int64_t updates) const { return decay_ * (1 - std::exp(-static_cast<double>(updates) / tau_)); }

void ModelEma::Update(const YoloModel& model) {
  torch::NoGradGuard no_grad;
  ++updates_;
  const double d = Decay(updates_);
  const auto src = StateEntries(model);
  const auto dst = StateEntries(*ema_);
  std::vector<torch::Tensor> averages, values;
  for (size_t i = 0; i < src.size(); ++i) {
    if (!dst[i].second.is_floating_point()) continue;  // num_batches_tracked
    averages.push_back(dst[i].second);
    values.push_back(src[i].second.detach());
  }
  // v *= d; v += (1 - d) * msd[k] for all at once: two multi-tensor kernels on a GPU, not two per tensor.
  at::_foreach_mul_(averages, d);
  at::_foreach_add_(averages, values, 1 - d);
}

}  // namespace ffyolo
