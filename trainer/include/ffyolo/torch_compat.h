// The differences between Debian's LibTorch 1.13 (CPU) and CUDA LibTorch 2.x,
// in one place. Everything else in the trainer is written against the common API.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/version.h>

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

}  // namespace ffyolo::compat
