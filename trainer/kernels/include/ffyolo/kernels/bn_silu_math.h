// The per-channel and per-element formulas of BatchNorm2d (training) followed by SiLU, written
// once for the CUDA kernels (bn_silu_cuda.cu) and their host version (bn_silu_host.cc), so that
// a CPU test of the host version in double checks the arithmetic the GPU runs.
//
// Forward, per channel from the batch statistics: scale = weight / sqrt(var + eps),
// shift = bias - mean * scale; per element z = x * scale + shift, y = z * sigmoid(z).
// Backward, per element dz = dy * s * (1 + z * (1 - s)) with s = sigmoid(z) (z recomputed from x,
// never stored); per channel the sums of dz and of dz * (x - mean) give dbias, dweight (the sum of
// dz * xhat, xhat = (x - mean) * invstd) and dx = k * dz + a * (x - mean) + b.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define FFYOLO_HOST_DEVICE __host__ __device__
#else
#define FFYOLO_HOST_DEVICE
#endif

namespace ffyolo::kernels {

FFYOLO_HOST_DEVICE inline float Sigmoid(float z) { return 1.0f / (1.0f + expf(-z)); }
FFYOLO_HOST_DEVICE inline double Sigmoid(double z) { return 1.0 / (1.0 + exp(-z)); }

template <typename T>
FFYOLO_HOST_DEVICE inline T BnSiluForward(T x, T scale, T shift) {
  const T z = x * scale + shift;
  return z * Sigmoid(z);
}

// dL/dz from dL/dy, z = x * scale + shift.
template <typename T>
FFYOLO_HOST_DEVICE inline T PreActivationGrad(T dy, T x, T scale, T shift) {
  const T z = x * scale + shift;
  const T s = Sigmoid(z);
  return dy * s * (T(1) + z * (T(1) - s));
}

// A channel's statistics from sums shifted by a pivot (one of its values): the shift keeps the
// sums small where the mean is large against the spread, so that float sums do not cancel.
struct ChannelStats {
  double mean;
  double var;  // biased, as BatchNorm normalizes with
  double invstd;
};
FFYOLO_HOST_DEVICE inline ChannelStats StatsFromShiftedSums(double pivot, double sum, double sum_squares,
                                                           int64_t rows, double eps) {
  const double shifted_mean = sum / static_cast<double>(rows);
  double var = sum_squares / static_cast<double>(rows) - shifted_mean * shifted_mean;
  if (var < 0) var = 0;
  return {pivot + shifted_mean, var, 1.0 / sqrt(var + eps)};
}

// scale and shift: BatchNorm's affine map of x, its statistics folded in.
struct ChannelAffine {
  double scale, shift;
};
FFYOLO_HOST_DEVICE inline ChannelAffine AffineFromStats(const ChannelStats& s, double weight, double bias) {
  const double scale = weight * s.invstd;
  return {scale, bias - s.mean * scale};
}

// BatchNorm2d's running statistics: the unbiased variance, weighted by momentum.
template <typename T>
FFYOLO_HOST_DEVICE inline void UpdateRunningStats(const ChannelStats& s, int64_t rows, double momentum,
                                                  T* running_mean, T* running_var) {
  const double unbiased = rows > 1 ? s.var * static_cast<double>(rows) / static_cast<double>(rows - 1) : s.var;
  *running_mean = static_cast<T>((1 - momentum) * static_cast<double>(*running_mean) + momentum * s.mean);
  *running_var = static_cast<T>((1 - momentum) * static_cast<double>(*running_var) + momentum * unbiased);
}

// A channel's gradients from the sums of dz and of dz * (x - mean) over its rows (invstd is applied
// here, once per channel, not per element): dweight, and dx = k * dz + a * (x - mean) + b, BatchNorm's
// input gradient k * (dz - mean(dz) - xhat * mean(dz * xhat)) with xhat expanded.
struct ChannelGrads {
  double dweight, k, a, b;
};
FFYOLO_HOST_DEVICE inline ChannelGrads GradsFromSums(double sum_dz, double sum_dz_centred, int64_t rows,
                                                     double weight, double invstd) {
  const double sum_dz_xhat = sum_dz_centred * invstd;
  const double k = weight * invstd;
  return {sum_dz_xhat, k, -k * invstd * sum_dz_xhat / static_cast<double>(rows),
          -k * sum_dz / static_cast<double>(rows)};
}

template <typename T>
FFYOLO_HOST_DEVICE inline T BnSiluInputGrad(T dz, T x, T mean, T k, T a, T b) {
  return k * dz + a * (x - mean) + b;
}

}  // namespace ffyolo::kernels
