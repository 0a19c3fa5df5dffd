// Reading a JPEG's header through a reused TurboJPEG decompressor.
//
// TurboJPEG 2.1 (Debian 12's) leaves a decompressor mid-header when
// tjDecompressHeader3 fails, and the handle's next header read then "succeeds"
// with no image size: one damaged file would fail the good file after it.
// ReadJpegHeader replaces the handle after a failure, so that every caller
// keeping a handle per thread can go on with the next image.
#pragma once

#include <string>
#include <string_view>

#include "ffr/status.h"

namespace ffyolo {

struct JpegHeader {
  int width = 0, height = 0;
  int subsampling = 0;  // TJSAMP_*
  int colorspace = 0;   // TJCS_*
};

// `*handle` is a tjhandle from tjInitDecompress(); it is replaced after a
// failed read. A header without a frame (tables only, no image size) is
// Corruption too. `where` names the image in messages.
ffr::Status ReadJpegHeader(void** handle, std::string_view bytes, const std::string& where, JpegHeader* out);

}  // namespace ffyolo
