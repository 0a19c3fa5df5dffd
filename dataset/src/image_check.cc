#include "ffyolo/image_check.h"

#include <turbojpeg.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <vector>

#ifdef FFYOLO_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif

#include "ffr/endian.h"
#include "ffyolo/exif.h"
#include "ffyolo/jpeg_header.h"
#include "ffyolo/png_decode.h"

namespace ffyolo {

namespace {

// How far from the end the end marker (JPEG EOI, PNG IEND) may sit: some
// writers pad files with a few zero or junk bytes after it.
constexpr size_t kEndMarkerWindow = 64;

// Boxes out of the image by less than this (normalized) are float rounding:
// left as they are, without a warning.
constexpr double kRoundingSlack = 1e-6;

bool EndsWithin(std::string_view bytes, std::string_view marker) {
  const size_t start = bytes.size() > kEndMarkerWindow ? bytes.size() - kEndMarkerWindow : 0;
  return bytes.find(marker, start) != std::string_view::npos;
}

uint32_t BigEndian16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 8) | u[1];
}

// Whether an end-of-image marker follows the first scan, wherever it is: some
// files carry more than a few bytes after it (Ultralytics restores them). The
// header segments are skipped by their lengths, since an EXIF thumbnail holds
// an end marker of its own; entropy-coded data cannot hold one.
bool JpegEndsAfterItsScans(std::string_view b) {
  size_t at = 2;  // past SOI
  while (at + 4 <= b.size() && b[at] == '\xFF') {
    const auto marker = static_cast<unsigned char>(b[at + 1]);
    if (marker == 0xDA) return b.find("\xFF\xD9", at) != std::string_view::npos;  // start of scan
    if (marker == 0xFF) {  // fill byte
      ++at;
    } else if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) {  // no length
      at += 2;
    } else {
      at += 2 + BigEndian16(b.data() + at + 2);
    }
  }
  return false;
}

uint32_t BigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

// Every chunk's CRC-32 (over its type and data), up to IEND. libpng checks
// those of the chunks it needs and drops an ancillary chunk that fails its
// CRC with a warning; a damaged chunk is damage all the same.
Status CheckPngChunkCrcs(std::string_view bytes, const std::string& where) {
  for (size_t at = 8; at + 12 <= bytes.size();) {
    const uint32_t length = BigEndian32(bytes.data() + at);
    if (length > bytes.size() - at - 12) break;  // runs past the end: truncated
    const std::string_view type = bytes.substr(at + 4, 4);
    const auto* typed = reinterpret_cast<const Bytef*>(bytes.data() + at + 4);
    if (crc32(0, typed, 4 + length) != BigEndian32(bytes.data() + at + 8 + length))
      return Status::Corruption(where + ": PNG " + std::string(type) + " chunk at byte " + std::to_string(at) +
                                " fails its CRC (damaged data)");
    if (type == "IEND") return Status::OK();
    at += 12 + length;
  }
  return Status::Corruption(where + ": truncated PNG (no IEND chunk)");
}

// By their first bytes, as OpenCV and the inspector tell them.
bool IsJpeg(std::string_view b) { return b.substr(0, 3) == "\xFF\xD8\xFF"; }
bool IsPng(std::string_view b) { return b.substr(0, 8) == std::string_view("\x89PNG\r\n\x1A\n", 8); }

uint32_t LittleEndian32(const char* p) { return ffr::DecodeFixed32(reinterpret_cast<const uint8_t*>(p)); }
uint32_t LittleEndian16(const char* p) { return ffr::DecodeFixed16(reinterpret_cast<const uint8_t*>(p)); }

// Formats the loader hands to OpenCV, recognised by their first bytes: their
// name, or nullptr.
const char* OtherImageFormat(std::string_view b) {
  if (b.substr(0, 2) == "BM") return "BMP";
  if (b.size() >= 12 && b.substr(0, 4) == "RIFF" && b.substr(8, 4) == "WEBP") return "WebP";
  if (b.substr(0, 4) == std::string_view("II*\0", 4) || b.substr(0, 4) == std::string_view("MM\0*", 4)) return "TIFF";
  if (b.substr(0, 2) == "PF" || b.substr(0, 2) == "Pf") return "PFM";
  return nullptr;
}

