#include "jpeg_shrinker.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

namespace ffyolo {

JpegShrinker::JpegShrinker(int max_size, int quality)
    : max_size_(max_size), quality_(quality), decoder_(tjInitDecompress()), encoder_(tjInitCompress()) {}

JpegShrinker::~JpegShrinker() {
  tjDestroy(static_cast<tjhandle>(decoder_));
  tjDestroy(static_cast<tjhandle>(encoder_));
}

ffr::Status JpegShrinker::Shrink(std::string_view jpeg, const std::string& where, std::string* out, int* width,
                                 int* height, bool* shrunk) {
  *shrunk = false;
  tjhandle dec = static_cast<tjhandle>(decoder_);
  const auto* src = reinterpret_cast<const unsigned char*>(jpeg.data());
  int w = 0, h = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(dec, src, jpeg.size(), &w, &h, &subsamp, &colorspace) != 0)
    return ffr::Status::Corruption(where + ": unreadable JPEG header: " + tjGetErrorStr2(dec));
  if (std::max(w, h) <= max_size_) return ffr::Status::OK();
  const bool gray = colorspace == TJCS_GRAY;
  const int pf = gray ? TJPF_GRAY : TJPF_RGB;
  const int channels = tjPixelSize[pf];
  pixels_.resize(static_cast<size_t>(w) * h * channels);
  if (tjDecompress2(dec, src, jpeg.size(), pixels_.data(), w, 0, h, pf, 0) != 0)
    return ffr::Status::Corruption(where + ": JPEG does not decode: " + tjGetErrorStr2(dec));
  const double r = static_cast<double>(max_size_) / std::max(w, h);
  const int nw = std::max(1, static_cast<int>(std::lround(w * r)));
  const int nh = std::max(1, static_cast<int>(std::lround(h * r)));
  resized_.resize(static_cast<size_t>(nw) * nh * channels);
  const int type = gray ? CV_8UC1 : CV_8UC3;
  cv::resize(cv::Mat(h, w, type, pixels_.data()), cv::Mat(nh, nw, type, resized_.data()), cv::Size(nw, nh), 0, 0,
             cv::INTER_AREA);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  tjhandle enc = static_cast<tjhandle>(encoder_);
  if (tjCompress2(enc, resized_.data(), nw, 0, nh, pf, &buf, &size, gray ? TJSAMP_GRAY : TJSAMP_420, quality_,
                  TJFLAG_ACCURATEDCT) != 0) {
    std::string err = tjGetErrorStr2(enc);
    tjFree(buf);
    return ffr::Status::IOError(where + ": JPEG re-encode failed: " + err);
  }
  out->assign(reinterpret_cast<const char*>(buf), size);
  tjFree(buf);
  *width = nw;
  *height = nh;
  *shrunk = true;
  return ffr::Status::OK();
}

}  // namespace ffyolo
