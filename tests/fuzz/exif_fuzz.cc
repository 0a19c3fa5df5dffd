// JpegExifOrientation and PngExifOrientation on any bytes: 1 to 8, and no read outside them.
#include <cstdint>
#include <cstdlib>

#include "ffyolo/exif.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bool malformed = false;
  const int orientation = ffyolo::JpegExifOrientation(data, size, &malformed);
  if (orientation < 1 || orientation > 8 || (malformed && orientation != 1)) std::abort();
  const int in_png = ffyolo::PngExifOrientation(data, size, &malformed);
  if (in_png < 1 || in_png > 8 || (malformed && in_png != 1)) std::abort();
  return 0;
}