// The size its header gives, 0x0 when the header is unreadable. TIFF: the
// first image's ImageWidth and ImageLength tags.
void OtherImageSize(std::string_view b, const std::string& format, uint64_t* width, uint64_t* height) {
  *width = *height = 0;
  if (format == "BMP" && b.size() >= 26) {
    const uint32_t dib = LittleEndian32(b.data() + 14);
    if (dib == 12) {  // BITMAPCOREHEADER: 16-bit sizes
      *width = LittleEndian16(b.data() + 18), *height = LittleEndian16(b.data() + 20);
    } else if (dib >= 40) {  // a negative height is a top-down image
      const auto w = static_cast<int32_t>(LittleEndian32(b.data() + 18));
      const auto h = static_cast<int32_t>(LittleEndian32(b.data() + 22));
      if (w > 0 && h != 0 && h != INT32_MIN) *width = w, *height = h < 0 ? -int64_t{h} : h;
    }
  } else if (format == "WebP" && b.size() >= 30) {
    const std::string_view chunk = b.substr(12, 4);
    if (chunk == "VP8 " && b.substr(23, 3) == "\x9D\x01\x2A") {
      *width = LittleEndian16(b.data() + 26) & 0x3FFF, *height = LittleEndian16(b.data() + 28) & 0x3FFF;
    } else if (chunk == "VP8L" && static_cast<unsigned char>(b[20]) == 0x2F) {
      const uint32_t bits = LittleEndian32(b.data() + 21);
      *width = (bits & 0x3FFF) + 1, *height = ((bits >> 14) & 0x3FFF) + 1;
    } else if (chunk == "VP8X" && b.size() >= 31) {
      *width = (LittleEndian32(b.data() + 24) & 0xFFFFFF) + 1, *height = (LittleEndian32(b.data() + 27) & 0xFFFFFF) + 1;
    }
  } else if (format == "TIFF" && b.size() >= 8) {
    const bool little = b[0] == 'I';
    const auto u16 = [&](size_t at) { return little ? LittleEndian16(b.data() + at) : BigEndian16(b.data() + at); };
    const auto u32 = [&](size_t at) { return little ? LittleEndian32(b.data() + at) : BigEndian32(b.data() + at); };
    const uint64_t ifd = u32(4);
    if (ifd + 2 > b.size()) return;
    const uint64_t entries = u16(ifd);
    for (uint64_t e = 0; e < entries && ifd + 2 + 12 * (e + 1) <= b.size(); ++e) {
      const size_t at = ifd + 2 + 12 * e;
      const uint32_t tag = u16(at), type = u16(at + 2);
      if ((tag != 256 && tag != 257) || (type != 3 && type != 4)) continue;  // SHORT or LONG
      (tag == 256 ? *width : *height) = type == 3 ? u16(at + 8) : u32(at + 8);
    }
  } else if (format == "PFM") {  // "PF\n<width> <height>\n<scale>\n"
    std::istringstream header(std::string(b.substr(2, 64)));
    int64_t w = 0, h = 0;
    if (header >> w >> h && w > 0 && h > 0) *width = w, *height = h;
  }
}

