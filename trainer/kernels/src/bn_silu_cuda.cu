// The kernels of bn_silu_kernels.h. Forward: a reduction pass (per-channel sums, shifted by the
// channel's first value), a per-channel finish (statistics, running statistics, scale and shift),
// and an elementwise pass. Backward the same shape: sums of dz and dz·(x - mean), a per-channel
// finish (dweight, dbias, the input gradient's coefficients), an elementwise pass. A thread reads W
// consecutive channels of a row (W = 8: one 16-byte load of halves; 4 in the backward sums) so that a
// warp reads whole rows, and the W channels' parameters with it (16-byte loads of floats).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ffyolo/kernels/bn_silu_kernels.h"
#include "ffyolo/kernels/bn_silu_math.h"

namespace ffyolo::kernels {
namespace {

constexpr int kMaxReductionBlocks = 1024;
constexpr int kFinishThreads = 128;  // a block per channel sums its blocks' partial sums
constexpr int64_t kRowsPerReductionBlock = 128;
constexpr int kElementwiseThreads = 256;
constexpr int64_t kMaxElementwiseBlocks = 8192;

// W consecutive channels of one row, as floats: W = 4 or 8 in one load of halves (8 or 16 bytes) or in
// 16-byte loads of floats, W = 1 one value.
template <typename T, int W>
struct Lanes {
  static_assert(W == 4 || W == 8, "4 or 8 channels a vector");
  using HalfVector = std::conditional_t<W == 8, uint4, uint2>;
  static __device__ void Load(const T* p, float* v) {
    if constexpr (std::is_same_v<T, __half>) {
      const HalfVector raw = *reinterpret_cast<const HalfVector*>(p);
      const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
      for (int i = 0; i < W / 2; ++i) {
        const float2 f = __half22float2(h[i]);
        v[2 * i] = f.x;
        v[2 * i + 1] = f.y;
      }
    } else {
#pragma unroll
      for (int i = 0; i < W / 4; ++i) {
        const float4 a = reinterpret_cast<const float4*>(p)[i];
        v[4 * i] = a.x, v[4 * i + 1] = a.y, v[4 * i + 2] = a.z, v[4 * i + 3] = a.w;
      }
    }
  }
  static __device__ void Store(T* p, const float* v) {
    if constexpr (std::is_same_v<T, __half>) {
      HalfVector raw;
      __half2* h = reinterpret_cast<__half2*>(&raw);
#pragma unroll
      for (int i = 0; i < W / 2; ++i) h[i] = __floats2half2_rn(v[2 * i], v[2 * i + 1]);
      *reinterpret_cast<HalfVector*>(p) = raw;
    } else {
#pragma unroll
      for (int i = 0; i < W / 4; ++i)
        reinterpret_cast<float4*>(p)[i] = make_float4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
    }
  }
};
template <typename T>
struct Lanes<T, 1> {
  static __device__ void Load(const T* p, float* v) { v[0] = static_cast<float>(*p); }
  static __device__ void Store(T* p, const float* v) { *p = static_cast<T>(v[0]); }
};

// How a reduction pass covers the data: each block's threads hold a row's channels side by side, `width`
// (the kernel's W) to a thread, rows_per_pass rows at a time.
struct Reduction {
  int threads;
  int rows_per_pass;
  int blocks;
  size_t shared_bytes;
};
int ReductionBlocks(int64_t rows) {
  return static_cast<int>(std::clamp<int64_t>((rows + kRowsPerReductionBlock - 1) / kRowsPerReductionBlock, 1,
                                              kMaxReductionBlocks));
}
Reduction ReductionFor(int64_t rows, int64_t channels, int width) {
  Reduction r;
  const int vectors = static_cast<int>(channels / width);
  r.threads = vectors <= 256 ? 256 : (vectors + 31) / 32 * 32;
  r.rows_per_pass = r.threads / vectors;
  r.blocks = ReductionBlocks(rows);
  r.shared_bytes = 2 * static_cast<size_t>(r.rows_per_pass) * static_cast<size_t>(channels) * sizeof(float);
  return r;
}

// This block's per-channel sums of two quantities into partials[block][0 or 1][channel].
template <int W>
__device__ void StoreBlockSums(const float* s1, const float* s2, int vector, int lane, int rows_per_pass,
                               int64_t channels, float* partials) {
  extern __shared__ float shared[];
  float* sh1 = shared;
  float* sh2 = shared + rows_per_pass * channels;
  if (lane < rows_per_pass)
#pragma unroll
    for (int i = 0; i < W; ++i) {
      sh1[lane * channels + vector * W + i] = s1[i];
      sh2[lane * channels + vector * W + i] = s2[i];
    }
  __syncthreads();
  for (int64_t c = threadIdx.x; c < channels; c += blockDim.x) {
    float t1 = 0, t2 = 0;
    for (int r = 0; r < rows_per_pass; ++r) {
      t1 += sh1[r * channels + c];
      t2 += sh2[r * channels + c];
    }
    partials[(2 * static_cast<int64_t>(blockIdx.x)) * channels + c] = t1;
    partials[(2 * static_cast<int64_t>(blockIdx.x) + 1) * channels + c] = t2;
  }
}

template <typename T, int W>
__global__ void ForwardSums(const T* x, int64_t rows, int64_t channels, int rows_per_pass, float* partials) {
  const int vectors = static_cast<int>(channels / W);
  const int vector = threadIdx.x % vectors;
  const int lane = threadIdx.x / vectors;
  float pivot[W], s1[W] = {}, s2[W] = {};
  Lanes<T, W>::Load(x + vector * W, pivot);
  if (lane < rows_per_pass)
#pragma unroll 4
    for (int64_t row = static_cast<int64_t>(blockIdx.x) * rows_per_pass + lane; row < rows;
         row += static_cast<int64_t>(gridDim.x) * rows_per_pass) {
      float v[W];
      Lanes<T, W>::Load(x + row * channels + vector * W, v);
#pragma unroll
      for (int i = 0; i < W; ++i) {
        const float d = v[i] - pivot[i];
        s1[i] += d;
        s2[i] += d * d;
      }
    }
  StoreBlockSums<W>(s1, s2, vector, lane, rows_per_pass, channels, partials);
}

// Channel blockIdx.x's two sums over the reduction's blocks, in double, to thread 0 of this block
// (kFinishThreads threads).
__device__ bool SumPartials(const float* partials, int blocks, int64_t channels, double* sum1, double* sum2) {
  const int64_t c = blockIdx.x;
  double t1 = 0, t2 = 0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) {
    t1 += partials[(2 * static_cast<int64_t>(b)) * channels + c];
    t2 += partials[(2 * static_cast<int64_t>(b) + 1) * channels + c];
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    t1 += __shfl_down_sync(0xffffffffu, t1, offset);
    t2 += __shfl_down_sync(0xffffffffu, t2, offset);
  }
  __shared__ double warp_sums[2][kFinishThreads / 32];
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) {
    warp_sums[0][warp] = t1;
    warp_sums[1][warp] = t2;
  }
  __syncthreads();
  if (threadIdx.x != 0) return false;
  *sum1 = 0;
  *sum2 = 0;
  for (int w = 0; w < kFinishThreads / 32; ++w) {
    *sum1 += warp_sums[0][w];
    *sum2 += warp_sums[1][w];
  }
  return true;
}

