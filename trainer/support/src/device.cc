#include "ffyolo/device.h"

#include <torch/cuda.h>
#ifdef FFYOLO_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <algorithm>
#include <cctype>

namespace ffyolo {
namespace {

ffr::Status BadDevice(const std::string& text) {
  return ffr::Status::InvalidArgument("--device '" + text +
                                      "': use cpu, cuda, a CUDA device index such as 0 (or cuda:0), or a list such "
                                      "as 0,1");
}

}  // namespace

ffr::Status ParseDeviceSpec(const std::string& text, DeviceSpec* spec) {
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  *spec = DeviceSpec();
  // Only the flag left out picks the device; a blank one is a value that went missing (an unset variable).
  if (t.empty() && !text.empty()) return BadDevice(text);
  if (t == "cpu") {
    spec->cpu = true;
    return ffr::Status::OK();
  }
  if (t.rfind("cuda:", 0) == 0) t = t.substr(5);
  if (t.empty()) return ffr::Status::OK();
  if (t == "cuda") {
    spec->any_cuda = true;
    return ffr::Status::OK();
  }
  size_t start = 0;
  while (start <= t.size()) {
    const size_t end = std::min(t.find(',', start), t.size());
    const std::string item = t.substr(start, end - start);
    if (item.empty() || item.size() > 4 || !std::all_of(item.begin(), item.end(), ::isdigit)) return BadDevice(text);
    const int index = std::stoi(item);
    if (std::find(spec->cuda.begin(), spec->cuda.end(), index) != spec->cuda.end()) return BadDevice(text);
    spec->cuda.push_back(index);
    start = end + 1;
  }
  return ffr::Status::OK();
}

ffr::Status SelectDevice(const std::string& text, int local_rank, c10::Device* device) {
  DeviceSpec spec;
  FFR_RETURN_IF_ERROR(ParseDeviceSpec(text, &spec));
  const bool available = torch::cuda::is_available();
  if (spec.cpu || (spec.Automatic() && !available)) {
    *device = c10::Device(c10::kCPU);
    return ffr::Status::OK();
  }
  if (!available)
    return ffr::Status::InvalidArgument("--device '" + text +
                                        "' asks for CUDA, and this LibTorch has no CUDA device available; use "
                                        "--device cpu (or leave --device out)");
  const int count = static_cast<int>(torch::cuda::device_count());
  if (local_rank < 0 && spec.cuda.size() > 1)
    return ffr::Status::InvalidArgument("--device " + text + " lists " + std::to_string(spec.cuda.size()) +
                                        " GPUs: train with one data-parallel worker per GPU (--nproc " +
                                        std::to_string(spec.cuda.size()) + ")");
  if (local_rank >= 0 && spec.cuda.size() > 1 && static_cast<int>(spec.cuda.size()) <= local_rank)
    return ffr::Status::InvalidArgument("--device " + text + " lists " + std::to_string(spec.cuda.size()) +
                                        " GPU(s) for local rank " + std::to_string(local_rank));
  const int index = local_rank >= 0 ? local_rank : (spec.cuda.empty() ? 0 : spec.cuda.front());
  if (index >= count)
    return ffr::Status::InvalidArgument("--device " + text + ": only " + std::to_string(count) +
                                        " CUDA device(s) visible");
  *device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
  return ffr::Status::OK();
}

int CudaDeviceCount() { return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0; }

#ifdef FFYOLO_WITH_CUDA
void ReleaseCachedCudaMemory() {
  c10::cuda::device_synchronize();
  c10::cuda::CUDACachingAllocator::emptyCache();
}
CudaSyncsAreErrors::CudaSyncsAreErrors() {
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
}
CudaSyncsAreErrors::~CudaSyncsAreErrors() {
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
}
#else
void ReleaseCachedCudaMemory() {}
CudaSyncsAreErrors::CudaSyncsAreErrors() = default;
CudaSyncsAreErrors::~CudaSyncsAreErrors() = default;
#endif

}  // namespace ffyolo