// How long an uncompressed BMP or a PFM of width x height must be: OpenCV
// reads every row whole, and on a shorter file its decoder throws, and
// cv::imdecode prints the reason to std::cerr itself ("imdecode_(''): can't
// read data: ... Unexpected end of input stream") before it returns nothing.
// 0 where the length does not follow from the header (RLE-compressed BMPs,
// WebP, TIFF).
uint64_t OtherImageLength(std::string_view b, const std::string& format, uint64_t width, uint64_t height) {
  // Headers give sides up to 2^31: their products can pass 2^64, and a wrapped length would pass a cut file.
  const auto at_most_max = [](unsigned __int128 n) { return n > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(n); };
  if (format == "BMP" && b.size() >= 30) {
    const uint64_t pixels_at = LittleEndian32(b.data() + 10);
    const uint32_t dib = LittleEndian32(b.data() + 14);
    uint32_t bits = 0;
    if (dib == 12) {
      bits = LittleEndian16(b.data() + 24);
    } else if (dib >= 40 && b.size() >= 34) {
      const uint32_t compression = LittleEndian32(b.data() + 30);
      if (compression != 0 && compression != 3) return 0;  // BI_RGB and BI_BITFIELDS only
      bits = LittleEndian16(b.data() + 28);
    }
    if (bits == 15) bits = 16;  // 5-5-5 pixels take two bytes
    if (bits == 0 || bits > 32) return 0;  // OpenCV refuses the header itself
    const uint64_t row = ((width * bits + 7) / 8 + 3) & ~uint64_t{3};  // rows padded to 4 bytes
    return at_most_max(pixels_at + static_cast<unsigned __int128>(row) * height);
  }
  if (format == "PFM") {  // "PF" or "Pf", then width, height and scale, each after white space, and one more byte
    size_t at = 2;
    for (int token = 0; token < 3; ++token) {
      while (at < b.size() && std::isspace(static_cast<unsigned char>(b[at]))) ++at;
      while (at < b.size() && !std::isspace(static_cast<unsigned char>(b[at]))) ++at;
    }
    const uint64_t channels = b[1] == 'f' ? 1 : 3;
    return at_most_max(at + 1 + static_cast<unsigned __int128>(width) * height * channels * sizeof(float));
  }
  return 0;
}

// BMP, WebP, TIFF and PFM: the size from the header and, with `full_decode`,
// a whole decode by OpenCV (which the loader decodes them with).
Status InspectOther(std::string_view bytes, const char* format, const std::string& where, bool full_decode,
                    ImageFacts* out) {
  uint64_t width = 0, height = 0;
  OtherImageSize(bytes, format, &width, &height);
  if (width == 0 || height == 0 || width > INT32_MAX || height > INT32_MAX)
    return Status::Corruption(where + ": unreadable " + format + " header: no image size");
  out->encoding = ImageEncoding::kOther;
  out->width = static_cast<uint32_t>(width);
  out->height = static_cast<uint32_t>(height);
  out->components = std::string_view(format) == "PFM" && bytes[1] == 'f' ? 1 : 3;
  const uint64_t length = OtherImageLength(bytes, format, width, height);
  if (bytes.size() < length)
    return Status::Corruption(where + ": truncated " + format + ": its header needs " + std::to_string(length) +
                              " bytes, the file has " + std::to_string(bytes.size()));
  if (!full_decode) return Status::OK();
  FFR_RETURN_IF_ERROR(CheckPixelLimit(format, width, height, where));
  FFR_RETURN_IF_ERROR(CheckOpenCvWouldNotReadAsDicom(bytes, where));
#ifdef FFYOLO_HAVE_IMGCODECS
  cv::Mat decoded;
  try {
    decoded = cv::imdecode(cv::Mat(1, static_cast<int>(bytes.size()), CV_8UC1, const_cast<char*>(bytes.data())),
                           cv::IMREAD_UNCHANGED);
  } catch (const cv::Exception& e) {
    return Status::Corruption(where + ": " + format + " image does not decode: " + e.what());
  }
  if (decoded.empty()) return Status::Corruption(where + ": " + format + " image does not decode");
  if (decoded.cols != static_cast<int>(width) || decoded.rows != static_cast<int>(height))
    return Status::Corruption(where + ": " + format + " image decodes to " + std::to_string(decoded.cols) + "x" +
                              std::to_string(decoded.rows) + " but its header says " + std::to_string(width) + "x" +
                              std::to_string(height));
  out->components = decoded.channels();
  return Status::OK();
#else
  return Status::NotSupported(where + ": cannot decode " + format + " images: this build lacks OpenCV imgcodecs");
#endif
}

