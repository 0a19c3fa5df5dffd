#include "ffyolo/device.h"

#include <torch/cuda.h>

namespace ffyolo {

ffr::Status ParseDevice(const std::string& text, c10::Device* device) {
  if (text.empty() || text == "cpu") {
    *device = c10::Device(c10::kCPU);
    return ffr::Status::OK();
  }
  int index = 0;
  try {
    index = std::stoi(text);
  } catch (...) {
    return ffr::Status::InvalidArgument("--device '" + text + "': use cpu or a CUDA device index such as 0");
  }
  if (!torch::cuda::is_available())
    return ffr::Status::InvalidArgument("--device " + text +
                                        ": this LibTorch has no CUDA device available; use --device cpu");
  if (index < 0 || index >= static_cast<int>(torch::cuda::device_count()))
    return ffr::Status::InvalidArgument("--device " + text + ": only " +
                                        std::to_string(torch::cuda::device_count()) + " CUDA device(s)");
  *device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
  return ffr::Status::OK();
}

}  // namespace ffyolo
