// Communicator: this worker's place in a data-parallel job and the few
// collectives training needs, over c10d: a TCPStore rendezvous at
// MASTER_ADDR:MASTER_PORT (rank 0 hosts it), then ProcessGroupNCCL for CUDA
// tensors or ProcessGroupGloo for CPU tensors. The LibTorch 1.13 / 2.x
// differences stay in torch_compat.h; this header includes no torch.
//
// Every collective has a timeout; a failure (a peer died, a timeout) throws
// std::runtime_error naming this rank, which Train() turns into an error status.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "ffr/status.h"
#include "ffyolo/dist_env.h"

namespace at {
class Tensor;
}

namespace ffyolo {

class Communicator {
 public:
  // Joins the job described by `env`. cuda_device >= 0: NCCL on that device; -1: Gloo on the CPU.
  // `timeout` bounds the rendezvous and every collective.
  static ffr::Status Create(const DistEnv& env, int cuda_device, std::chrono::milliseconds timeout,
                            std::unique_ptr<Communicator>* out);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int world_size() const;
  const char* backend() const;  // "nccl" or "gloo"

  // Sums `tensor` over all ranks, in place, and waits.
  void AllReduceSum(at::Tensor& tensor);
  // Starts summing `tensor` in place; FinishPending() waits for everything started (in order).
  void StartAllReduceSum(at::Tensor& tensor);
  void FinishPending();
  // Copies rank `root`'s values into `tensors` on every rank (flattened into one message per dtype).
  void Broadcast(const std::vector<at::Tensor>& tensors, int root);
  // True on every rank when `flag` is true on any rank (the job's agreement on stopping).
  bool AnyRank(bool flag);
  // Returns when every rank has called it.
  void Barrier();

 private:
  struct Impl;
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ffyolo
