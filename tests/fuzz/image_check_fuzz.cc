// ImageInspector::Inspect with a full decode (JPEG headers and TurboJPEG, PNG
// chunks and zlib) on any bytes.
#include <cstdint>
#include <string_view>

#include "ffyolo/image_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ffyolo::ImageInspector inspector;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ffyolo::ImageFacts facts;
  // Full decodes only of headers up to 4 Mpixels: a mutated size of 100 Mpixels decodes correctly, only slowly.
  if (inspector.Inspect(bytes, "fuzz", /*full_decode=*/false, &facts).ok() &&
      uint64_t{facts.width} * facts.height <= (uint64_t{1} << 22))
    inspector.Inspect(bytes, "fuzz", /*full_decode=*/true, &facts);
  return 0;
}