template <typename T>
__global__ void FinishForward(const T* x, const float* partials, int blocks, int64_t rows, int64_t channels,
                              const float* weight, const float* bias, float* running_mean, float* running_var,
                              double momentum, double eps, float* stats) {
  double sum, sum_squares;
  if (!SumPartials(partials, blocks, channels, &sum, &sum_squares)) return;
  const int64_t c = blockIdx.x;
  const ChannelStats s = StatsFromShiftedSums(static_cast<float>(x[c]), sum, sum_squares, rows, eps);
  UpdateRunningStats(s, rows, momentum, running_mean + c, running_var + c);
  const ChannelAffine affine = AffineFromStats(s, weight[c], bias[c]);
  stats[c] = static_cast<float>(s.mean);
  stats[channels + c] = static_cast<float>(s.invstd);
  stats[2 * channels + c] = static_cast<float>(affine.scale);
  stats[3 * channels + c] = static_cast<float>(affine.shift);
}

// f(i, c0) for each vector of W channels this thread takes (a grid-stride loop): vector i of the data, whose
// first channel is c0.
template <int W, typename F>
__device__ void ForEachVector(int64_t vectors, int64_t channels, F&& f) {
  const int64_t vectors_per_row = channels / W;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    f(i, (i % vectors_per_row) * W);
}

template <typename T, int W>
__global__ void ForwardElements(const T* x, T* y, int64_t vectors, int64_t channels, const float* stats) {
  const float* scale = stats + 2 * channels;
  const float* shift = stats + 3 * channels;
  ForEachVector<W>(vectors, channels, [&](int64_t i, int64_t c0) {
    float v[W], a[W], b[W];
    Lanes<T, W>::Load(x + i * W, v);
    Lanes<float, W>::Load(scale + c0, a);
    Lanes<float, W>::Load(shift + c0, b);
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = BnSiluForward(v[k], a[k], b[k]);
    Lanes<T, W>::Store(y + i * W, v);
  });
}

