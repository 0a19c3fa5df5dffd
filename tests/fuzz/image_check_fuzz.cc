// ImageInspector::Inspect with a full decode (JPEG headers and TurboJPEG, PNG
// chunks and zlib) on any bytes.
#include <string_view>

#include "ffyolo/image_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ffyolo::ImageInspector inspector;
  ffyolo::ImageFacts facts;
  inspector.Inspect(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz", /*full_decode=*/true,
                    &facts);
  return 0;
}
