// LabelIndex: everything the records of one split say except the image bytes
// (ids, names, sizes, boxes), in one zstd-compressed file beside the shards.
// Statistics, rectangular batching, anchor checks and evaluation read it
// instead of the images. Layout in docs/format.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ffr/env.h"
#include "ffyolo/record.h"

namespace ffyolo {

// An annotation as a COCO instances JSON gives it: bbox and area in double,
// boxes without width or height (not trained on) included. pycocotools scores
// against exactly these, so evaluation from a packed dataset uses them where
// the source had a JSON; the training boxes (Box) are derived from them.
struct EvalBox {
  uint16_t class_index = 0;
  bool iscrowd = false;
  double x = 0, y = 0, w = 0, h = 0;  // bbox in pixels
  double area = 0;

  bool operator==(const EvalBox& o) const {
    return class_index == o.class_index && iscrowd == o.iscrowd && x == o.x && y == o.y && w == o.w && h == o.h &&
           area == o.area;
  }
};

class LabelIndex {
 public:
  static constexpr uint32_t kMagic = 0x494c5946;  // "FYLI" little-endian
  static constexpr uint16_t kVersion = 2;         // 1: no EvalBoxes; still read

  // Room for this many samples and boxes, so that adding them does not leave
  // the spare capacity of doubling vectors (packing memory, see pack.h).
  void Reserve(size_t samples, size_t boxes);
  // Appends the metadata of the next sample, whose record holds `image_bytes` bytes of image.
  void Add(const RecordInfo& info, uint64_t image_bytes);
  // Appends every sample of `other` (the next split of a set of splits). EvalBoxes are kept when
  // both have them, else dropped: evaluation then derives its boxes for all samples alike.
  void Append(const LabelIndex& other);
  // Gives the samples the image ids 1..size() in order: what a YOLO split without numeric file
  // names gets, for a set of splits whose ids collide.
  void NumberImagesInOrder();
  // Every sample's EvalBoxes (sources with a COCO JSON; others have none):
  // sample i's are boxes[begin[i], begin[i + 1]). Refused unless begin has
  // size() + 1 offsets, rising from 0 to boxes.size().
  Status SetEvalBoxes(std::vector<uint64_t> begin, std::vector<EvalBox> boxes);

  size_t size() const { return image_ids_.size(); }
  int64_t image_id(size_t i) const { return image_ids_[i]; }
  uint32_t width(size_t i) const { return widths_[i]; }
  uint32_t height(size_t i) const { return heights_[i]; }
  ImageEncoding encoding(size_t i) const { return encodings_[i]; }
  uint64_t image_bytes(size_t i) const { return image_bytes_[i]; }
  const std::string& file_name(size_t i) const { return file_names_[i]; }
  size_t box_count(size_t i) const { return box_begin_[i + 1] - box_begin_[i]; }
  const Box* boxes(size_t i) const { return boxes_.data() + box_begin_[i]; }
  size_t total_boxes() const { return boxes_.size(); }
  // Whether every sample has its EvalBoxes (see SetEvalBoxes).
  bool has_eval_boxes() const { return eval_begin_.size() == size() + 1; }
  size_t eval_box_count(size_t i) const { return eval_begin_[i + 1] - eval_begin_[i]; }
  const EvalBox* eval_boxes(size_t i) const { return eval_boxes_.data() + eval_begin_[i]; }
  // The sample's metadata as a RecordInfo.
  RecordInfo info(size_t i) const;

  // Serialized and zstd-compressed.
  std::string Encode() const;
  // Encode()'s bytes a piece at a time, in order, into `sink`; stops at the first piece it fails.
  using Sink = std::function<Status(std::string_view piece)>;
  Status EncodeTo(const Sink& sink) const;
  // `where` names the file in error messages.
  static Status Decode(const std::string& data, const std::string& where, LabelIndex* out);

  // Atomically (see ffr::WriteFileAtomically), as it is encoded. *crc (when given) gets the CRC-32
  // of the file's bytes, which a manifest records (SplitInfo::label_index_crc).
  Status WriteFile(const std::string& path, ffr::Env* env = ffr::Env::Default(), uint32_t* crc = nullptr) const;
  static Status ReadFile(const std::string& path, LabelIndex* out, uint32_t* crc = nullptr);

 private:
  std::vector<int64_t> image_ids_;
  std::vector<uint32_t> widths_, heights_;
  std::vector<ImageEncoding> encodings_;
  std::vector<uint64_t> image_bytes_;
  std::vector<std::string> file_names_;
  std::vector<uint64_t> box_begin_{0};
  std::vector<Box> boxes_;
  std::vector<uint64_t> eval_begin_;  // empty, or offsets into eval_boxes_ per sample and one past the last
  std::vector<EvalBox> eval_boxes_;
};

}  // namespace ffyolo
