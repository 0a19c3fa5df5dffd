// ImageDecoder: record image bytes to a BGR image in a reusable buffer.
// JPEG goes through TurboJPEG (grey, 4:4:4, 4:2:0, progressive and CMYK
// JPEGs all come out as 3-channel BGR), PNG through libpng (png_decode.h),
// other encodings through OpenCV's imgcodecs when the build has it. Owns its
// handles and buffers: one per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "ffr/status.h"
#include "ffyolo/record.h"

namespace ffyolo {

class ImageInspector;

// How much of an image to decode.
struct DecodeOptions {
  // With min_w/min_h > 0, a JPEG is decoded at the smallest DCT scale 1/2,
  // 1/4 or 1/8 whose size is still at least min_w x min_h ("decode less" when
  // the image will be shrunk anyway).
  int min_w = 0, min_h = 0;
  // The pixels the caller will read, in coordinates of the (scaled) image;
  // empty: all of them. A JPEG is then decoded only around this rectangle
  // (rows above it are entropy-decoded and skipped, rows below it not read,
  // columns beside it cropped), and the pixels outside it are left unwritten.
  // A mosaic tile needs about a third of its pixels on average.
  cv::Rect region;
  // The image's EXIF orientation (exif.h; the record's): the image comes out as viewed, turned and
  // mirrored as cv::imread(IMREAD_COLOR) turns it, and min_w/min_h and region are in viewed
  // coordinates. 0 and 1: as stored, whatever the image's own tags say.
  int orientation = 1;
};

// The DCT scale denominator (1, 2, 4 or 8) a JPEG of width x height (as
// viewed: options' frame) is decoded at for `options`: the image then decodes
// to ceil(width / d) x ceil(height / d).
int DctScaleDenominator(int width, int height, const DecodeOptions& options);

class ImageDecoder {
 public:
  ImageDecoder();
  ~ImageDecoder();
  ImageDecoder(const ImageDecoder&) = delete;
  ImageDecoder& operator=(const ImageDecoder&) = delete;

  // Decodes into *out, a CV_8UC3 BGR header over this decoder's buffer, valid
  // until the next call, at the scale `options` asks for; *scale_denominator
  // says which (1 = full size). `where` names the sample in errors. Images
  // over kMaxImagePixels (image_check.h) are refused before any pixel is allocated.
  ffr::Status Decode(const uint8_t* data, size_t size, ImageEncoding encoding, const std::string& where,
                     const DecodeOptions& options, cv::Mat* out, int* scale_denominator);

  // Whether this build decodes encodings other than JPEG and PNG.
  static bool SupportsOtherEncodings();

 private:
  class RegionDecoder;

  // *image, decoded as stored over buffer_, as viewed over viewed_ (only `region` of it written).
  void TurnToViewed(int orientation, const cv::Rect& region, cv::Mat* image);

  void* handle_;  // tjhandle
  std::unique_ptr<RegionDecoder> region_decoder_;
  std::unique_ptr<ImageInspector> inspector_;  // image sizes for the pixel limit; made on first use
  std::vector<uint8_t> buffer_;
  std::vector<uint8_t> scratch_;  // CMYK intermediate (grey decodes straight to BGR)
  std::vector<uint8_t> viewed_;   // the image turned by its orientation
};

}  // namespace ffyolo
