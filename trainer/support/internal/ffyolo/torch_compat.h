// The differences between Debian's LibTorch 1.13 (CPU) and CUDA LibTorch 2.x,
// in one place. Everything else in the trainer is written against the common API.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/optim/optimizer.h>
#include <torch/version.h>

#include <sstream>
#include <string>
#include <type_traits>

// Gloo's headers ship with Debian (libgloo-dev) but not in the pip wheels.
#if defined(USE_C10D_GLOO) && __has_include(<gloo/algorithm.h>)
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#define FFYOLO_HAVE_GLOO 1
#endif
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace ffyolo::compat {

// The LibTorch version as "major.minor.patch".
inline const char* TorchVersion() { return TORCH_VERSION; }

// Mixed precision for CUDA ops (torch.cuda.amp.autocast): 1.13 has the
// global CUDA switch, 2.x takes the device type.
inline void SetCudaAutocast(bool enabled) {
#if TORCH_VERSION_MAJOR >= 2
  at::autocast::set_autocast_enabled(at::kCUDA, enabled);
#else
  at::autocast::set_enabled(enabled);
#endif
  if (!enabled) at::autocast::clear_cache();
}

// Multiplies each tensor in place by a one-element tensor, without reading it
// on the host: one multi-tensor kernel from 2.1, a loop over the tensors in 1.13.
inline void ForeachMulInPlace(at::TensorList tensors, const at::Tensor& factor) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  at::_foreach_mul_(tensors, factor);
#else
  for (at::Tensor t : tensors) t.mul_(factor);
#endif
}

// The key of a parameter's entry in Optimizer::state(): its TensorImpl, as a
// pointer in 2.x, and printed as LibTorch's own optimizers print it
// (c10::guts::to_string: an ostream's hex) in 1.13.
template <class Key = std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type>
Key OptimizerStateKey(const at::Tensor& p) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream printed;
    printed << p.unsafeGetTensorImpl();
    return printed.str();
  } else {
    return static_cast<Key>(p.unsafeGetTensorImpl());
  }
}

// A profiled event's duration in seconds: nanoseconds in 2.x, microseconds in 1.13.
inline double EventSeconds(const torch::autograd::profiler::KinetoEvent& event) {
#if TORCH_VERSION_MAJOR >= 2
  return 1e-9 * static_cast<double>(event.durationNs());
#else
  return 1e-6 * static_cast<double>(event.durationUs());
#endif
}

// When a profiled event started, in nanoseconds: startNs() in 2.x, startUs() in 1.13.
inline int64_t EventStartNs(const torch::autograd::profiler::KinetoEvent& event) {
#if TORCH_VERSION_MAJOR >= 2
  return static_cast<int64_t>(event.startNs());
#else
  return 1000 * static_cast<int64_t>(event.startUs());
#endif
}

// ProcessGroupNCCL and ProcessGroupGloo derive from c10d::ProcessGroup in 1.13
// and from c10d::Backend (a ProcessGroup being a dispatching wrapper) in 2.x;
// their collectives have the same signatures in both.
#if TORCH_VERSION_MAJOR >= 2
using CommBackend = c10d::Backend;
#else
using CommBackend = c10d::ProcessGroup;
#endif

}  // namespace ffyolo::compat
