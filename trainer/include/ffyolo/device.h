// The --device flag: "cpu" or a CUDA device index, checked against what this LibTorch can use.
#pragma once

#include <string>

#include <c10/core/Device.h>

#include "ffr/status.h"

namespace ffyolo {

ffr::Status ParseDevice(const std::string& text, c10::Device* device);

}  // namespace ffyolo
