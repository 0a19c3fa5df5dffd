#include "ffyolo/record.h"

#include <cstring>

#include "ffr/endian.h"

namespace ffyolo {

using ffr::DecodeFixed16;
using ffr::DecodeFixed32;
using ffr::DecodeFixed64;
using ffr::PutFixed16;
using ffr::PutFixed32;
using ffr::PutFixed64;

namespace {

void PutFloat(std::string* out, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  PutFixed32(out, bits);
}

float DecodeFloat(const uint8_t* p) {
  uint32_t bits = DecodeFixed32(p);
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

}  // namespace

void PutBox(std::string* out, const Box& b) {
  PutFixed16(out, b.class_index);
  out->push_back(b.iscrowd ? 1 : 0);
  out->push_back(0);
  for (float v : {b.cx, b.cy, b.w, b.h, b.area}) PutFloat(out, v);
}

Box DecodeBox(const uint8_t* p) {
  Box b;
  b.class_index = DecodeFixed16(p);
  b.iscrowd = p[2] != 0;
  b.cx = DecodeFloat(p + 4);
  b.cy = DecodeFloat(p + 8);
  b.w = DecodeFloat(p + 12);
  b.h = DecodeFloat(p + 16);
  b.area = DecodeFloat(p + 20);
  return b;
}

const char* ImageEncodingName(ImageEncoding encoding) {
  switch (encoding) {
    case ImageEncoding::kJpeg: return "jpeg";
    case ImageEncoding::kPng: return "png";
    case ImageEncoding::kOther: return "other";
    case ImageEncoding::kBgr: return "bgr";
  }
  return "unknown";
}

Status EncodeRecord(const RecordInfo& info, std::string_view image, std::string* out) {
  if (info.file_name.size() > UINT16_MAX)
    return Status::InvalidArgument("file name longer than 65535 bytes: " + info.file_name.substr(0, 64));
  if (info.boxes.size() > UINT32_MAX)
    return Status::InvalidArgument(info.file_name + ": too many boxes");
  if (info.exif_orientation > 8)
    return Status::InvalidArgument(info.file_name + ": EXIF orientation " + std::to_string(info.exif_orientation) +
                                   " (1 to 8)");
  out->reserve(out->size() + kRecordHeaderSize + info.file_name.size() +
               kRecordBoxSize * info.boxes.size() + image.size());
  PutFixed32(out, kRecordMagic);
  PutFixed16(out, kRecordVersion);
  out->push_back(static_cast<char>(info.encoding));
  out->push_back(static_cast<char>(info.exif_orientation));
  PutFixed32(out, info.width);
  PutFixed32(out, info.height);
  PutFixed64(out, static_cast<uint64_t>(info.image_id));
  PutFixed32(out, static_cast<uint32_t>(info.boxes.size()));
  PutFixed16(out, static_cast<uint16_t>(info.file_name.size()));
  PutFixed16(out, 0);
  PutFixed64(out, image.size());
  out->append(info.file_name);
  for (const Box& b : info.boxes) PutBox(out, b);
  out->append(image.data(), image.size());
  return Status::OK();
}

Status RecordView::Parse(const uint8_t* data, size_t size, const std::string& where, RecordView* out) {
  if (size < kRecordHeaderSize)
    return Status::Corruption(where + ": record of " + std::to_string(size) +
                              " bytes is shorter than its 40-byte header");
  const uint32_t magic = DecodeFixed32(data);
  if (magic != kRecordMagic)
    return Status::Corruption(where + ": not an ffyolo record (bad magic)");
  const uint16_t version = DecodeFixed16(data + 4);
  if (version != kRecordVersion)
    return Status::NotSupported(where + ": record version " + std::to_string(version) +
                                " (this build reads version " + std::to_string(kRecordVersion) + ")");
  const uint8_t encoding = data[6];
  if (encoding < 1 || encoding > 4)
    return Status::Corruption(where + ": unknown image encoding " + std::to_string(encoding));
  if (data[7] > 8)
    return Status::Corruption(where + ": EXIF orientation " + std::to_string(data[7]) + " (0 to 8)");
  RecordView v;
  v.encoding_ = static_cast<ImageEncoding>(encoding);
  v.exif_orientation_ = data[7];
  v.width_ = DecodeFixed32(data + 8);
  v.height_ = DecodeFixed32(data + 12);
  v.image_id_ = static_cast<int64_t>(DecodeFixed64(data + 16));
  v.box_count_ = DecodeFixed32(data + 24);
  const size_t name_size = DecodeFixed16(data + 28);
  v.image_size_ = DecodeFixed64(data + 32);
  // Checked piece by piece so that a crafted size cannot wrap around.
  const uint64_t metadata = name_size + uint64_t{kRecordBoxSize} * v.box_count_;
  if (metadata > size - kRecordHeaderSize || v.image_size_ > size - kRecordHeaderSize - metadata)
    return Status::Corruption(where + ": record is " + std::to_string(size) + " bytes but its header says " +
                              std::to_string(v.box_count_) + " boxes, a " + std::to_string(name_size) +
                              "-byte name and " + std::to_string(v.image_size_) + " image bytes");
  // Whatever follows the image can only be a shard's alignment padding: zeros.
  const uint64_t padding = size - kRecordHeaderSize - metadata - v.image_size_;
  if (padding >= kMaxRecordPadding)
    return Status::Corruption(where + ": " + std::to_string(padding) + " bytes left over after the record's " +
                              std::to_string(v.image_size_) + "-byte image, more than alignment padding (under " +
                              std::to_string(kMaxRecordPadding) + ")");
  const uint8_t* tail = data + (size - padding);
  if (padding > 0 && (tail[0] != 0 || std::memcmp(tail, tail + 1, padding - 1) != 0))
    return Status::Corruption(where + ": the " + std::to_string(padding) +
                              " bytes after the record's image are not all zero (alignment padding is zeros)");
  const uint8_t* p = data + kRecordHeaderSize;
  v.file_name_ = std::string_view(reinterpret_cast<const char*>(p), name_size);
  p += name_size;
  v.boxes_ = p;
  p += kRecordBoxSize * v.box_count_;
  v.image_data_ = p;
  *out = v;
  return Status::OK();
}

Box RecordView::box(size_t i) const { return DecodeBox(boxes_ + kRecordBoxSize * i); }

std::vector<Box> RecordView::boxes() const {
  std::vector<Box> out(box_count_);
  for (size_t i = 0; i < box_count_; ++i) out[i] = box(i);
  return out;
}

RecordInfo RecordView::info() const {
  RecordInfo info;
  info.encoding = encoding_;
  info.width = width_;
  info.height = height_;
  info.image_id = image_id_;
  info.exif_orientation = exif_orientation_;
  info.file_name = std::string(file_name_);
  info.boxes = boxes();
  return info;
}

}  // namespace ffyolo
