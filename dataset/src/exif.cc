#include "ffyolo/exif.h"

#include <cstring>
#include <utility>

namespace ffyolo {
namespace {

constexpr uint16_t kOrientationTag = 0x0112;
constexpr uint16_t kShort = 3;  // TIFF field type

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
};

// The orientation in a TIFF block's IFD0: 0 when the tag is absent, -1 when the block is malformed.
int TiffOrientation(const uint8_t* p, size_t size) {
  if (size < 8) return -1;
  Tiff t{p, size, true};
  if (std::memcmp(p, "II", 2) == 0) {
    t.little = true;
  } else if (std::memcmp(p, "MM", 2) == 0) {
    t.little = false;
  } else {
    return -1;
  }
  uint16_t magic = 0, entries = 0;
  uint32_t ifd = 0;
  if (!t.U16(2, &magic) || magic != 42 || !t.U32(4, &ifd) || !t.U16(ifd, &entries)) return -1;
  for (uint32_t i = 0; i < entries; ++i) {
    const size_t entry = size_t{ifd} + 2 + 12 * size_t{i};
    uint16_t tag = 0, type = 0, value = 0;
    uint32_t count = 0;
    if (!t.U16(entry, &tag) || !t.U16(entry + 2, &type) || !t.U32(entry + 4, &count) || !t.U16(entry + 8, &value))
      return -1;
    if (tag != kOrientationTag) continue;
    if (type != kShort || count != 1 || value < 1 || value > 8) return -1;
    return value;
  }
  return 0;
}

// The orientation of an image whose EXIF is the TIFF block at p: 1 (as stored) when it has none or the block
// is malformed, which *malformed says.
int ImageOrientation(const uint8_t* p, size_t size, bool* malformed) {
  const int orientation = TiffOrientation(p, size);
  if (orientation < 0 && malformed) *malformed = true;
  return orientation > 0 ? orientation : 1;
}

}  // namespace

int JpegExifOrientation(const uint8_t* data, size_t size, bool* malformed) {
  if (malformed) *malformed = false;
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 1;
  size_t at = 2;
  while (at + 4 <= size) {
    if (data[at] != 0xFF) return 1;  // not at a marker: no EXIF before the image data
    const uint8_t marker = data[at + 1];
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) return 1;  // start of scan, end of image: no EXIF
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {  // no length
      at += 2;
      continue;
    }
    const size_t length = size_t{data[at + 2]} << 8 | data[at + 3];
    if (length < 2 || at + 2 + length > size) return 1;  // a segment cut short: the decoder reports it
    const uint8_t* segment = data + at + 4;
    const size_t segment_size = length - 2;
    if (marker == 0xE1 && segment_size >= 6 && std::memcmp(segment, "Exif\0\0", 6) == 0)
      return ImageOrientation(segment + 6, segment_size - 6, malformed);
    at += 2 + length;
  }
  return 1;
}

int PngExifOrientation(const uint8_t* data, size_t size, bool* malformed) {
  static constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (malformed) *malformed = false;
  if (size < 8 || std::memcmp(data, kSignature, 8) != 0) return 1;
  size_t at = 8;
  while (at + 8 <= size) {  // length, type, data, CRC
    const size_t length = size_t{data[at]} << 24 | size_t{data[at + 1]} << 16 | size_t{data[at + 2]} << 8 | data[at + 3];
    const uint8_t* type = data + at + 4;
    if (std::memcmp(type, "IDAT", 4) == 0 || std::memcmp(type, "IEND", 4) == 0) return 1;
    if (length > size - at - 8) return 1;  // a chunk cut short: the decoder reports it
    if (std::memcmp(type, "eXIf", 4) == 0) return ImageOrientation(data + at + 8, length, malformed);
    at += 12 + length;
  }
  return 1;
}

int ImageExifOrientation(const uint8_t* data, size_t size, bool* malformed) {
  if (size >= 2 && data[0] == 0xFF && data[1] == 0xD8) return JpegExifOrientation(data, size, malformed);
  if (malformed) *malformed = false;
  if (size >= 4 && (std::memcmp(data, "II*\0", 4) == 0 || std::memcmp(data, "MM\0*", 4) == 0))
    return ImageOrientation(data, size, malformed);  // a TIFF file is the TIFF block
  return PngExifOrientation(data, size, malformed);
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
