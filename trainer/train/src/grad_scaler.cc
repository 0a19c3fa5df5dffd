#include "ffyolo/grad_scaler.h"

#include <torch/torch.h>

namespace ffyolo {

GradScaler::GradScaler(bool enabled, double init_scale, double growth, double backoff, int64_t interval)
    : enabled_(enabled), growth_(growth), backoff_(backoff), interval_(interval) {
  scale_ = torch::full({1}, init_scale, torch::kFloat);
  growth_tracker_ = torch::zeros({1}, torch::kInt);
  found_inf_ = torch::zeros({1}, torch::kFloat);
}

at::Tensor GradScaler::Scale(const at::Tensor& loss) {
  if (!enabled_) return loss;
  if (scale_.device() != loss.device()) {
    scale_ = scale_.to(loss.device());
    growth_tracker_ = growth_tracker_.to(loss.device());
    found_inf_ = found_inf_.to(loss.device());
  }
  return loss * scale_.to(loss.scalar_type());
}

void GradScaler::Unscale(torch::optim::Optimizer& optimizer) {
  if (!enabled_ || unscaled_) return;
  UnscaleOnDevice(optimizer);
  unscaled_ = true;
}

void GradScaler::UnscaleOnDevice(torch::optim::Optimizer& optimizer) {
  if (!enabled_) return;
  std::vector<at::Tensor> grads;
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params())
      if (p.grad().defined()) grads.push_back(p.grad());
  found_inf_.zero_();
  const at::Tensor inv = scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
  if (!grads.empty()) at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv);
}

bool GradScaler::Step(torch::optim::Optimizer& optimizer) {
  if (!enabled_) {
    optimizer.step();
    return true;
  }
  Unscale(optimizer);
  const bool finite = found_inf_.item<float>() == 0.0f;
  if (finite) optimizer.step();
  return finite;
}

void GradScaler::Update() {
  if (!enabled_) return;
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, growth_, backoff_, interval_);
  unscaled_ = false;
}

double GradScaler::scale() const { return scale_.item<float>(); }
int64_t GradScaler::growth_tracker() const { return growth_tracker_.item<int>(); }

void GradScaler::Restore(double scale, int64_t growth_tracker) {
  scale_.fill_(scale);
  growth_tracker_.fill_(growth_tracker);
}

}  // namespace ffyolo
