// Image and box checks the packer runs on every image before storing it, and
// `yolo-ffr verify` again on every stored one: a packed dataset should hold
// only images that decode and boxes that lie in their image, so that training
// never meets a broken sample.
//
// Per image, in this order:
//   ImageInspector::Inspect  -> the encoding and real size of the bytes
//   ApplyImageFacts          -> record them, checking the size the JSON gave
//   CheckBoxes               -> clip or reject boxes against the image
//   SetAreaFromBoxes         -> YOLO sources only (SourceImage::area_from_box)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ffyolo/record.h"

namespace ffyolo {

struct ImageFacts {
  ImageEncoding encoding = ImageEncoding::kOther;
  uint32_t width = 0, height = 0;
  int components = 0;              // colour channels (kOther: 3 or 1 unless decoded)
  int jpeg_subsampling = -1;       // TJSAMP_*, -1 when not JPEG
};

// Reads image headers and, on request, decodes images fully (JPEG with
// TurboJPEG, PNG with libpng as the loader does, other formats with OpenCV
// imgcodecs).
// Owns a TurboJPEG handle and a pixel buffer: use one per thread.
class ImageInspector {
 public:
  ImageInspector();
  ~ImageInspector();
  ImageInspector(const ImageInspector&) = delete;
  ImageInspector& operator=(const ImageInspector&) = delete;

  // JPEG (by its SOI marker): the size from the header, and an end-of-image
  // marker must follow the scans (bytes after it are left alone), else
  // "truncated JPEG". With `full_decode` the image is decoded too, and both decoder
  // errors and decoder warnings (corrupt data libjpeg would paper over) fail.
  // PNG (by its signature): the size from IHDR; the IEND chunk must end the
  // data and every chunk match its CRC; with `full_decode` the image must
  // decode (DecodePngToBgr, png_decode.h: filters, data and chunks). BMP, WebP, TIFF and PFM (by
  // their first bytes) are kOther, with the size their header gives; with
  // `full_decode` OpenCV decodes them to that size (NotSupported in a build
  // without imgcodecs). Anything else is not an image.
  // `where` names the image in messages.
  Status Inspect(std::string_view bytes, const std::string& where, bool full_decode, ImageFacts* out);

 private:
  Status InspectJpeg(std::string_view bytes, const std::string& where, bool full_decode, ImageFacts* out);

  void* handle_;  // tjhandle
  std::vector<unsigned char> pixels_;
};

// Ultralytics v7.0's IMG_FORMATS: the file suffixes (lower case, without the
// dot) that its loaders, the YOLO-txt source and yolo-detect take as images.
extern const std::vector<std::string> kImageFormats;

// PIL's decompression-bomb limit (Ultralytics opens images with PIL): a
// header that gives more pixels is an attack or damage. The packer refuses to
// store such an image and the loader to decode one.
inline constexpr uint64_t kMaxImagePixels = 178956970;

// Corruption naming `where` when a `kind` ("JPEG", "PNG") image of width x
// height is over kMaxImagePixels.
Status CheckPixelLimit(const char* kind, uint64_t width, uint64_t height, const std::string& where);

// OpenCV hands an image to the first of its decoders whose signature check
// takes it. GDCM's DICOM reader takes anything with "DICM" at byte 128 and
// aborts the process on a file that is not DICOM (an assert inside gdcm).
// JPEG, PNG, BMP and TIFF are always taken by their own decoder, by their
// first bytes alone; a WebP or PFM whose header OpenCV's own check rejects
// would go on to GDCM. Such bytes get a Corruption naming `where`, and every
// caller of cv::imdecode checks this first.
Status CheckOpenCvWouldNotReadAsDicom(std::string_view bytes, const std::string& where);

// Sets info->encoding and info's size (as stored) from `facts`; a kOther image
// needs the size from the source. A size the source already gave (COCO JSON)
// must be the image's in the frame its annotations were drawn in: as viewed
// with its EXIF orientation (info->exif_orientation, read before) when
// `annotations_viewed` (yolo-pack's default), as stored when not (--exif apply,
// --exif ignore). An image whose orientation swaps its sides and whose JSON
// size is the other frame's is refused, naming the orientation and the flags.
Status ApplyImageFacts(const ImageFacts& facts, const std::string& where, bool annotations_viewed, RecordInfo* info);

// A box edge may stick out of the image by this much of the image side (or
// one pixel, whichever is more) and is then clipped to it: COCO's sub-pixel
// overhangs and the rounding of 6-digit YOLO labels. Beyond that the box is
// wrong.
inline constexpr double kBoxClipTolerance = 0.01;

// Checks info->boxes against the image (info->width/height must be known):
// clips boxes within kBoxClipTolerance of the image (one warning per image),
// rejects boxes further out, boxes with a non-finite value or no width or
// height, and classes >= num_classes. Errors name `where`, the box and why.
Status CheckBoxes(RecordInfo* info, size_t num_classes, const std::string& where,
                  std::vector<std::string>* warnings);

// area = w * h in pixels, for sources without COCO areas (YOLO labels).
void SetAreaFromBoxes(RecordInfo* info);

}  // namespace ffyolo
