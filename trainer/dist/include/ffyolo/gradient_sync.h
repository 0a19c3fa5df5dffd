// GradientSync: data-parallel gradient averaging overlapped with the backward
// pass (what PyTorch DDP's Reducer does). Parameters are grouped into buckets
// in reverse registration order, the order backward produces their gradients:
// a small first bucket (1 MiB) so communication starts early, then about
// 25 MiB each. A hook per parameter copies its gradient into its bucket; a
// bucket is all-reduced asynchronously once it and every bucket before it are
// complete, so all ranks issue the same collectives in the same order while
// the rest of the backward pass runs. Finish() waits and writes the averages
// into .grad.
//
// With gradient accumulation only the backward pass of the step that updates
// communicates (Prepare(false) for the others): its buckets receive the
// accumulated gradient (.grad plus this pass's part).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace at {
class Tensor;
}

namespace ffyolo {

class Communicator;

class GradientSync {
 public:
  // The parameters must share one dtype and device and outlive this object.
  GradientSync(Communicator* comm, const std::vector<at::Tensor>& params, int64_t bucket_bytes = 25 << 20,
               int64_t first_bucket_bytes = 1 << 20);
  ~GradientSync();  // removes the hooks
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // Before backward: average this pass's gradients (true) or only accumulate them locally.
  void Prepare(bool sync);
  // After backward: waits for every bucket and leaves the mean over ranks in each .grad.
  void Finish();
  // Averages what each .grad holds now over the ranks, in the same buckets: after a backward pass that
  // did not communicate (a captured one, captured_step.h).
  void AllReduceGradients();

  size_t num_buckets() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ffyolo
