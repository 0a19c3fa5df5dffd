// ParseModelConfig (a YOLOv5 model YAML) on any text, with the YAML's own nc
// and with a dataset's nc replacing it.
#include <cstdint>
#include <string>

#include "ffyolo/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  ffyolo::ModelConfig config;
  ffyolo::ParseModelConfig(yaml, "fuzz", 0, &config);
  ffyolo::ParseModelConfig(yaml, "fuzz", 80, &config);
  return 0;
}
