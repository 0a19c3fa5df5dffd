// ImageDecoder::Decode on any bytes as a JPEG (TurboJPEG's full and DCT-scaled
// decodes, and the region-decoding libjpeg path: skipped and cropped
// scanlines) and, when they start like a PNG, as a PNG (libpng, png_decode.h).
#include <turbojpeg.h>

#include <cstdint>
#include <cstring>

#include "ffyolo/image_decoder.h"

namespace {

// Decodes only images up to 4 Mpixels: a mutated header of 100 Mpixels
// decodes correctly, only slowly (the packer's check bounds what a record holds).
constexpr uint64_t kMaxPixels = uint64_t{1} << 22;

// A fresh handle each time: TurboJPEG 2.1's handle misreads the next header after a failed one.
bool JpegSizeAllowed(const uint8_t* data, size_t size) {
  const tjhandle tj = tjInitDecompress();
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  const bool header = tjDecompressHeader3(tj, data, size, &width, &height, &subsamp, &colorspace) == 0;
  tjDestroy(tj);
  if (!header) return true;  // the decoder's error is what this target wants to see
  return uint64_t(width > 0 ? width : 0) * uint64_t(height > 0 ? height : 0) <= kMaxPixels;
}

// IHDR's width and height, big-endian at bytes 16..23.
bool PngSizeAllowed(const uint8_t* data, size_t size) {
  if (size < 24) return true;
  const auto be32 = [](const uint8_t* p) { return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]; };
  return uint64_t{be32(data + 16)} * be32(data + 20) <= kMaxPixels;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ffyolo::ImageDecoder decoder;
  cv::Mat image;
  int denominator = 0;
  if (size >= 8 && std::memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0) {
    if (PngSizeAllowed(data, size))
      decoder.Decode(data, size, ffyolo::ImageEncoding::kPng, "fuzz", {}, &image, &denominator);
    return 0;
  }
  if (!JpegSizeAllowed(data, size)) return 0;
  if (!decoder.Decode(data, size, ffyolo::ImageEncoding::kJpeg, "fuzz", {}, &image, &denominator).ok()) return 0;
  const int w = image.cols, h = image.rows;
  // Regions as mosaic tiles ask for them: inside, at the corners, one pixel; at full and half scale.
  const cv::Rect regions[] = {{w / 4, h / 3, w / 2, h / 3}, {0, 0, w / 2 + 1, h / 2 + 1},
                              {w / 2, h / 2, w - w / 2, h - h / 2}, {w - 1, h - 1, 1, 1}};
  for (const cv::Rect& region : regions) {
    ffyolo::DecodeOptions options;
    options.region = region;
    decoder.Decode(data, size, ffyolo::ImageEncoding::kJpeg, "fuzz", options, &image, &denominator);
    options.min_w = (w + 1) / 2;
    options.min_h = (h + 1) / 2;
    options.region = cv::Rect(region.x / 2, region.y / 2, (region.width + 1) / 2, (region.height + 1) / 2);
    decoder.Decode(data, size, ffyolo::ImageEncoding::kJpeg, "fuzz", options, &image, &denominator);
  }
  return 0;
}