Status InspectPng(std::string_view bytes, const std::string& where, bool full_decode, std::vector<uint8_t>* pixels,
                  ImageFacts* out) {
  // Signature (8), then the IHDR chunk: length (4), "IHDR", width, height,
  // bit depth, colour type, ... and its CRC: 33 bytes in all.
  if (bytes.size() < 33 || bytes.substr(12, 4) != "IHDR")
    return Status::Corruption(where + ": PNG without an IHDR chunk");
  const uint32_t width = BigEndian32(bytes.data() + 16), height = BigEndian32(bytes.data() + 20);
  if (width == 0 || height == 0 || width > INT32_MAX || height > INT32_MAX)
    return Status::Corruption(where + ": PNG IHDR gives an invalid size " + std::to_string(width) + "x" +
                              std::to_string(height));
  int components = 0;
  switch (static_cast<unsigned char>(bytes[25])) {
    case 0: components = 1; break;  // grey
    case 2: components = 3; break;  // RGB
    case 3: components = 3; break;  // palette
    case 4: components = 2; break;  // grey + alpha
    case 6: components = 4; break;  // RGBA
    default: return Status::Corruption(where + ": PNG IHDR gives an unknown colour type");
  }
  if (!EndsWithin(bytes, "IEND")) return Status::Corruption(where + ": truncated PNG (no IEND chunk)");
  FFR_RETURN_IF_ERROR(CheckPngChunkCrcs(bytes, where));
  if (full_decode) {
    FFR_RETURN_IF_ERROR(CheckPixelLimit("PNG", width, height, where));
    int decoded_width = 0, decoded_height = 0;
    FFR_RETURN_IF_ERROR(DecodePngToBgr(bytes, where, pixels, &decoded_width, &decoded_height));
  }
  out->encoding = ImageEncoding::kPng;
  out->width = width;
  out->height = height;
  out->components = components;
  return Status::OK();
}

std::string FormatPixels(double value) {
  std::ostringstream out;
  out.precision(4);
  out << value;
  return out.str();
}

}  // namespace

ImageInspector::ImageInspector() : handle_(tjInitDecompress()) {}

ImageInspector::~ImageInspector() {
  if (handle_ != nullptr) tjDestroy(handle_);
}

Status ImageInspector::Inspect(std::string_view bytes, const std::string& where, bool full_decode,
                               ImageFacts* out) {
  *out = ImageFacts();
  if (bytes.empty()) return Status::Corruption(where + ": empty image file");
  if (IsJpeg(bytes)) return InspectJpeg(bytes, where, full_decode, out);
  if (IsPng(bytes)) return InspectPng(bytes, where, full_decode, &pixels_, out);
  if (const char* format = OtherImageFormat(bytes)) return InspectOther(bytes, format, where, full_decode, out);
  std::string start;
  for (const char c : bytes.substr(0, 8)) start += std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : "?";
  return Status::Corruption(where + ": not an image: neither JPEG, PNG, BMP, WebP, TIFF nor PFM (it starts with \"" +
                            start + "\")");
}

