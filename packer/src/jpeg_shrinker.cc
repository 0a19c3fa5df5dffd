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

ffr::Status JpegShrinker::Shrink(std::string_view jpeg, const ImageFacts& facts, const std::string& where,
                                 std::string* out, int* width, int* height, bool* shrunk) {
  *shrunk = false;
  const int w = static_cast<int>(facts.width), h = static_cast<int>(facts.height);
  if (std::max(w, h) <= max_size_) return ffr::Status::OK();
  FFR_RETURN_IF_ERROR(CheckPixelLimit("JPEG", facts.width, facts.height, where));
  tjhandle dec = static_cast<tjhandle>(decoder_);
  const auto* src = reinterpret_cast<const unsigned char*>(jpeg.data());
  const bool gray = facts.components == 1;
  // CMYK and YCCK (4 components) decode only to CMYK, and re-encode from it
  // as YCCK, so the ink values pass through unchanged.
  const bool cmyk = facts.components == 4;
  const int pf = gray ? TJPF_GRAY : cmyk ? TJPF_CMYK : TJPF_RGB;
  const int channels = tjPixelSize[pf];
  pixels_.resize(static_cast<size_t>(w) * h * channels);
  if (tjDecompress2(dec, src, jpeg.size(), pixels_.data(), w, 0, h, pf, 0) != 0)
    return ffr::Status::Corruption(where + ": JPEG does not decode: " + tjGetErrorStr2(dec));
  const double r = static_cast<double>(max_size_) / std::max(w, h);
  const int nw = std::max(1, static_cast<int>(std::lround(w * r)));
  const int nh = std::max(1, static_cast<int>(std::lround(h * r)));
  resized_.resize(static_cast<size_t>(nw) * nh * channels);
  const int type = CV_8UC(channels);
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
