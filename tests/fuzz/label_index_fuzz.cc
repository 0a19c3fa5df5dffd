// LabelIndex::Decode (labels.idx.zst) on any bytes.
#include <string>

#include "ffyolo/label_index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ffyolo::LabelIndex index;
  if (ffyolo::LabelIndex::Decode(std::string(reinterpret_cast<const char*>(data), size), "fuzz", &index).ok())
    for (size_t i = 0; i < index.size(); ++i) index.info(i);
  return 0;
}
