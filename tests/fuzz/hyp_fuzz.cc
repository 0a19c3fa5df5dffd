// Hyp::Parse (hyp YAML) on any text.
#include <string>

#include "ffyolo/hyp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ffyolo::Hyp hyp;
  std::vector<std::string> defaulted;
  if (ffyolo::Hyp::Parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz", &hyp, &defaulted).ok())
    hyp.ToYaml();
  return 0;
}