template <typename T, int W>
__global__ void BackwardSums(const T* x, const T* dy, int64_t rows, int64_t channels, int rows_per_pass,
                             const float* stats, float* partials) {
  const int vectors = static_cast<int>(channels / W);
  const int vector = threadIdx.x % vectors;
  const int lane = threadIdx.x / vectors;
  float mean[W], scale[W], shift[W], s1[W] = {}, s2[W] = {};
  Lanes<float, W>::Load(stats + vector * W, mean);
  Lanes<float, W>::Load(stats + 2 * channels + vector * W, scale);
  Lanes<float, W>::Load(stats + 3 * channels + vector * W, shift);
  if (lane < rows_per_pass)
#pragma unroll 4
    for (int64_t row = static_cast<int64_t>(blockIdx.x) * rows_per_pass + lane; row < rows;
         row += static_cast<int64_t>(gridDim.x) * rows_per_pass) {
      float xv[W], g[W];
      Lanes<T, W>::Load(x + row * channels + vector * W, xv);
      Lanes<T, W>::Load(dy + row * channels + vector * W, g);
#pragma unroll
      for (int i = 0; i < W; ++i) {
        const float dz = PreActivationGrad(g[i], xv[i], scale[i], shift[i]);
        s1[i] += dz;
        s2[i] += dz * (xv[i] - mean[i]);
      }
    }
  StoreBlockSums<W>(s1, s2, vector, lane, rows_per_pass, channels, partials);
}

// coefficients: [3][channels], k, a and b of BnSiluInputGrad.
__global__ void FinishBackward(const float* partials, int blocks, int64_t rows, int64_t channels,
                               const float* weight, const float* stats, float* dweight, float* dbias,
                               float* coefficients) {
  double sum_dz, sum_dz_centred;
  if (!SumPartials(partials, blocks, channels, &sum_dz, &sum_dz_centred)) return;
  const int64_t c = blockIdx.x;
  const ChannelGrads g = GradsFromSums(sum_dz, sum_dz_centred, rows, weight[c], stats[channels + c]);
  dbias[c] = static_cast<float>(sum_dz);
  dweight[c] = static_cast<float>(g.dweight);
  coefficients[c] = static_cast<float>(g.k);
  coefficients[channels + c] = static_cast<float>(g.a);
  coefficients[2 * channels + c] = static_cast<float>(g.b);
}

template <typename T, int W>
__global__ void BackwardElements(const T* x, const T* dy, T* dx, int64_t vectors, int64_t channels,
                                 const float* stats, const float* coefficients) {
  const float* mean = stats;
  const float* scale = stats + 2 * channels;
  const float* shift = stats + 3 * channels;
  ForEachVector<W>(vectors, channels, [&](int64_t i, int64_t c0) {
    float xv[W], g[W], m[W], k[W], a[W], b[W];
    Lanes<T, W>::Load(x + i * W, xv);
    Lanes<T, W>::Load(dy + i * W, g);
    Lanes<float, W>::Load(scale + c0, a);
    Lanes<float, W>::Load(shift + c0, b);
#pragma unroll
    for (int j = 0; j < W; ++j) g[j] = PreActivationGrad(g[j], xv[j], a[j], b[j]);  // dz
    Lanes<float, W>::Load(mean + c0, m);
    Lanes<float, W>::Load(coefficients + c0, k);
    Lanes<float, W>::Load(coefficients + channels + c0, a);
    Lanes<float, W>::Load(coefficients + 2 * channels + c0, b);
#pragma unroll
    for (int j = 0; j < W; ++j) g[j] = BnSiluInputGrad(g[j], xv[j], m[j], k[j], a[j], b[j]);
    Lanes<T, W>::Store(dx + i * W, g);
  });
}

int ElementwiseBlocks(int64_t vectors) {
  return static_cast<int>(
      std::clamp<int64_t>((vectors + kElementwiseThreads - 1) / kElementwiseThreads, 1, kMaxElementwiseBlocks));
}

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

const char* LastError() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

