// Small real images for the image-check and packer tests, encoded in memory.
#pragma once

#include <string>

namespace ffyolo::testing {

// A baseline JPEG of noise (so the entropy-coded data is long), 1, 3 or 4
// (CMYK, stored as YCCK) components, 4:2:0 when colour.
std::string MakeJpeg(int width, int height, int components);

// A valid 8-bit RGB PNG of a grey ramp.
std::string MakePng(int width, int height);

}  // namespace ffyolo::testing
