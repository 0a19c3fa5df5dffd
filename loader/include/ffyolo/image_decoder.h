// ImageDecoder: record image bytes to a BGR image in a reusable buffer.
// JPEG goes through TurboJPEG (grey, 4:4:4, 4:2:0, progressive and CMYK
// JPEGs all come out as 3-channel BGR); other encodings through OpenCV's
// imgcodecs when the build has it. Owns its handles and buffers: one per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "ffr/status.h"
#include "ffyolo/record.h"

namespace ffyolo {

class ImageDecoder {
 public:
  ImageDecoder();
  ~ImageDecoder();
  ImageDecoder(const ImageDecoder&) = delete;
  ImageDecoder& operator=(const ImageDecoder&) = delete;

  // Decodes into *out, a CV_8UC3 BGR header over this decoder's buffer, valid
  // until the next call. With min_w/min_h > 0, a JPEG is decoded at the
  // smallest DCT scale 1/2, 1/4 or 1/8 whose size is still at least
  // min_w x min_h ("decode less" when the image will be shrunk anyway);
  // *scale_denominator says which (1 = full size). `where` names the sample in errors.
  ffr::Status Decode(const uint8_t* data, size_t size, ImageEncoding encoding, const std::string& where, int min_w,
                     int min_h, cv::Mat* out, int* scale_denominator);

  // Whether this build decodes encodings other than JPEG.
  static bool SupportsNonJpeg();

 private:
  void* handle_;  // tjhandle
  std::vector<uint8_t> buffer_;
  std::vector<uint8_t> scratch_;  // CMYK intermediate (grey decodes straight to BGR)
};

}  // namespace ffyolo
