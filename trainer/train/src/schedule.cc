#include "ffyolo/schedule.h"

#include <algorithm>
#include <cmath>

#include "ffyolo/py_round.h"

namespace ffyolo {

double Interp(double x, double x0, double x1, double y0, double y1) {
  if (x <= x0) return y0;
  if (x >= x1) return y1;
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

Schedule::Schedule(const ScheduleOptions& options) : o_(options) {
  base_accumulate_ = std::max(static_cast<int>(PyRound(static_cast<double>(o_.nominal_batch) / o_.batch_size)), 1);
  warmup_ = std::max<int64_t>(static_cast<int64_t>(PyRound(o_.warmup_epochs * o_.batches_per_epoch)), 100);
}

double Schedule::LrFactor(int64_t epoch) const {
  const double e = static_cast<double>(epoch), n = static_cast<double>(o_.epochs);
  if (o_.cosine) return ((1 - std::cos(e * M_PI / n)) / 2) * (o_.lrf - 1) + 1;  // one_cycle(1, lrf, epochs)
  return (1 - e / n) * (1.0 - o_.lrf) + o_.lrf;
}

double Schedule::ScaledWeightDecay(double weight_decay) const {
  return weight_decay * static_cast<double>(o_.batch_size) * base_accumulate_ / o_.nominal_batch;
}

Schedule::Step Schedule::At(int64_t ni, int64_t epoch) const {
  Step s;
  // Past the warmup the lr is LambdaLR's, and train.py's runs one epoch behind its lambda: its constructor
  // steps it once (last_epoch 0), train.py then sets last_epoch = start_epoch - 1, so the step ending epoch
  // e - 1 sets lr0 * lf(e - 1) for epoch e. The epoch in which the warmup ends keeps the warmup's last value,
  // lr0 * lf(epoch), to its end (the scheduler steps only between epochs).
  const int64_t warmup_epoch = warmup_ / std::max<int64_t>(o_.batches_per_epoch, 1);
  const double lr = o_.lr0 * LrFactor(ni <= warmup_ || epoch <= warmup_epoch ? epoch : epoch - 1);
  s.accumulate = base_accumulate_;
  s.momentum = o_.momentum;
  for (double& g : s.lr) g = lr;
  if (ni <= warmup_) {
    const double x = static_cast<double>(ni), x1 = static_cast<double>(warmup_);
    s.accumulate = std::max(
        1, static_cast<int>(PyRound(Interp(x, 0, x1, 1, static_cast<double>(o_.nominal_batch) / o_.batch_size))));
    for (int j = 0; j < 3; ++j) s.lr[j] = Interp(x, 0, x1, j == 0 ? o_.warmup_bias_lr : 0.0, lr);
    s.momentum = Interp(x, 0, x1, o_.warmup_momentum, o_.momentum);
  }
  return s;
}

}  // namespace ffyolo
