#include "ffyolo/image_check.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <sstream>

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

uint32_t BigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

Status InspectPng(std::string_view bytes, const std::string& where, ImageFacts* out) {
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
  if (bytes.size() >= 3 && bytes.substr(0, 3) == "\xFF\xD8\xFF") return InspectJpeg(bytes, where, full_decode, out);
  if (bytes.size() >= 8 && bytes.substr(0, 8) == std::string_view("\x89PNG\r\n\x1A\n", 8))
    return InspectPng(bytes, where, out);
  return Status::OK();
}

Status ImageInspector::InspectJpeg(std::string_view bytes, const std::string& where, bool full_decode,
                                   ImageFacts* out) {
  if (handle_ == nullptr)
    return Status::NotSupported(where + ": cannot create a TurboJPEG decompressor: " + tjGetErrorStr2(nullptr));
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned long size = bytes.size();
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle_, data, size, &width, &height, &subsampling, &colorspace) != 0)
    return Status::Corruption(where + ": unreadable JPEG header: " + tjGetErrorStr2(handle_));
  if (width <= 0 || height <= 0)  // tables only, no frame header
    return Status::Corruption(where + ": unreadable JPEG header: no image size (" + std::to_string(width) + "x" +
                              std::to_string(height) + ")");
  if (!EndsWithin(bytes, "\xFF\xD9")) return Status::Corruption(where + ": truncated JPEG (no end-of-image marker)");
  out->encoding = ImageEncoding::kJpeg;
  out->width = static_cast<uint32_t>(width);
  out->height = static_cast<uint32_t>(height);
  out->components = colorspace == TJCS_GRAY ? 1 : (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) ? 4 : 3;
  out->jpeg_subsampling = subsampling;
  if (!full_decode) return Status::OK();

  const int format = colorspace == TJCS_GRAY ? TJPF_GRAY : TJPF_RGB;
  pixels_.resize(static_cast<size_t>(width) * height * tjPixelSize[format]);
  // Warnings fail too: libjpeg reports corrupt data as warnings and fills in
  // grey, and TurboJPEG's error code cannot tell a warning followed by an
  // error from a warning alone.
  if (tjDecompress2(handle_, data, size, pixels_.data(), width, 0, height, format, 0) != 0)
    return Status::Corruption(where + ": JPEG does not decode cleanly: " + tjGetErrorStr2(handle_));
  return Status::OK();
}

Status ApplyImageFacts(const ImageFacts& facts, const std::string& where, RecordInfo* info) {
  info->encoding = facts.encoding;
  if (facts.width == 0 || facts.height == 0) {
    if (info->width == 0 || info->height == 0)
      return Status::InvalidArgument(where + ": image size unknown: neither JPEG nor PNG, and the source gives " +
                                     "no width and height");
    return Status::OK();
  }
  if ((info->width != 0 || info->height != 0) && (info->width != facts.width || info->height != facts.height))
    return Status::Corruption(where + ": the image is " + std::to_string(facts.width) + "x" +
                              std::to_string(facts.height) + " but the annotations say " +
                              std::to_string(info->width) + "x" + std::to_string(info->height));
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

}  // namespace ffyolo
