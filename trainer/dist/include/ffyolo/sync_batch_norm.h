// Synchronized batch normalization (--sync-bn, torch.nn.SyncBatchNorm): in
// training, the batch statistics are those of the global batch over all
// ranks, so N ranks with batch b normalize exactly as one process with batch
// N*b. Forward all-reduces [n*mean, M2 + n*mean^2, n] per channel (float64,
// so the variance loses nothing to cancellation and ranks may hold unequal
// batches); backward all-reduces [sum dy, sum dy*x_hat] and returns the
// local weight and bias gradients (the data-parallel all-reduce averages
// those). Running statistics are updated as BatchNorm2d does (unbiased
// variance over the global batch).
#pragma once

#include <torch/nn/modules/batchnorm.h>

namespace ffyolo {

class Communicator;

torch::Tensor SyncBatchNorm2d(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& bn, Communicator& comm);

}  // namespace ffyolo
