// GradScaler: dynamic loss scaling for mixed precision on CUDA, as
// torch.cuda.amp.GradScaler with its defaults (init 65536, growth x2 after
// 2000 clean steps, backoff x0.5 on inf/NaN). Disabled (a pass-through) on CPU.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace torch::optim {
class Optimizer;
}

namespace ffyolo {

class GradScaler {
 public:
  explicit GradScaler(bool enabled, double init_scale = 65536.0, double growth = 2.0, double backoff = 0.5,
                      int64_t interval = 2000);

  bool enabled() const { return enabled_; }
  at::Tensor Scale(const at::Tensor& loss);
  // Divides the gradients by the scale and records whether any is inf/NaN, once per step.
  void Unscale(torch::optim::Optimizer& optimizer);
  // Unscale's device work alone, each time it is called: what a captured step records.
  void UnscaleOnDevice(torch::optim::Optimizer& optimizer);
  // A replayed capture of UnscaleOnDevice unscaled this step: Step must not unscale again.
  void MarkUnscaled() { unscaled_ = enabled_; }
  // Steps unless the unscaled gradients held inf/NaN; returns whether it stepped.
  bool Step(torch::optim::Optimizer& optimizer);
  // Grows or backs off the scale.
  void Update();

  double scale() const;
  int64_t growth_tracker() const;
  void Restore(double scale, int64_t growth_tracker);

 private:
  bool enabled_;
  double growth_, backoff_;
  int64_t interval_;
  at::Tensor scale_, growth_tracker_, found_inf_;
  bool unscaled_ = false;
};

}  // namespace ffyolo
