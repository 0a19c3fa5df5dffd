// Record: one sample of an ffyolo dataset, stored as one FFRecord sample.
// It holds the image's metadata and boxes followed by the original image bytes,
// untouched. The byte layout is documented field by field in docs/format.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ffr/shard_writer.h"
#include "ffr/status.h"

namespace ffyolo {

using ffr::Status;

// kBgr: raw BGR pixels (uint8, rows of 3-byte pixels, no padding) of the
// image resized as YOLOv5's load_image does for some --img; only pixel caches
// hold it (pixel_cache.h), and the record's width and height stay the
// original image's.
enum class ImageEncoding : uint8_t { kJpeg = 1, kPng = 2, kOther = 3, kBgr = 4 };

// "jpeg", "png", "other" or "bgr".
const char* ImageEncodingName(ImageEncoding encoding);

// One labelled object. Coordinates are normalized to the original image size
// so that they survive any resize; `area` is COCO's annotation area in pixels
// (the segmentation area), kept so that evaluation can be exactly COCO's.
struct Box {
  uint16_t class_index = 0;
  bool iscrowd = false;
  float cx = 0, cy = 0, w = 0, h = 0;
  float area = 0;

  bool operator==(const Box& o) const {
    return class_index == o.class_index && iscrowd == o.iscrowd && cx == o.cx && cy == o.cy &&
           w == o.w && h == o.h && area == o.area;
  }
};

// Everything a record says about its image except the image bytes.
struct RecordInfo {
  ImageEncoding encoding = ImageEncoding::kJpeg;
  uint32_t width = 0;
  uint32_t height = 0;
  int64_t image_id = 0;   // the COCO image id
  std::string file_name;  // as in the source, e.g. "000000000009.jpg"
  std::vector<Box> boxes;
  // The EXIF orientation the source image carries (exif.h's
  // ImageExifOrientation: 1 to 8; 1 for formats without one); 0: not
  // recorded, in records packed before ffyolo read it. Width and height are
  // of the image as stored; boxes are in the frame the split decodes it in
  // (as viewed where its manifest says exif_applied, else as stored).
  uint8_t exif_orientation = 1;
};

inline constexpr uint32_t kRecordMagic = 0x31525946;  // "FYR1" little-endian
inline constexpr uint16_t kRecordVersion = 1;
inline constexpr size_t kRecordHeaderSize = 40;
inline constexpr size_t kRecordBoxSize = 24;
// A sample may hold zero bytes after its record: a shard written with a sample
// alignment pads each sample but the last to it (ffr::ShardWriterOptions).
inline constexpr size_t kMaxRecordPadding = ffr::kMaxSampleAlignment;

// The 24-byte box encoding shared by records and the label index.
void PutBox(std::string* out, const Box& box);
Box DecodeBox(const uint8_t* p);

// Appends the encoded record (header, name, boxes, image bytes) to *out.
Status EncodeRecord(const RecordInfo& info, std::string_view image, std::string* out);

// A parsed record that points into the caller's bytes: no copies. The bytes
// must outlive the view.
class RecordView {
 public:
  // Validates the header and sizes. `size` may exceed the record by fewer
  // than kMaxRecordPadding zero bytes (alignment padding, not part of the
  // image). `where` names the sample in error messages, e.g.
  // "train2017 sample 17 (PART_00000.ffr)".
  static Status Parse(const uint8_t* data, size_t size, const std::string& where, RecordView* out);

  ImageEncoding encoding() const { return encoding_; }
  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }
  int64_t image_id() const { return image_id_; }
  uint8_t exif_orientation() const { return exif_orientation_; }  // 0: not recorded
  std::string_view file_name() const { return file_name_; }
  size_t box_count() const { return box_count_; }
  Box box(size_t i) const;
  std::vector<Box> boxes() const;
  const uint8_t* image_data() const { return image_data_; }
  size_t image_size() const { return image_size_; }

  // A full copy of the metadata (for tools; the loader uses the accessors).
  RecordInfo info() const;

 private:
  ImageEncoding encoding_ = ImageEncoding::kJpeg;
  uint32_t width_ = 0, height_ = 0;
  uint8_t exif_orientation_ = 0;
  int64_t image_id_ = 0;
  std::string_view file_name_;
  const uint8_t* boxes_ = nullptr;
  size_t box_count_ = 0;
  const uint8_t* image_data_ = nullptr;
  size_t image_size_ = 0;
};

}  // namespace ffyolo
