#include "ffyolo/image_decoder.h"

#include <turbojpeg.h>

#include <exception>

#ifdef FFYOLO_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif

namespace ffyolo {

namespace {

// The DCT scales TurboJPEG decodes with less work than a full decode, coarsest first.
constexpr int kScaleDenominators[] = {8, 4, 2};

// Adobe-style (inverted) CMYK, as libjpeg and Photoshop store it, to BGR:
// each stored value is 255 minus the ink, so R = C * K / 255 and so on.
void InvertedCmykToBgr(const uint8_t* cmyk, size_t pixels, uint8_t* bgr) {
  for (size_t i = 0; i < pixels; ++i, cmyk += 4, bgr += 3) {
    const int k = cmyk[3];
    bgr[0] = static_cast<uint8_t>((cmyk[2] * k + 127) / 255);
    bgr[1] = static_cast<uint8_t>((cmyk[1] * k + 127) / 255);
    bgr[2] = static_cast<uint8_t>((cmyk[0] * k + 127) / 255);
  }
}

}  // namespace

ImageDecoder::ImageDecoder() : handle_(tjInitDecompress()) {}

ImageDecoder::~ImageDecoder() {
  if (handle_ != nullptr) tjDestroy(static_cast<tjhandle>(handle_));
}

bool ImageDecoder::SupportsNonJpeg() {
#ifdef FFYOLO_HAVE_IMGCODECS
  return true;
#else
  return false;
#endif
}

ffr::Status ImageDecoder::Decode(const uint8_t* data, size_t size, ImageEncoding encoding, const std::string& where,
                                 int min_w, int min_h, cv::Mat* out, int* scale_denominator) {
  *scale_denominator = 1;
  if (size == 0) return ffr::Status::Corruption(where + ": empty image");

  if (encoding != ImageEncoding::kJpeg) {
#ifdef FFYOLO_HAVE_IMGCODECS
    cv::Mat decoded;
    try {
      decoded = cv::imdecode(cv::Mat(1, static_cast<int>(size), CV_8UC1, const_cast<uint8_t*>(data)), cv::IMREAD_COLOR);
    } catch (const std::exception& e) {
      return ffr::Status::Corruption(where + ": " + ImageEncodingName(encoding) + " image does not decode: " + e.what());
    }
    if (decoded.empty())
      return ffr::Status::Corruption(where + ": " + ImageEncodingName(encoding) + " image does not decode");
    const size_t bytes = decoded.total() * decoded.elemSize();
    if (buffer_.size() < bytes) buffer_.resize(bytes);
    *out = cv::Mat(decoded.rows, decoded.cols, CV_8UC3, buffer_.data());
    decoded.copyTo(*out);
    return ffr::Status::OK();
#else
    return ffr::Status::NotSupported(where + ": " + ImageEncodingName(encoding) +
                                     " image, but this build lacks OpenCV imgcodecs (only JPEG decodes)");
#endif
  }

  tjhandle tj = static_cast<tjhandle>(handle_);
  if (tj == nullptr) return ffr::Status::IOError(where + ": TurboJPEG did not initialise: " + tjGetErrorStr2(nullptr));
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(tj, data, size, &width, &height, &subsamp, &colorspace) != 0) {
    const ffr::Status error = ffr::Status::Corruption(where + ": unreadable JPEG header: " + tjGetErrorStr2(tj));
    // TurboJPEG 2.1 leaves the handle mid-header after this error, and its next
    // header read then reports success without an image size: start afresh.
    tjDestroy(tj);
    handle_ = tjInitDecompress();
    return error;
  }
  // A tables-only (abbreviated) datastream reads as a header without an image.
  if (width <= 0 || height <= 0) return ffr::Status::Corruption(where + ": JPEG holds no image, only tables");

  if (min_w > 0 && min_h > 0) {
    for (int denom : kScaleDenominators) {
      const tjscalingfactor factor = {1, denom};
      if (TJSCALED(width, factor) >= min_w && TJSCALED(height, factor) >= min_h) {
        *scale_denominator = denom;
        break;
      }
    }
  }
  const tjscalingfactor factor = {1, *scale_denominator};
  const int out_w = TJSCALED(width, factor);
  const int out_h = TJSCALED(height, factor);
  const size_t pixels = static_cast<size_t>(out_w) * out_h;
  if (buffer_.size() < pixels * 3) buffer_.resize(pixels * 3);

  // Warnings (e.g. premature end of data) mean a damaged image: stop at the first one.
  const int flags = TJFLAG_STOPONWARNING;
  // TurboJPEG has no CMYK to RGB conversion; grey and YCbCr sources convert to BGR directly.
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  if (cmyk && scratch_.size() < pixels * 4) scratch_.resize(pixels * 4);
  uint8_t* dst = cmyk ? scratch_.data() : buffer_.data();
  if (tjDecompress2(tj, data, size, dst, out_w, 0, out_h, cmyk ? TJPF_CMYK : TJPF_BGR, flags) != 0) {
    const char* kind = tjGetErrorCode(tj) == TJERR_WARNING ? "damaged JPEG" : "JPEG does not decode";
    return ffr::Status::Corruption(where + ": " + kind + ": " + tjGetErrorStr2(tj));
  }
  if (cmyk) InvertedCmykToBgr(scratch_.data(), pixels, buffer_.data());
  *out = cv::Mat(out_h, out_w, CV_8UC3, buffer_.data());
  return ffr::Status::OK();
}

}  // namespace ffyolo
