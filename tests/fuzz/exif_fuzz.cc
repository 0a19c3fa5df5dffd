// JpegExifOrientation, PngExifOrientation and ImageExifOrientation on any bytes: 1 to 8, and no read outside them.
#include <cstdint>
#include <cstdlib>

#include "ffyolo/exif.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const int orientation : {ffyolo::JpegExifOrientation(data, size), ffyolo::PngExifOrientation(data, size),
                                ffyolo::ImageExifOrientation(data, size)})
    if (orientation < 1 || orientation > 8) std::abort();
  return 0;
}
