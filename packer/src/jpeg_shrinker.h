// JpegShrinker: re-encodes a JPEG whose longest side exceeds a limit so that
// it fits (for datasets of large photos). Owns TurboJPEG handles and buffers:
// one per thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ffr/status.h"
#include "ffyolo/image_check.h"

namespace ffyolo {

class JpegShrinker {
 public:
  JpegShrinker(int max_size, int quality);
  ~JpegShrinker();
  JpegShrinker(const JpegShrinker&) = delete;
  JpegShrinker& operator=(const JpegShrinker&) = delete;

  // When the image is larger than max_size, *out receives the re-encoded
  // bytes and its new size, and *shrunk is true; otherwise nothing changes.
  // `facts` are ImageInspector's for the same bytes: the header is not read
  // again.
  ffr::Status Shrink(std::string_view jpeg, const ImageFacts& facts, const std::string& where, std::string* out,
                     int* width, int* height, bool* shrunk);

 private:
  int max_size_;
  int quality_;
  void* decoder_;
  void* encoder_;
  std::vector<unsigned char> pixels_;
  std::vector<unsigned char> resized_;
};

}  // namespace ffyolo
