// Small real images for the image-check and packer tests, encoded in memory.
#pragma once

#include <string>

namespace ffyolo::testing {

// A baseline JPEG of noise (so the entropy-coded data is long), 1, 3 or 4
// (CMYK, stored as YCCK) components, 4:2:0 when colour.
std::string MakeJpeg(int width, int height, int components);

// An 8-bit RGB PNG of a grey ramp, every row filtered with `row_filter`
// (0, none; PNG defines 0 to 4, so others make a PNG whose chunks and zlib
// data are whole but whose rows do not decode).
std::string MakePng(int width, int height, unsigned char row_filter = 0);

}  // namespace ffyolo::testing
