// Small real images for the image-check and packer tests, encoded in memory.
#pragma once

#include <string>

namespace ffyolo::testing {

// A baseline JPEG of noise (so the entropy-coded data is long), 1 or 3
// components, 4:2:0 when colour.
std::string MakeJpeg(int width, int height, int components);

// A valid 8-bit RGB PNG of a grey ramp.
std::string MakePng(int width, int height);

}  // namespace ffyolo::testing