template <typename T, int W>
void LaunchForward(const T* x, T* y, int64_t rows, int64_t channels, const float* weight, const float* bias,
                   float* running_mean, float* running_var, double momentum, double eps, float* stats,
                   float* partials, cudaStream_t stream) {
  const Reduction r = ReductionFor(rows, channels, W);
  ForwardSums<T, W><<<r.blocks, r.threads, r.shared_bytes, stream>>>(x, rows, channels, r.rows_per_pass, partials);
  FinishForward<T><<<static_cast<unsigned>(channels), kFinishThreads, 0, stream>>>(
      x, partials, r.blocks, rows, channels, weight, bias, running_mean, running_var, momentum, eps, stats);
  const int64_t vectors = rows * channels / W;
  ForwardElements<T, W><<<ElementwiseBlocks(vectors), kElementwiseThreads, 0, stream>>>(x, y, vectors, channels,
                                                                                         stats);
}

template <typename T, int W>
void LaunchBackward(const T* x, const T* dy, T* dx, int64_t rows, int64_t channels, const float* weight,
                    const float* stats, float* dweight, float* dbias, float* partials, cudaStream_t stream) {
  // The backward sums read half the forward's vector: with 8 channels a thread they held 96 registers, so
  // a quarter of the SM's threads ran and a pass took 1.6x the forward sums' (H200, 2026-11-27); with 4
  // they hold 56, as the forward sums' 54 (ptxas -v, sm_90).
  constexpr int SW = W == 8 ? 4 : 1;
  const Reduction r = ReductionFor(rows, channels, SW);
  float* coefficients = partials + 2 * static_cast<int64_t>(r.blocks) * channels;
  BackwardSums<T, SW><<<r.blocks, r.threads, r.shared_bytes, stream>>>(x, dy, rows, channels, r.rows_per_pass, stats,
                                                                        partials);
  FinishBackward<<<static_cast<unsigned>(channels), kFinishThreads, 0, stream>>>(
      partials, r.blocks, rows, channels, weight, stats, dweight, dbias, coefficients);
  const int64_t vectors = rows * channels / W;
  BackwardElements<T, W><<<ElementwiseBlocks(vectors), kElementwiseThreads, 0, stream>>>(x, dy, dx, vectors, channels,
                                                                                          stats, coefficients);
}

// The kernels' element type and vector width for this call, as a value f's template arguments come from.
template <typename T, int W>
struct KernelKind {
  using Type = T;
  static constexpr int kWidth = W;
};
template <typename F>
void WithKernelKind(Element element, int64_t channels, F&& f) {
  const bool vectors = channels % 8 == 0;
  if (element == Element::kHalf) {
    vectors ? f(KernelKind<__half, 8>{}) : f(KernelKind<__half, 1>{});
  } else {
    vectors ? f(KernelKind<float, 8>{}) : f(KernelKind<float, 1>{});
  }
}

}  // namespace

bool BnSiluCudaTakes(int64_t channels) {
  return channels > 0 && (channels <= 1024 || (channels % 8 == 0 && channels <= 2048));
}

int64_t BnSiluCudaWorkspace(int64_t rows, int64_t channels) {
  return (2 * static_cast<int64_t>(ReductionBlocks(rows)) + 3) * channels;
}

const char* BnSiluForwardCuda(Element element, const void* x, void* y, int64_t rows, int64_t channels,
                              const float* weight, const float* bias, float* running_mean, float* running_var,
                              double momentum, double eps, float* stats, float* workspace, void* stream) {
  if (!BnSiluCudaTakes(channels)) return "fused BN+SiLU: too many channels";
  if (channels % 8 == 0 && !(Aligned(x) && Aligned(y))) return "fused BN+SiLU: data not 16-byte aligned";
  WithKernelKind(element, channels, [&](auto kind) {
    using T = typename decltype(kind)::Type;
    LaunchForward<T, decltype(kind)::kWidth>(static_cast<const T*>(x), static_cast<T*>(y), rows, channels, weight,
                                             bias, running_mean, running_var, momentum, eps, stats, workspace,
                                             static_cast<cudaStream_t>(stream));
  });
  return LastError();
}

const char* BnSiluBackwardCuda(Element element, const void* x, const void* dy, void* dx, int64_t rows,
                               int64_t channels, const float* weight, const float* stats, float* dweight,
                               float* dbias, float* workspace, void* stream) {
  if (!BnSiluCudaTakes(channels)) return "fused BN+SiLU: too many channels";
  if (channels % 8 == 0 && !(Aligned(x) && Aligned(dy) && Aligned(dx)))
    return "fused BN+SiLU: data not 16-byte aligned";
  WithKernelKind(element, channels, [&](auto kind) {
    using T = typename decltype(kind)::Type;
    LaunchBackward<T, decltype(kind)::kWidth>(static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(dx),
                                              rows, channels, weight, stats, dweight, dbias, workspace,
                                              static_cast<cudaStream_t>(stream));
  });
  return LastError();
}

}  // namespace ffyolo::kernels
