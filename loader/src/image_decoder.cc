#include "ffyolo/image_decoder.h"

#include <turbojpeg.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <exception>

// After <cstdio>: jpeglib.h needs FILE and size_t.
#include <jpeglib.h>

#ifdef FFYOLO_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif

#include "ffyolo/exif.h"
#include "ffyolo/image_check.h"
#include "ffyolo/jpeg_header.h"
#include "ffyolo/orientation.h"
#include "ffyolo/png_decode.h"

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

// Columns decoded beyond each side of a requested region: a cropped decode's
// edge columns may differ from a full decode's, because fancy (smooth) chroma
// upsampling treats the crop's edges as the image's (libjpeg.txt, "Partial
// image decompression"); the columns inside the margin are exact.
constexpr int kCropMargin = 4;

}  // namespace

// libjpeg's partial decompression (jpeg_skip_scanlines, jpeg_crop_scanline),
// with TurboJPEG's defaults (ISLOW DCT, fancy upsampling) so that the pixels
// it decodes equal tjDecompress2's. TurboJPEG 3 offers the same as
// tj3SetCroppingRegion; the 2.1 API Debian 12 ships does not.
class ImageDecoder::RegionDecoder {
 public:
  RegionDecoder() {
    cinfo_.err = jpeg_std_error(&errors_.pub);
    errors_.pub.error_exit = OnError;
    errors_.pub.emit_message = OnMessage;
  }
  ~RegionDecoder() {
    if (created_) jpeg_destroy_decompress(&cinfo_);
  }

  // Decodes `region` (plus kCropMargin columns each side) of the image scaled
  // by 1 / denominator into `dst`, the whole scaled image of width x height
  // with 3 (BGR) or, when `cmyk`, 4 bytes per pixel. On failure returns false
  // and leaves the reason in message().
  bool Decode(const uint8_t* data, size_t size, int denominator, bool cmyk, const cv::Rect& region, int width,
              int height, uint8_t* dst) {
    // Nothing with a destructor lives in this frame: a libjpeg error longjmps here.
    if (setjmp(errors_.jump) != 0) {
      jpeg_abort_decompress(&cinfo_);
      return false;
    }
    if (!created_) {
      jpeg_create_decompress(&cinfo_);
      created_ = true;
    }
    jpeg_mem_src(&cinfo_, data, static_cast<unsigned long>(size));
    jpeg_read_header(&cinfo_, TRUE);
    cinfo_.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_BGR;
    cinfo_.scale_num = 1;
    cinfo_.scale_denom = static_cast<unsigned>(denominator);
    jpeg_start_decompress(&cinfo_);
    if (static_cast<int>(cinfo_.output_width) != width || static_cast<int>(cinfo_.output_height) != height) {
      std::snprintf(errors_.message, sizeof(errors_.message), "JPEG decodes to %ux%u at scale 1/%d, its header says %dx%d",
                    cinfo_.output_width, cinfo_.output_height, denominator, width, height);
      jpeg_abort_decompress(&cinfo_);
      return false;
    }
    const int channels = cmyk ? 4 : 3;
    JDIMENSION x = static_cast<JDIMENSION>(std::max(region.x - kCropMargin, 0));
    JDIMENSION columns = static_cast<JDIMENSION>(std::min(region.x + region.width + kCropMargin, width)) - x;
    if (columns < cinfo_.output_width) jpeg_crop_scanline(&cinfo_, &x, &columns);  // moves x left to an iMCU edge
    if (region.y > 0) jpeg_skip_scanlines(&cinfo_, static_cast<JDIMENSION>(region.y));
    const JDIMENSION end = static_cast<JDIMENSION>(region.y + region.height);
    while (cinfo_.output_scanline < end) {
      JSAMPROW row = dst + (static_cast<size_t>(cinfo_.output_scanline) * width + x) * channels;
      jpeg_read_scanlines(&cinfo_, &row, 1);
    }
    // The rows below the region are never read, so their damage goes unnoticed here.
    jpeg_abort_decompress(&cinfo_);
    return true;
  }

  const char* message() const { return errors_.message; }
  bool warning() const { return errors_.warning; }

