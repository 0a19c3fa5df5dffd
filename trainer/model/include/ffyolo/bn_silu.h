// SiLU(BatchNorm2d(x)) in training as one autograd function over the fused kernels
// (ffyolo/kernels/bn_silu_kernels.h): the same outputs, gradients and running statistics as the
// two modules, with the pre-activation neither written forward nor read backward. Conv uses it
// when the model is told to (YoloModel::SetFusedBnSilu, yolo-train --fused-bn-silu).
#pragma once

#include <torch/nn/modules/batchnorm.h>

namespace ffyolo {

// Whether BnSilu computes bn and SiLU of x: bn affine with running statistics and a momentum,
// x 4-D with more than one value per channel, and on CUDA channels-last half or float x with
// float parameters and the channel count the kernels take; on the CPU float or double x and
// parameters of x's type (the host version: a reference, not fast).
bool BnSiluTakes(const torch::Tensor& x, const torch::nn::BatchNorm2dImpl& bn);

// SiLU(bn(x)) with batch statistics, bn's running statistics and num_batches_tracked updated as
// BatchNorm2d's forward in training updates them. x must pass BnSiluTakes.
torch::Tensor BnSilu(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& bn);

}  // namespace ffyolo
