// BatchNorm2d in training (batch statistics; running statistics updated as BatchNorm2d's) followed
// by SiLU, forward and backward, in two passes each over the data (docs/gpu.md, "Fused
// BatchNorm+SiLU"): the pre-activation is never stored, the backward pass recomputes it from x.
//
// Data is [rows, channels] row-major: a channels-last N×C×H×W tensor, rows = N·H·W. `stats` holds
// 4 × channels values the forward pass writes and the backward pass reads: mean, invstd, scale,
// shift (bn_silu_math.h). Torch-free: the autograd wiring is trainer/model's bn_silu.h.
#pragma once

#include <cstdint>

namespace ffyolo::kernels {

// The host version, in the element type (float or double) throughout: the reference the tests
// hold the formulas to, and the CPU path of the autograd function.
template <typename T>
void BnSiluForwardHost(const T* x, T* y, int64_t rows, int64_t channels, const T* weight, const T* bias,
                       T* running_mean, T* running_var, double momentum, double eps, T* stats);
template <typename T>
void BnSiluBackwardHost(const T* x, const T* dy, T* dx, int64_t rows, int64_t channels, const T* weight,
                        const T* stats, T* dweight, T* dbias);

// The CUDA kernels (built only against a CUDA LibTorch). Elements are half or float; per-channel
// arrays float. Every launch goes to `stream` (a cudaStream_t) and none waits for the device, so
// that the step can be captured as a CUDA graph. They return nullptr, or the CUDA error's text.
enum class Element { kHalf, kFloat };
// Channels up to 1024, or up to 2048 when a multiple of 8 (then every pointer must be 16-byte aligned).
bool BnSiluCudaTakes(int64_t channels);
// Floats of scratch memory a forward or backward pass of this size needs.
int64_t BnSiluCudaWorkspace(int64_t rows, int64_t channels);
const char* BnSiluForwardCuda(Element element, const void* x, void* y, int64_t rows, int64_t channels,
                              const float* weight, const float* bias, float* running_mean, float* running_var,
                              double momentum, double eps, float* stats, float* workspace, void* stream);
const char* BnSiluBackwardCuda(Element element, const void* x, const void* dy, void* dx, int64_t rows,
                               int64_t channels, const float* weight, const float* stats, float* dweight,
                               float* dbias, float* workspace, void* stream);

}  // namespace ffyolo::kernels
