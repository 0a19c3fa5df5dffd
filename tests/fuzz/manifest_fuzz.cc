// Manifest::FromYaml (dataset.yaml) on any text.
#include <string>

#include "ffyolo/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ffyolo::Manifest m;
  if (ffyolo::Manifest::FromYaml(std::string(reinterpret_cast<const char*>(data), size), "fuzz", &m).ok()) m.ToYaml();
  return 0;
}
