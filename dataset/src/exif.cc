#include "ffyolo/exif.h"

#include <cstring>
#include <utility>

namespace ffyolo {
namespace {

constexpr uint16_t kOrientationTag = 0x0112;

// A TIFF block's integers, in its byte order ("II": little-endian, "MM": big-endian).
struct Tiff {
  const uint8_t* p;
  size_t size;
  bool little;

  bool U16(size_t at, uint16_t* v) const {
    if (at > size || size - at < 2) return false;
    *v = little ? static_cast<uint16_t>(p[at] | p[at + 1] << 8) : static_cast<uint16_t>(p[at] << 8 | p[at + 1]);
    return true;
  }
  bool U32(size_t at, uint32_t* v) const {
    uint16_t a = 0, b = 0;
    if (!U16(at, &a) || !U16(at + 2, &b)) return false;
    *v = little ? (uint32_t{b} << 16 | a) : (uint32_t{a} << 16 | b);
    return true;
  }
  // Whether `length` bytes from `at` lie inside the block.
  bool Holds(size_t at, size_t length) const { return at <= size && length <= size - at; }
};

// The orientation cv::imread turns by, 1 for none: its switch turns by 2 to 8 and leaves any other value.
int TurnOf(uint32_t value) {
  return value <= 8 && OrientationTurns(static_cast<int>(value)) ? static_cast<int>(value) : 1;
}

// The orientation OpenCV 4.6's ExifReader (modules/imgcodecs/src/exif.cpp) reads from a JPEG's or a PNG's
// EXIF block, and so the turn cv::imread gives the image. Its reading, not TIFF's rules:
// - the block is little-endian when it starts "II" and big-endian whatever other two bytes it starts with;
// - it reads IFD0 alone (an orientation in IFD1, the thumbnail's, is not the image's), entry by entry, and the
//   first orientation entry is the one: its first two value bytes, whatever its type and count (so a LONG 6
//   reads 6 little-endian and 0, no turn, big-endian);
// - it decodes the data of some tags as it goes, and one whose data lies past the block's end (or an entry
//   past it) stops the reading there: an orientation read before counts, one after does not.
int OpenCvExifOrientation(const uint8_t* p, size_t size) {
  const Tiff t{p, size, size >= 2 && p[0] == 'I' && p[1] == 'I'};
  uint16_t magic = 0, entries = 0;
  uint32_t ifd = 0;
  if (!t.U16(2, &magic) || magic != 42 || !t.U32(4, &ifd) || !t.U16(ifd, &entries)) return 1;
  for (uint32_t i = 0; i < entries; ++i) {
    const size_t entry = size_t{ifd} + 2 + 12 * size_t{i};
    uint16_t tag = 0, u16 = 0;
    uint32_t count = 0, offset = 0;
    if (!t.U16(entry, &tag)) return 1;
    // The unsigned rationals (8 bytes each) OpenCV reads at the entry's offset for the tags it decodes so.
    size_t rationals = 0;
    switch (tag) {
      case kOrientationTag:
        return t.U16(entry + 8, &u16) ? TurnOf(u16) : 1;
      case 0x010E: case 0x010F: case 0x0110: case 0x0131: case 0x0132: case 0x8298:  // strings
        // Up to 4 bytes read from the block's byte 8 (not the entry's: OpenCV's slip), more from the offset.
        if (!t.U32(entry + 4, &count) || (count > 4 && !t.U32(entry + 8, &offset))) return 1;
        if (!t.Holds(count > 4 ? offset : 8, count)) return 1;
        break;
      case 0x0128: case 0x0213:  // resolution unit, YCbCr positioning: a SHORT in the entry
        if (!t.U16(entry + 8, &u16)) return 1;
        break;
      case 0x011A: case 0x011B: rationals = 1; break;  // x and y resolution
      case 0x013E: rationals = 2; break;               // white point
      case 0x0211: rationals = 3; break;               // YCbCr coefficients
      case 0x013F: case 0x0214: rationals = 6; break;  // primary chromaticities, reference black and white
      default: break;
    }
    if (rationals > 0 && (!t.U32(entry + 8, &offset) || !t.Holds(offset, 8 * rationals))) return 1;
  }
  return 1;
}


// The orientation libtiff gives a TIFF file (OpenCV 4.6 turns a TIFF by it, its own reading): IFD0's first
// orientation entry, when it holds one integer (BYTE, SHORT or LONG, signed or not, read as its type says)
// from 1 to 8; 1 otherwise.
int TiffFileOrientation(const uint8_t* p, size_t size) {
  const Tiff t{p, size, p[0] == 'I'};
  uint16_t entries = 0;
  uint32_t ifd = 0;
  if (!t.U32(4, &ifd) || !t.U16(ifd, &entries)) return 1;
  for (uint32_t i = 0; i < entries; ++i) {
    const size_t entry = size_t{ifd} + 2 + 12 * size_t{i};
    uint16_t tag = 0, type = 0, u16 = 0;
    uint32_t count = 0, value = 0;
    if (!t.U16(entry, &tag) || !t.U16(entry + 2, &type) || !t.U32(entry + 4, &count)) return 1;
    if (tag != kOrientationTag) continue;
    if (count != 1) return 1;
    switch (type) {
      case 1: case 6: value = t.Holds(entry + 8, 1) ? p[entry + 8] : 0; break;   // BYTE, SBYTE
      case 3: case 8: value = t.U16(entry + 8, &u16) ? u16 : 0; break;           // SHORT, SSHORT
      case 4: case 9: if (!t.U32(entry + 8, &value)) value = 0; break;           // LONG, SLONG
      default: break;
    }
    return TurnOf(value);
  }
  return 1;
}

}  // namespace

int JpegExifOrientation(const uint8_t* data, size_t size) {
  // The segments as libjpeg reads them up to the image data, and OpenCV's pick among them: the first APP1
  // segment, whatever it holds (an XMP packet before the EXIF one hides it), read as a TIFF block from its
  // seventh byte (after where "Exif\0\0" goes, unchecked).
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 1;
  size_t at = 2;
  for (;;) {
    while (at < size && data[at] != 0xFF) ++at;  // bytes between segments: libjpeg warns and skips them
    while (at < size && data[at] == 0xFF) ++at;  // fill bytes
    if (at >= size) return 1;
    const uint8_t marker = data[at++];
    if (marker == 0x00) continue;  // a stuffed FF 00 is no marker: skipped too
    // Start of scan, end of image: no APP1 before the image data; a second start of image: libjpeg gives up.
    if (marker == 0xDA || marker == 0xD9 || marker == 0xD8) return 1;
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length
    if (size - at < 2) return 1;
    const size_t length = size_t{data[at]} << 8 | data[at + 1];
    at += 2;
    if (length < 2) continue;  // a bogus length: libjpeg reads on after it, and keeps no segment
    const size_t segment_size = length - 2;
    if (segment_size > size - at) return 1;  // a segment cut short: the decoder reports it
    if (marker == 0xE1) return segment_size > 6 ? OpenCvExifOrientation(data + at + 6, segment_size - 6) : 1;
    at += segment_size;
  }
}

int PngExifOrientation(const uint8_t* data, size_t size) {
  // libpng keeps the first eXIf chunk whose block starts "II" or "MM" (it drops others), before the image
  // data or, when there is none there, after it; OpenCV reads the one it kept.
  static constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (size < 8 || std::memcmp(data, kSignature, 8) != 0) return 1;
  size_t at = 8;
  while (at + 8 <= size) {  // length, type, data, CRC
    const size_t length = size_t{data[at]} << 24 | size_t{data[at + 1]} << 16 | size_t{data[at + 2]} << 8 | data[at + 3];
    const uint8_t* type = data + at + 4;
    if (std::memcmp(type, "IEND", 4) == 0) return 1;
    if (length > size - at - 8) return 1;  // a chunk cut short: the decoder reports it
    const uint8_t* block = data + at + 8;
    if (std::memcmp(type, "eXIf", 4) == 0 && length >= 2 && (block[0] == 'I' || block[0] == 'M') &&
        block[1] == block[0])
      return OpenCvExifOrientation(block, length);
    at += 12 + length;
  }
  return 1;
}

int ImageExifOrientation(const uint8_t* data, size_t size) {
  if (size >= 2 && data[0] == 0xFF && data[1] == 0xD8) return JpegExifOrientation(data, size);
  if (size >= 4 && (std::memcmp(data, "II*\0", 4) == 0 || std::memcmp(data, "MM\0*", 4) == 0))
    return TiffFileOrientation(data, size);
  return PngExifOrientation(data, size);
}

void TurnBoxToViewed(int orientation, double width, double height, double* cx, double* cy, double* w, double* h) {
  const double x = *cx, y = *cy;
  switch (orientation) {  // as the pixels move (the loader's OrientImage)
    case 2: *cx = width - x; break;
    case 3: *cx = width - x, *cy = height - y; break;
    case 4: *cy = height - y; break;
    case 5: *cx = y, *cy = x; break;
    case 6: *cx = height - y, *cy = x; break;
    case 7: *cx = height - y, *cy = width - x; break;
    case 8: *cx = y, *cy = width - x; break;
    default: return;
  }
  if (OrientationSwapsSides(orientation)) std::swap(*w, *h);
}

std::string JpegWithExifOrientation(std::string_view jpeg, int orientation) {
  // A little-endian TIFF header, then IFD0: one entry, tag 0x0112 (orientation), type SHORT, count 1, the
  // value in the entry; no next IFD.
  const std::string tiff = std::string("II*\0\x08\0\0\0", 8) + std::string("\x01\0\x12\x01\x03\0\x01\0\0\0", 10) +
                           std::string(1, static_cast<char>(orientation)) + std::string(7, '\0');
  const std::string payload = std::string("Exif\0\0", 6) + tiff;
  const size_t length = payload.size() + 2;
  const std::string app1 =
      std::string("\xFF\xE1", 2) + static_cast<char>(length >> 8) + static_cast<char>(length & 0xFF) + payload;
  return std::string(jpeg.substr(0, 2)) + app1 + std::string(jpeg.substr(2));
}

}  // namespace ffyolo