 private:
  struct Errors {
    jpeg_error_mgr pub;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX] = {};
    bool warning = false;
  };

  static void OnError(j_common_ptr cinfo) {
    Errors* errors = reinterpret_cast<Errors*>(cinfo->err);
    (*cinfo->err->format_message)(cinfo, errors->message);
    errors->warning = false;
    std::longjmp(errors->jump, 1);
  }

  // As TJFLAG_STOPONWARNING: a warning (corrupt data, premature end) stops the decode.
  static void OnMessage(j_common_ptr cinfo, int level) {
    if (level >= 0) return;  // trace output
    Errors* errors = reinterpret_cast<Errors*>(cinfo->err);
    (*cinfo->err->format_message)(cinfo, errors->message);
    errors->warning = true;
    std::longjmp(errors->jump, 1);
  }

  jpeg_decompress_struct cinfo_ = {};
  Errors errors_;
  bool created_ = false;
};

int DctScaleDenominator(int width, int height, const DecodeOptions& options) {
  if (options.min_w <= 0 || options.min_h <= 0) return 1;
  for (int denom : kScaleDenominators) {
    const tjscalingfactor factor = {1, denom};
    if (TJSCALED(width, factor) >= options.min_w && TJSCALED(height, factor) >= options.min_h) return denom;
  }
  return 1;
}

ImageDecoder::ImageDecoder() : handle_(tjInitDecompress()), region_decoder_(new RegionDecoder()) {}

ImageDecoder::~ImageDecoder() {
  if (handle_ != nullptr) tjDestroy(static_cast<tjhandle>(handle_));
}

bool ImageDecoder::SupportsOtherEncodings() {
#ifdef FFYOLO_HAVE_IMGCODECS
  return true;
#else
  return false;
#endif
}

