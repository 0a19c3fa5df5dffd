// Encodes RGB images with TurboJPEG (2.x API). One encoder per thread: a TurboJPEG
// handle must not be shared.
#pragma once

#include <string>

#include <opencv2/core.hpp>

#include "ffr/status.h"
#include "ffyolo/synthetic.h"

namespace ffyolo {

class JpegEncoder {
 public:
  JpegEncoder();
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;

  // Encodes a CV_8UC3 RGB image into *jpeg. `what` names the image in errors.
  ffr::Status Encode(const cv::Mat& rgb, int quality, JpegSubsampling subsampling, const std::string& what,
                     std::string* jpeg);

 private:
  void* handle_;  // tjhandle
};

}  // namespace ffyolo