Status ImageInspector::InspectJpeg(std::string_view bytes, const std::string& where, bool full_decode,
                                   ImageFacts* out) {
  JpegHeader header;
  FFR_RETURN_IF_ERROR(ReadJpegHeader(&handle_, bytes, where, &header));
  if (!EndsWithin(bytes, "\xFF\xD9") && !JpegEndsAfterItsScans(bytes))
    return Status::Corruption(where + ": truncated JPEG (no end-of-image marker)");
  const bool cmyk = header.colorspace == TJCS_CMYK || header.colorspace == TJCS_YCCK;
  out->encoding = ImageEncoding::kJpeg;
  out->width = static_cast<uint32_t>(header.width);
  out->height = static_cast<uint32_t>(header.height);
  out->components = header.colorspace == TJCS_GRAY ? 1 : cmyk ? 4 : 3;
  out->jpeg_subsampling = header.subsampling;
  if (!full_decode) return Status::OK();
  FFR_RETURN_IF_ERROR(CheckPixelLimit("JPEG", out->width, out->height, where));

  // TurboJPEG converts CMYK and YCCK only to CMYK (the loader then does the rest).
  const int format = header.colorspace == TJCS_GRAY ? TJPF_GRAY : cmyk ? TJPF_CMYK : TJPF_RGB;
  pixels_.resize(static_cast<size_t>(header.width) * header.height * tjPixelSize[format]);
  // Warnings fail too: libjpeg reports corrupt data as warnings and fills in
  // grey, and TurboJPEG's error code cannot tell a warning followed by an
  // error from a warning alone.
  tjhandle tj = static_cast<tjhandle>(handle_);
  if (tjDecompress2(tj, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), pixels_.data(),
                    header.width, 0, header.height, format, 0) != 0)
    return Status::Corruption(where + ": JPEG does not decode cleanly: " + tjGetErrorStr2(tj));
  return Status::OK();
}

Status CheckOpenCvWouldNotReadAsDicom(std::string_view bytes, const std::string& where) {
  constexpr size_t kDicomMagicAt = 128;
  if (bytes.size() < kDicomMagicAt + 4 || bytes.substr(kDicomMagicAt, 4) != "DICM") return Status::OK();
  if (IsJpeg(bytes) || IsPng(bytes)) return Status::OK();
  const char* format = OtherImageFormat(bytes);
  const std::string_view name = format != nullptr ? format : "non-image";
  if (name == "BMP" || name == "TIFF") return Status::OK();
  return Status::Corruption(where + ": " + std::string(name) + " file with \"DICM\" at byte 128: OpenCV would " +
                            "read it as DICOM, whose reader aborts on bad input");
}

Status ApplyImageFacts(const ImageFacts& facts, const std::string& where, bool annotations_viewed, RecordInfo* info) {
  info->encoding = facts.encoding;
  if (facts.width == 0 || facts.height == 0) {
    if (info->width == 0 || info->height == 0)
      return Status::InvalidArgument(where + ": image size unknown: neither JPEG nor PNG, and the source gives " +
                                     "no width and height");
    return Status::OK();
  }
  const bool swaps = OrientationSwapsSides(info->exif_orientation);
  const uint32_t viewed_w = swaps ? facts.height : facts.width, viewed_h = swaps ? facts.width : facts.height;
  const uint32_t want_w = annotations_viewed ? viewed_w : facts.width;
  const uint32_t want_h = annotations_viewed ? viewed_h : facts.height;
  if ((info->width != 0 || info->height != 0) && (info->width != want_w || info->height != want_h)) {
    const std::string stored = std::to_string(facts.width) + "x" + std::to_string(facts.height);
    const std::string viewed = std::to_string(viewed_w) + "x" + std::to_string(viewed_h);
    if (swaps && info->width == facts.height && info->height == facts.width)  // the JSON gave the viewed size
      return Status::InvalidArgument(
          where + ": the image is " + stored + " as stored and " + viewed + " as viewed with its EXIF orientation " +
          std::to_string(info->exif_orientation) + ", the size the annotations give: they were drawn on the viewed " +
          "image, not on the stored pixels as --exif apply and --exif ignore say (pack without them)");
    if (swaps && info->width == facts.width && info->height == facts.height)  // the JSON gave the stored size
      return Status::InvalidArgument(
          where + ": the image is " + viewed + " as viewed with its EXIF orientation " +
          std::to_string(info->exif_orientation) + " but the annotations give its stored size, " + stored +
          ": they were drawn on the stored pixels. Pack with --exif apply to turn these boxes with the pixels, "
          "with --exif ignore to train on the stored pixels, or re-save the image upright (its pixels turned, "
          "the orientation removed)");
    return Status::Corruption(where + ": the image is " + (annotations_viewed ? viewed : stored) +
                              " but the annotations say " + std::to_string(info->width) + "x" +
                              std::to_string(info->height));
  }
  info->width = facts.width;
  info->height = facts.height;
  return Status::OK();
}

