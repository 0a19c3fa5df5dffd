// Decoding a PNG with libpng, quietly.
//
// OpenCV decodes PNGs with libpng and leaves libpng's default error and
// warning handlers in place, which print "libpng error: ..." to stderr
// themselves: a library of ffyolo would be writing to the user's terminal.
// DecodePngToBgr asks libpng for the same transforms as
// cv::imdecode(IMREAD_COLOR) (16 bits cut to 8, alpha dropped, palettes and
// grey expanded, BGR order, Adam7 passes combined), so its pixels equal
// OpenCV's, and returns libpng's error as a Status. Warnings (an incorrect
// sRGB profile, extra data after the last row) do not stop OpenCV's decode
// and do not stop this one. The packer's --check and the loader decode PNGs
// with it alike, so a PNG the check passes is a PNG the loader decodes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ffr/status.h"

namespace ffyolo {

// Decodes `bytes` into `*pixels` (resized to width * height * 3 bytes, rows
// back to back) and sets *width and *height. The caller checks the header's
// size against kMaxImagePixels (image_check.h) first: libpng's own limit is
// a million pixels a side. Errors are Corruption naming `where`.
ffr::Status DecodePngToBgr(std::string_view bytes, const std::string& where, std::vector<uint8_t>* pixels,
                           int* width, int* height);

}  // namespace ffyolo
