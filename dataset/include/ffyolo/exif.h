// EXIF orientation: how a camera says its stored pixels must be turned to be
// seen upright (a phone photo held upright is often stored sideways with tag 6).
// The values are TIFF's and EXIF's (1 as stored, 2 mirrored, 3 turned 180°,
// 4 flipped, 5 transposed, 6 turned 90° clockwise to view, 7 transversed,
// 8 turned 90° anticlockwise to view); OpenCV's imread and YOLOv5 apply them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ffyolo {

// The orientation cv::imread(IMREAD_COLOR) of OpenCV 4.6 turns an image by, decided as OpenCV and the
// libraries under it read the bytes (its EXIF reader's slips included, so that the loader, the pixel cache and
// yolo-detect see what YOLOv5 sees; exif.cc says how): 1 to 8, 1 where it does not turn the image. Reads
// nothing outside [data, data + size), whatever the bytes.

// A JPEG's: its first APP1 segment before the image data, whatever it holds, read as an EXIF block.
int JpegExifOrientation(const uint8_t* data, size_t size);

// A PNG's: its first eXIf chunk that libpng keeps, before the image data or after it.
int PngExifOrientation(const uint8_t* data, size_t size);

// A JPEG's, a PNG's or a TIFF's (libtiff's reading of its IFD0's tag), by their first bytes; 1 for any other
// bytes (OpenCV 4.6 reads no WebP's).
int ImageExifOrientation(const uint8_t* data, size_t size);

// `jpeg` (from its SOI) with an APP1 EXIF block after the SOI whose IFD0 holds
// `orientation` alone: how yolo-pack --max-size keeps the tag of a JPEG it
// re-encodes (the encoder writes no EXIF).
std::string JpegWithExifOrientation(std::string_view jpeg, int orientation);

// A box (centre and size) on the stored pixels of a width x height image,
// turned with them to where it is seen (yolo-pack --exif apply). Boxes in
// fractions of the sides take width = height = 1.
void TurnBoxToViewed(int orientation, double width, double height, double* cx, double* cy, double* w, double* h);

// Whether pixels of this orientation are turned or mirrored to be viewed (2 to 8; 0, not recorded,
// and 1 are viewed as stored).
inline bool OrientationTurns(int orientation) { return orientation >= 2 && orientation <= 8; }

// Whether an image of this orientation is seen with its width and height
// swapped (5 to 8: a transpose is part of the turn).
inline bool OrientationSwapsSides(int orientation) { return orientation >= 5 && orientation <= 8; }

}  // namespace ffyolo
