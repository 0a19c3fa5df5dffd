// The --device flag as Ultralytics' select_device reads it: "" (the flag left
// out) picks the first CUDA device when there is one, else the CPU; "cpu";
// "cuda", "0" or "cuda:0"; "0,1,2,3" lists the GPUs of a data-parallel job, one
// per rank. Every spelling that names CUDA is refused where there is none, as
// select_device refuses it, rather than run on the CPU.
#pragma once

#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "ffr/status.h"

namespace ffyolo {

struct DeviceSpec {
  bool cpu = false;
  bool any_cuda = false;  // "cuda": the first CUDA device
  std::vector<int> cuda;  // the listed CUDA indices
  // Neither the CPU nor CUDA named: CUDA where there is one.
  bool Automatic() const { return !cpu && !any_cuda && cuda.empty(); }
};

// The syntax alone (no device is queried), so it is checked on any machine.
ffr::Status ParseDeviceSpec(const std::string& text, DeviceSpec* spec);

// The device of a single process (the first listed GPU) or of data-parallel
// rank `local_rank` (>= 0: the launcher made the listed GPUs the visible ones,
// so the rank takes visible device local_rank), checked against this LibTorch.
ffr::Status SelectDevice(const std::string& text, int local_rank, c10::Device* device);

// CUDA devices this LibTorch can use (0 on a CPU build or machine).
int CudaDeviceCount();

// Waits for the current CUDA device, then gives the caching allocator's free blocks back to it, as
// torch.cuda.synchronize() then torch.cuda.empty_cache(). Nothing on a CPU-only LibTorch.
void ReleaseCachedCudaMemory();

// While one lives, every call that makes the host wait for the GPU (a copy to
// the host, .item(), nonzero, a synchronize) throws, as PyTorch's
// torch.cuda.set_sync_debug_mode("error"): a test proves a path never waits.
// Nothing on a CPU-only LibTorch.
class CudaSyncsAreErrors {
 public:
  CudaSyncsAreErrors();
  ~CudaSyncsAreErrors();
  CudaSyncsAreErrors(const CudaSyncsAreErrors&) = delete;
  CudaSyncsAreErrors& operator=(const CudaSyncsAreErrors&) = delete;
};

}  // namespace ffyolo