ffr::Status ImageDecoder::Decode(const uint8_t* data, size_t size, ImageEncoding encoding, const std::string& where,
                                 const DecodeOptions& options, cv::Mat* out, int* scale_denominator) {
  *scale_denominator = 1;
  if (size == 0) return ffr::Status::Corruption(where + ": empty image");

  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (encoding != ImageEncoding::kJpeg) {
    // The header as the packer checked it (a PNG's chunk CRCs, a BMP's or PFM's length), and the size against
    // the pixel limit before the decoder allocates for it.
    if (!inspector_) inspector_ = std::make_unique<ImageInspector>();
    ImageFacts facts;
    FFR_RETURN_IF_ERROR(inspector_->Inspect(bytes, where, /*full_decode=*/false, &facts));
    FFR_RETURN_IF_ERROR(
        CheckPixelLimit(encoding == ImageEncoding::kPng ? "PNG" : "image", facts.width, facts.height, where));
    if (encoding == ImageEncoding::kPng) {
      int width = 0, height = 0;
      FFR_RETURN_IF_ERROR(DecodePngToBgr(bytes, where, &buffer_, &width, &height));
      *out = cv::Mat(height, width, CV_8UC3, buffer_.data());
      TurnToViewed(options.orientation, cv::Rect(0, 0, width, height), out);
      return ffr::Status::OK();
    }
#ifdef FFYOLO_HAVE_IMGCODECS
    FFR_RETURN_IF_ERROR(CheckOpenCvWouldNotReadAsDicom(bytes, where));
    cv::Mat decoded;
    try {
      decoded = cv::imdecode(cv::Mat(1, static_cast<int>(size), CV_8UC1, const_cast<uint8_t*>(data)), cv::IMREAD_COLOR);
    } catch (const std::exception& e) {
      return ffr::Status::Corruption(where + ": " + ImageEncodingName(encoding) + " image does not decode: " + e.what());
    }
    if (decoded.empty())
      return ffr::Status::Corruption(where + ": " + ImageEncodingName(encoding) + " image does not decode");
    // As stored, as the JPEG and PNG paths decode, then turned as they are: OpenCV 4.6 turns a TIFF by its own
    // orientation tag, IMREAD_IGNORE_ORIENTATION or not, so that turn is undone.
    const int turned_by_opencv = ImageExifOrientation(data, size);
    if (buffer_.size() < decoded.total() * 3) buffer_.resize(decoded.total() * 3);
    *out = cv::Mat(ViewedSize(decoded.size(), InverseOrientation(turned_by_opencv)), CV_8UC3, buffer_.data());
    OrientImage(decoded, InverseOrientation(turned_by_opencv), out);
    TurnToViewed(options.orientation, cv::Rect(cv::Point(), out->size()), out);
    return ffr::Status::OK();
#else
    return ffr::Status::NotSupported(where + ": " + ImageEncodingName(encoding) +
                                     " image, but this build lacks OpenCV imgcodecs (only JPEG and PNG decode)");
#endif
  }

  JpegHeader header;
  FFR_RETURN_IF_ERROR(ReadJpegHeader(&handle_, bytes, where, &header));
  tjhandle tj = static_cast<tjhandle>(handle_);
  const int width = header.width, height = header.height, colorspace = header.colorspace;
  FFR_RETURN_IF_ERROR(CheckPixelLimit("JPEG", width, height, where));

  const int orientation = options.orientation;
  const cv::Size viewed_size = ViewedSize(cv::Size(width, height), orientation);
  *scale_denominator = DctScaleDenominator(viewed_size.width, viewed_size.height, options);
  const tjscalingfactor factor = {1, *scale_denominator};
  const int out_w = TJSCALED(width, factor);
  const int out_h = TJSCALED(height, factor);
  const size_t pixels = static_cast<size_t>(out_w) * out_h;
  if (buffer_.size() < pixels * 3) buffer_.resize(pixels * 3);

  // TurboJPEG has no CMYK to RGB conversion; grey and YCbCr sources convert to BGR directly.
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  if (cmyk && scratch_.size() < pixels * 4) scratch_.resize(pixels * 4);
  uint8_t* dst = cmyk ? scratch_.data() : buffer_.data();
  const cv::Rect whole(0, 0, out_w, out_h);
  // The region in stored pixels; one outside the image (a record that lies about the size) falls back
  // to the whole image.
  const cv::Rect viewed_whole(cv::Point(), ViewedSize(whole.size(), orientation));
  const cv::Rect inside = StoredRegion(options.region & viewed_whole, whole.size(), orientation) & whole;
  const cv::Rect region = inside.empty() ? whole : inside;
  if (region != whole) {
    if (!region_decoder_->Decode(data, size, *scale_denominator, cmyk, region, out_w, out_h, dst)) {
      const char* kind = region_decoder_->warning() ? "damaged JPEG" : "JPEG does not decode";
      return ffr::Status::Corruption(where + ": " + kind + ": " + region_decoder_->message());
    }
    if (cmyk) {
      for (int y = region.y; y < region.br().y; ++y) {
        const size_t first = static_cast<size_t>(y) * out_w + region.x;
        InvertedCmykToBgr(scratch_.data() + first * 4, region.width, buffer_.data() + first * 3);
      }
    }
  } else {
    // Warnings (e.g. premature end of data) mean a damaged image: stop at the first one.
    const int flags = TJFLAG_STOPONWARNING;
    if (tjDecompress2(tj, data, size, dst, out_w, 0, out_h, cmyk ? TJPF_CMYK : TJPF_BGR, flags) != 0) {
      const char* kind = tjGetErrorCode(tj) == TJERR_WARNING ? "damaged JPEG" : "JPEG does not decode";
      return ffr::Status::Corruption(where + ": " + kind + ": " + tjGetErrorStr2(tj));
    }
    if (cmyk) InvertedCmykToBgr(scratch_.data(), pixels, buffer_.data());
  }
  *out = cv::Mat(out_h, out_w, CV_8UC3, buffer_.data());
  TurnToViewed(orientation, region, out);
  return ffr::Status::OK();
}

void ImageDecoder::TurnToViewed(int orientation, const cv::Rect& region, cv::Mat* image) {
  if (!OrientationTurns(orientation)) return;
  if (viewed_.size() < image->total() * 3) viewed_.resize(image->total() * 3);
  const cv::Mat viewed(ViewedSize(image->size(), orientation), CV_8UC3, viewed_.data());
  cv::Mat viewed_region = viewed(ViewedRegion(region, image->size(), orientation));
  OrientImage((*image)(region), orientation, &viewed_region);
  *image = viewed;
}

}  // namespace ffyolo
