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

// The orientation a JPEG's APP1 "Exif" segment gives in IFD0 (tag 0x0112).
// 1 where there is none: no EXIF, no such tag, not a JPEG. A malformed EXIF
// block (truncated, offsets past its end, a value outside 1..8) gives 1 too,
// and sets *malformed when the caller asks. Reads nothing outside
// [data, data + size), whatever the bytes.
int JpegExifOrientation(const uint8_t* data, size_t size, bool* malformed = nullptr);

// The orientation a PNG's eXIf chunk (a TIFF block, before the image data)
// gives, as OpenCV's imread applies it; 1 and *malformed as above.
int PngExifOrientation(const uint8_t* data, size_t size, bool* malformed = nullptr);

// A JPEG's, a PNG's or a TIFF's (its IFD0's tag, by their first bytes), 1 for
// any other bytes: the orientation cv::imread(IMREAD_COLOR) turns the image by
// (OpenCV 4.6 reads no WebP's).
int ImageExifOrientation(const uint8_t* data, size_t size, bool* malformed = nullptr);

// `jpeg` (from its SOI) with an APP1 EXIF block after the SOI whose IFD0 holds
// `orientation` alone: how yolo-pack --max-size keeps the tag of a JPEG it
// re-encodes (the encoder writes no EXIF).
std::string JpegWithExifOrientation(std::string_view jpeg, int orientation);

// A box (centre and size) on the stored pixels of a width x height image,
// turned with them to where it is seen (yolo-pack --exif apply). Boxes in
// fractions of the sides take width = height = 1.
void TurnBoxToViewed(int orientation, double width, double height, double* cx, double* cy, double* w, double* h);

// Whether an image of this orientation is seen with its width and height
// swapped (5 to 8: a transpose is part of the turn).
inline bool OrientationSwapsSides(int orientation) { return orientation >= 5 && orientation <= 8; }

}  // namespace ffyolo
