// CheckPickle (the checkpoint reader's check of data.pkl, constants.pkl and
// the .debug_pkl files before LibTorch's unpickler reads them) on any bytes.
// The archive it sits in holds a 64 KiB record for every all-digit key (as
// LibTorch and torch.save name them) and no other.
#include <cstdint>
#include <optional>
#include <string>

#include "pickle_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ffyolo::RecordSize record_size = [](const std::string& name) -> std::optional<uint64_t> {
    const std::string key = name.substr(name.rfind('/') + 1);
    if (key.empty() || key.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return 64 << 10;
  };
  ffyolo::CheckPickle(std::string_view(reinterpret_cast<const char*>(data), size), "archive/data.pkl", record_size);
  return 0;
}
