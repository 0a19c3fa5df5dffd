// The learning-rate, momentum and accumulation schedule of YOLOv5 v7.0's
// train.py: a per-epoch lambda (linear or one-cycle cosine) and a warmup over
// the first max(warmup_epochs * batches, 100) iterations that ramps the lr of
// each parameter group, the momentum and the gradient accumulation.
#pragma once

#include <cstdint>

namespace ffyolo {

struct ScheduleOptions {
  double lr0 = 0.01, lrf = 0.01, momentum = 0.937;
  double warmup_epochs = 3.0, warmup_momentum = 0.8, warmup_bias_lr = 0.1;
  int64_t epochs = 300;
  int64_t batches_per_epoch = 1;
  int64_t batch_size = 16;  // total over ranks
  int nominal_batch = 64;   // nbs
  bool cosine = false;
};

// np.interp(x, [x0, x1], [y0, y1]) with clamping outside [x0, x1].
double Interp(double x, double x0, double x1, double y0, double y1);

class Schedule {
 public:
  explicit Schedule(const ScheduleOptions& options);

  // lf(epoch), train.py's lambda; after the warmup, epoch e trains at lr0 * lf(e - 1) (At).
  double LrFactor(int64_t epoch) const;
  // max(round(nbs / batch_size), 1), Python's banker's rounding.
  int base_accumulate() const { return base_accumulate_; }
  // hyp weight_decay * batch_size * accumulate / nbs.
  double ScaledWeightDecay(double weight_decay) const;
  // Warmup iterations: max(round(warmup_epochs * nb), 100).
  int64_t warmup_iterations() const { return warmup_; }

  // What iteration ni (= batch + nb * epoch) uses.
  struct Step {
    int accumulate;
    double lr[3];  // parameter groups: biases, decayed weights, BN weights
    double momentum;
  };
  Step At(int64_t ni, int64_t epoch) const;

 private:
  ScheduleOptions o_;
  int base_accumulate_;
  int64_t warmup_;
};

}  // namespace ffyolo