Status CheckBoxes(RecordInfo* info, size_t num_classes, const std::string& where,
                  std::vector<std::string>* warnings) {
  if (info->width == 0 || info->height == 0)
    return Status::InvalidArgument(where + ": image size unknown; cannot check its boxes");
  const double side[2] = {static_cast<double>(info->width), static_cast<double>(info->height)};
  size_t clipped = 0;
  double worst_overhang_px = 0;
  for (size_t i = 0; i < info->boxes.size(); ++i) {
    Box& box = info->boxes[i];
    const std::string name = where + ": box " + std::to_string(i) + " (class " + std::to_string(box.class_index) + ")";
    if (box.class_index >= num_classes)
      return Status::Corruption(name + ": class is out of range (nc=" + std::to_string(num_classes) + ")");
    if (!std::isfinite(box.cx) || !std::isfinite(box.cy) || !std::isfinite(box.w) || !std::isfinite(box.h) ||
        !std::isfinite(box.area) || box.area < 0)
      return Status::Corruption(name + ": non-finite coordinate or invalid area");
    if (!(box.w > 0) || !(box.h > 0)) return Status::Corruption(name + ": degenerate box (no width or height)");

    float* centre[2] = {&box.cx, &box.cy};
    float* size[2] = {&box.w, &box.h};
    bool was_clipped = false;
    for (int axis = 0; axis < 2; ++axis) {
      double lo = *centre[axis] - *size[axis] / 2.0, hi = *centre[axis] + *size[axis] / 2.0;
      const double overhang = std::max(-lo, hi - 1);
      if (overhang <= kRoundingSlack) continue;
      const double tolerance = std::max(kBoxClipTolerance, 1.0 / side[axis]);
      if (overhang > tolerance)
        return Status::Corruption(name + ": lies " + FormatPixels(overhang * side[axis]) + " px outside the " +
                                  std::to_string(info->width) + "x" + std::to_string(info->height) +
                                  " image (more than the " + FormatPixels(tolerance * side[axis]) +
                                  " px that are clipped)");
      lo = std::max(lo, 0.0), hi = std::min(hi, 1.0);
      if (!(hi > lo)) return Status::Corruption(name + ": degenerate box (nothing left inside the image)");
      *centre[axis] = static_cast<float>((lo + hi) / 2);
      *size[axis] = static_cast<float>(hi - lo);
      worst_overhang_px = std::max(worst_overhang_px, overhang * side[axis]);
      was_clipped = true;
    }
    clipped += was_clipped;
  }
  if (clipped > 0)
    warnings->push_back(where + ": clipped " + std::to_string(clipped) + " boxes to the image (by up to " +
                        FormatPixels(worst_overhang_px) + " px)");
  return Status::OK();
}

void SetAreaFromBoxes(RecordInfo* info) {
  const double pixels = static_cast<double>(info->width) * info->height;
  for (Box& box : info->boxes) box.area = static_cast<float>(static_cast<double>(box.w) * box.h * pixels);
}

const std::vector<std::string> kImageFormats = {"bmp", "dng", "jpeg", "jpg", "mpo",
                                                "png", "tif", "tiff", "webp", "pfm"};

Status CheckPixelLimit(const char* kind, uint64_t width, uint64_t height, const std::string& where) {
  if (width * height <= kMaxImagePixels) return Status::OK();
  return Status::Corruption(where + ": " + kind + " of " + std::to_string(width) + "x" + std::to_string(height) +
                            " pixels is over the " + std::to_string(kMaxImagePixels) +
                            " that PIL and ffyolo decode (a decompression bomb?)");
}

}  // namespace ffyolo
