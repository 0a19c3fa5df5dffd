// Small real images for the image-check and packer tests, encoded in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ffyolo::testing {

// A baseline JPEG of noise (so the entropy-coded data is long), 1, 3 or 4
// (CMYK, stored as YCCK) components, 4:2:0 when colour.
std::string MakeJpeg(int width, int height, int components);

// `jpeg` with an APP1 EXIF block after its SOI: a little-endian TIFF whose IFD0 holds the orientation alone.
std::string WithExifOrientation(const std::string& jpeg, uint8_t orientation);

// `jpeg` with an XMP APP1 segment after its SOI, as photo tools write it before the EXIF one (cv::imread reads
// the first APP1 segment alone, so it then turns the image by none).
std::string WithXmpFirst(const std::string& jpeg);

// `png` with an eXIf chunk (its CRC right) after IHDR: a little-endian TIFF whose IFD0 holds the orientation.
std::string WithPngExifOrientation(const std::string& png, uint8_t orientation);

// An 8-bit RGB PNG of a grey ramp, every row filtered with `row_filter`
// (0, none; PNG defines 0 to 4, so others make a PNG whose chunks and zlib
// data are whole but whose rows do not decode).
std::string MakePng(int width, int height, unsigned char row_filter = 0);

// Where the data of a PNG's first IDAT chunk starts, and how long it is.
struct IdatSpan {
  size_t data, length;
};
IdatSpan FindIdat(const std::string& png);

// `png` with its first IDAT chunk's data after zlib's 2-byte header replaced
// by 0xff bytes and the chunk's CRC mended: whole chunks whose image data
// does not inflate.
std::string WithJunkIdat(std::string png);

}  // namespace ffyolo::testing
