#include "ffyolo/jpeg_header.h"

#include <turbojpeg.h>

namespace ffyolo {

ffr::Status ReadJpegHeader(void** handle, std::string_view bytes, const std::string& where, JpegHeader* out) {
  *out = JpegHeader();
  if (*handle == nullptr) *handle = tjInitDecompress();
  if (*handle == nullptr)
    return ffr::Status::IOError(where + ": cannot create a TurboJPEG decompressor: " + tjGetErrorStr2(nullptr));
  tjhandle tj = static_cast<tjhandle>(*handle);
  if (tjDecompressHeader3(tj, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), &out->width,
                          &out->height, &out->subsampling, &out->colorspace) != 0) {
    const ffr::Status error = ffr::Status::Corruption(where + ": unreadable JPEG header: " + tjGetErrorStr2(tj));
    tjDestroy(tj);
    *handle = tjInitDecompress();
    return error;
  }
  if (out->width <= 0 || out->height <= 0)
    return ffr::Status::Corruption(where + ": unreadable JPEG header: no image size (the JPEG holds only tables)");
  return ffr::Status::OK();
}

}  // namespace ffyolo
