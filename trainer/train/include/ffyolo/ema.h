// ModelEMA (utils/torch_utils.py): an exponential moving average of the
// model's parameters and floating-point buffers (BN statistics included), with
// the decay ramp d(u) = 0.9999 * (1 - exp(-u / 2000)). Validation, best.pt and
// the final weights use it.
#pragma once

#include <memory>

#include "ffyolo/model.h"

namespace ffyolo {

class ModelEma {
 public:
  // `ema` is a second model built from the same config; it starts as a copy of `model`.
  ModelEma(std::shared_ptr<YoloModel> ema, const YoloModel& model, int64_t updates = 0,
           double decay = 0.9999, double tau = 2000);

  // One optimizer step happened: ema = d * ema + (1 - d) * model.
  void Update(const YoloModel& model);
  double Decay(int64_t updates) const;

  YoloModel& model() { return *ema_; }
  std::shared_ptr<YoloModel> shared() const { return ema_; }
  int64_t updates() const { return updates_; }
  void set_updates(int64_t u) { updates_ = u; }

 private:
  std::shared_ptr<YoloModel> ema_;
  int64_t updates_;
  double decay_, tau_;
};

// Copies every parameter and buffer of `from` into `to` (same architecture).
void CopyModelState(const YoloModel& from, YoloModel* to);

}  // namespace ffyolo
