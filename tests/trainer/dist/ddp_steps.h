// A few YOLOv5 training steps (yolov5n, ComputeLoss, SGD) on a fixed global
// batch, either as one rank of a data-parallel job or in one process as the
// reference that job must reproduce. Shared by ddp_step_worker (the ranks)
// and ddp_test (the references and the comparison).
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace ffyolo {

class Communicator;

struct DdpStepsOptions {
  bool sync_bn = false;
  int micro_steps = 1;       // backward passes per optimizer step (gradient accumulation)
  int updates = 2;           // optimizer steps
  int per_rank_batch = 2;
  int world_size = 2;        // ranks the global batch is split over
  // The gradients all-reduced after the last backward pass instead of during it: the captured step's
  // structure (captured_step.h), whose graph ends at a backward that does not communicate.
  bool after_backward = false;
};

// "plain", "accumulate", "syncbn", "syncbn-accumulate", "after-backward", "after-backward-accumulate".
DdpStepsOptions DdpStepsMode(const std::string& mode);

// As rank comm->rank(): seeds with 1 + rank (rank 0's weights are broadcast),
// trains on its share of each global batch with GradientSync (and SyncBN).
// Returns the parameters followed by the buffers.
std::vector<at::Tensor> RunDdpRank(const DdpStepsOptions& options, Communicator* comm);

// One process, weights of rank 0. With `per_rank_bn` each rank's share goes
// through its own forward and backward pass (BatchNorm over that share, what
// unsynchronized data parallelism computes), else the whole global batch goes
// through one pass (what synchronized BatchNorm must reproduce). `only_rank`
// >= 0 trains on that rank's share alone (a control that must differ).
std::vector<at::Tensor> RunReference(const DdpStepsOptions& options, bool per_rank_bn, int only_rank = -1);

// How many of the returned tensors are parameters.
size_t DdpParameterCount();

}  // namespace ffyolo
