#include "jpeg_encoder.h"

#include <turbojpeg.h>

namespace ffyolo {

namespace {

int ToTurboJpeg(JpegSubsampling subsampling) {
  switch (subsampling) {
    case JpegSubsampling::k444:
      return TJSAMP_444;
    case JpegSubsampling::kGray:
      return TJSAMP_GRAY;
    case JpegSubsampling::k420:
      break;
  }
  return TJSAMP_420;
}

}  // namespace

JpegEncoder::JpegEncoder() : handle_(tjInitCompress()) {}

JpegEncoder::~JpegEncoder() {
  if (handle_) tjDestroy(handle_);
}

ffr::Status JpegEncoder::Encode(const cv::Mat& rgb, int quality, JpegSubsampling subsampling, const std::string& what,
                                std::string* jpeg) {
  if (!handle_) return ffr::Status::IOError(what + ": tjInitCompress failed: " + tjGetErrorStr());
  if (rgb.type() != CV_8UC3 || !rgb.isContinuous()) {
    return ffr::Status::InvalidArgument(what + ": JPEG encoding needs a continuous CV_8UC3 image");
  }
  const int samp = ToTurboJpeg(subsampling);
  // With TJFLAG_NOREALLOC TurboJPEG writes into our buffer, sized for the worst case.
  jpeg->resize(tjBufSize(rgb.cols, rgb.rows, samp));
  auto* out = reinterpret_cast<unsigned char*>(jpeg->data());
  unsigned long size = jpeg->size();
  if (tjCompress2(handle_, rgb.data, rgb.cols, 0, rgb.rows, TJPF_RGB, &out, &size, samp, quality,
                  TJFLAG_NOREALLOC) != 0) {
    return ffr::Status::IOError(what + ": tjCompress2 failed: " + tjGetErrorStr2(handle_));
  }
  jpeg->resize(size);
  return ffr::Status::OK();
}

}  // namespace ffyolo
