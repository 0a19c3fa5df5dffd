#include "ffyolo/label_index.h"

#include "ffr/format.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "ffr/endian.h"
#include "ffr/env.h"

namespace ffyolo {

using ffr::DecodeFixed16;
using ffr::DecodeFixed32;
using ffr::DecodeFixed64;
using ffr::PutFixed16;
using ffr::PutFixed32;
using ffr::PutFixed64;

namespace {

// Sequential little-endian reads with bounds checks.
class Cursor {
 public:
  Cursor(const std::string& data) : p_(reinterpret_cast<const uint8_t*>(data.data())), end_(p_ + data.size()) {}
  bool Has(size_t n) const { return static_cast<size_t>(end_ - p_) >= n; }
  const uint8_t* Take(size_t n) {
    const uint8_t* p = p_;
    p_ += n;
    return p;
  }
  bool done() const { return p_ == end_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Header flags.
constexpr uint16_t kHasEvalBoxes = 1;

constexpr size_t kEvalBoxSize = 2 + 1 + 5 * 8;

void PutDouble(std::string* out, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  PutFixed64(out, bits);
}

double DecodeDouble(const uint8_t* p) {
  const uint64_t bits = DecodeFixed64(p);
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

// Per sample before its file name: id, width, height, image bytes, box count, encoding, name length.
constexpr size_t kSampleFixedSize = 8 + 4 + 4 + 8 + 4 + 1 + 2;

// Compresses the serialised index a chunk at a time into `sink`, so that
// neither the uncompressed form (about half a KB per COCO image) nor the
// compressed one exists whole: packing memory must not grow with the image
// count more than it has to. The frame states its size (Decode relies on it)
// and carries its content checksum, so that damage is detected on read.
class StreamCompressor {
 public:
  StreamCompressor(size_t raw_size, const LabelIndex::Sink& sink) : cctx_(ZSTD_createCCtx()), sink_(sink) {
    // zstd's default: level 9 took 0.8 s for 30,000 COCO-sized images (20 MB/s) at
    // the end of a pack, for a file 9% smaller.
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setPledgedSrcSize(cctx_, raw_size);
    buffer_.reserve(kChunk + 1024);
    out_.resize(ZSTD_CStreamOutSize());
  }
  ~StreamCompressor() { ZSTD_freeCCtx(cctx_); }
  StreamCompressor(const StreamCompressor&) = delete;
  StreamCompressor& operator=(const StreamCompressor&) = delete;

  // Where the caller appends serialised bytes.
  std::string* buffer() { return &buffer_; }
  // Compresses the buffer once it holds a chunk, or always at the end. A raw
  // size that disagrees with the bytes given fails in zstd.
  Status Flush(bool end) {
    if (!end && buffer_.size() < kChunk) return Status::OK();
    ZSTD_inBuffer in{buffer_.data(), buffer_.size(), 0};
    const ZSTD_EndDirective mode = end ? ZSTD_e_end : ZSTD_e_continue;
    size_t left = 0;
    do {
      ZSTD_outBuffer out{out_.data(), out_.size(), 0};
      left = ZSTD_compressStream2(cctx_, &out, &in, mode);
      if (ZSTD_isError(left)) return Status::Corruption(std::string("zstd: ") + ZSTD_getErrorName(left));
      FFR_RETURN_IF_ERROR(sink_(std::string_view(out_.data(), out.pos)));
    } while (end ? left != 0 : in.pos < in.size);
    buffer_.clear();
    return Status::OK();
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 20;
  ZSTD_CCtx* cctx_;
  const LabelIndex::Sink& sink_;
  std::string buffer_, out_;
};

}  // namespace

void LabelIndex::Reserve(size_t samples, size_t boxes) {
  image_ids_.reserve(samples);
  widths_.reserve(samples);
  heights_.reserve(samples);
  encodings_.reserve(samples);
  image_bytes_.reserve(samples);
  file_names_.reserve(samples);
  box_begin_.reserve(samples + 1);
  boxes_.reserve(boxes);
}

void LabelIndex::Add(const RecordInfo& info, uint64_t image_bytes) {
  image_ids_.push_back(info.image_id);
  widths_.push_back(info.width);
  heights_.push_back(info.height);
  encodings_.push_back(info.encoding);
  image_bytes_.push_back(image_bytes);
  file_names_.push_back(info.file_name);
  boxes_.insert(boxes_.end(), info.boxes.begin(), info.boxes.end());
  box_begin_.push_back(boxes_.size());
}

Status LabelIndex::SetEvalBoxes(std::vector<uint64_t> begin, std::vector<EvalBox> boxes) {
  if (begin.size() != size() + 1 || begin.front() != 0 || begin.back() != boxes.size() ||
      !std::is_sorted(begin.begin(), begin.end()))
    return Status::InvalidArgument("EvalBoxes of " + std::to_string(begin.size()) + " offsets for " +
                                   std::to_string(size()) + " samples and " + std::to_string(boxes.size()) +
                                   " boxes: not one rising offset per sample and one past the last");
  eval_begin_ = std::move(begin);
  eval_boxes_ = std::move(boxes);
  return Status::OK();
}

void LabelIndex::Append(const LabelIndex& other) {
  const bool eval = (size() == 0 || has_eval_boxes()) && other.has_eval_boxes();
  const auto append = [](auto* to, const auto& from) { to->insert(to->end(), from.begin(), from.end()); };
  append(&image_ids_, other.image_ids_);
  append(&widths_, other.widths_);
  append(&heights_, other.heights_);
  append(&encodings_, other.encodings_);
  append(&image_bytes_, other.image_bytes_);
  append(&file_names_, other.file_names_);
  const uint64_t boxes_before = boxes_.size();
  for (size_t i = 1; i < other.box_begin_.size(); ++i) box_begin_.push_back(boxes_before + other.box_begin_[i]);
  append(&boxes_, other.boxes_);
  if (!eval) {
    eval_begin_.clear();
    eval_boxes_.clear();
    return;
  }
  if (eval_begin_.empty()) eval_begin_.push_back(0);
  const uint64_t eval_before = eval_boxes_.size();
  for (size_t i = 1; i < other.eval_begin_.size(); ++i) eval_begin_.push_back(eval_before + other.eval_begin_[i]);
  append(&eval_boxes_, other.eval_boxes_);
}

void LabelIndex::NumberImagesInOrder() {
  for (size_t i = 0; i < image_ids_.size(); ++i) image_ids_[i] = static_cast<int64_t>(i) + 1;
}

RecordInfo LabelIndex::info(size_t i) const {
  RecordInfo r;
  r.encoding = encodings_[i];
  r.width = widths_[i];
  r.height = heights_[i];
  r.image_id = image_ids_[i];
  r.file_name = file_names_[i];
  r.boxes.assign(boxes(i), boxes(i) + box_count(i));
  return r;
}

Status LabelIndex::EncodeTo(const Sink& sink) const {
  size_t raw_size = 24 + size() * kSampleFixedSize + boxes_.size() * kRecordBoxSize;
  for (const std::string& name : file_names_) raw_size += name.size();
  if (has_eval_boxes()) raw_size += 8 + size() * 4 + eval_boxes_.size() * kEvalBoxSize;
  StreamCompressor zstd(raw_size, sink);
  std::string* raw = zstd.buffer();
  PutFixed32(raw, kMagic);
  PutFixed16(raw, kVersion);
  PutFixed16(raw, has_eval_boxes() ? kHasEvalBoxes : 0);
  PutFixed64(raw, size());
  PutFixed64(raw, boxes_.size());
  for (size_t i = 0; i < size(); ++i) {
    PutFixed64(raw, static_cast<uint64_t>(image_ids_[i]));
    PutFixed32(raw, widths_[i]);
    PutFixed32(raw, heights_[i]);
    PutFixed64(raw, image_bytes_[i]);
    PutFixed32(raw, static_cast<uint32_t>(box_count(i)));
    raw->push_back(static_cast<char>(encodings_[i]));
    PutFixed16(raw, static_cast<uint16_t>(file_names_[i].size()));
    raw->append(file_names_[i]);
    FFR_RETURN_IF_ERROR(zstd.Flush(false));
  }
  for (const Box& b : boxes_) {
    PutBox(raw, b);
    FFR_RETURN_IF_ERROR(zstd.Flush(false));
  }
  if (has_eval_boxes()) {
    PutFixed64(raw, eval_boxes_.size());
    for (size_t i = 0; i < size(); ++i) PutFixed32(raw, static_cast<uint32_t>(eval_box_count(i)));
    for (const EvalBox& b : eval_boxes_) {
      PutFixed16(raw, b.class_index);
      raw->push_back(static_cast<char>(b.iscrowd));
      for (const double v : {b.x, b.y, b.w, b.h, b.area}) PutDouble(raw, v);
      FFR_RETURN_IF_ERROR(zstd.Flush(false));
    }
  }
  return zstd.Flush(true);
}

std::string LabelIndex::Encode() const {
  std::string out;
  // Empty when zstd failed, which Decode refuses.
  if (!EncodeTo([&](std::string_view chunk) { return out.append(chunk), Status::OK(); }).ok()) out.clear();
  return out;
}

Status LabelIndex::Decode(const std::string& data, const std::string& where, LabelIndex* out) {
  const unsigned long long raw_size = ZSTD_getFrameContentSize(data.data(), data.size());
  if (raw_size == ZSTD_CONTENTSIZE_ERROR || raw_size == ZSTD_CONTENTSIZE_UNKNOWN)
    return Status::Corruption(where + ": not a zstd-compressed label index");
  // zstd cannot expand by more than ~32768x per block; a larger claim is a damaged header.
  if (raw_size > 32768ull * (data.size() + 1024))
    return Status::Corruption(where + ": label index header claims " + std::to_string(raw_size) +
                              " bytes, impossible for its compressed size");
  std::string raw(raw_size, '\0');
  const size_t n = ZSTD_decompress(raw.data(), raw.size(), data.data(), data.size());
  if (ZSTD_isError(n) || n != raw_size)
    return Status::Corruption(where + ": label index does not decompress (" +
                              std::string(ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch") + ")");
  Cursor c(raw);
  auto truncated = [&] { return Status::Corruption(where + ": label index is truncated"); };
  if (!c.Has(24)) return truncated();
  const uint8_t* h = c.Take(24);
  if (DecodeFixed32(h) != kMagic) return Status::Corruption(where + ": not a label index (bad magic)");
  const uint16_t version = DecodeFixed16(h + 4), flags = DecodeFixed16(h + 6);
  if (version < 1 || version > kVersion)
    return Status::NotSupported(where + ": label index version " + std::to_string(version) + " (this build reads 1 to " +
                                std::to_string(kVersion) + ")");
  if (flags & ~kHasEvalBoxes || (version == 1 && flags != 0))
    return Status::Corruption(where + ": unknown label index flags " + std::to_string(flags));
  const uint64_t count = DecodeFixed64(h + 8);
  const uint64_t total_boxes = DecodeFixed64(h + 16);
  LabelIndex idx;
  uint64_t boxes_seen = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (!c.Has(31)) return truncated();
    const uint8_t* p = c.Take(31);
    idx.image_ids_.push_back(static_cast<int64_t>(DecodeFixed64(p)));
    idx.widths_.push_back(DecodeFixed32(p + 8));
    idx.heights_.push_back(DecodeFixed32(p + 12));
    idx.image_bytes_.push_back(DecodeFixed64(p + 16));
    const uint32_t nboxes = DecodeFixed32(p + 24);
    const uint8_t encoding = p[28];
    if (encoding < 1 || encoding > 3)
      return Status::Corruption(where + ": sample " + std::to_string(i) + " has unknown encoding");
    idx.encodings_.push_back(static_cast<ImageEncoding>(encoding));
    const uint16_t name_size = DecodeFixed16(p + 29);
    if (!c.Has(name_size)) return truncated();
    idx.file_names_.emplace_back(reinterpret_cast<const char*>(c.Take(name_size)), name_size);
    boxes_seen += nboxes;
    idx.box_begin_.push_back(boxes_seen);
  }
  if (boxes_seen != total_boxes)
    return Status::Corruption(where + ": box counts add up to " + std::to_string(boxes_seen) + ", header says " +
                              std::to_string(total_boxes));
  if (total_boxes > raw.size() / kRecordBoxSize || !c.Has(total_boxes * kRecordBoxSize)) return truncated();
  idx.boxes_.resize(total_boxes);
  for (Box& b : idx.boxes_) b = DecodeBox(c.Take(kRecordBoxSize));
  if (flags & kHasEvalBoxes) {
    if (!c.Has(8 + 4 * count)) return truncated();
    const uint64_t total_eval = DecodeFixed64(c.Take(8));
    idx.eval_begin_.push_back(0);
    for (uint64_t i = 0; i < count; ++i) idx.eval_begin_.push_back(idx.eval_begin_.back() + DecodeFixed32(c.Take(4)));
    if (idx.eval_begin_.back() != total_eval)
      return Status::Corruption(where + ": COCO annotation counts add up to " + std::to_string(idx.eval_begin_.back()) +
                                ", header says " + std::to_string(total_eval));
    if (total_eval > raw.size() / kEvalBoxSize || !c.Has(total_eval * kEvalBoxSize)) return truncated();
    idx.eval_boxes_.resize(total_eval);
    for (EvalBox& b : idx.eval_boxes_) {
      const uint8_t* p = c.Take(kEvalBoxSize);
      b.class_index = DecodeFixed16(p);
      if (p[2] > 1) return Status::Corruption(where + ": a COCO annotation's iscrowd is " + std::to_string(p[2]));
      b.iscrowd = p[2] == 1;
      b.x = DecodeDouble(p + 3), b.y = DecodeDouble(p + 11), b.w = DecodeDouble(p + 19), b.h = DecodeDouble(p + 27);
      b.area = DecodeDouble(p + 35);
    }
  }
  if (!c.done()) return Status::Corruption(where + ": trailing bytes after the label index");
  *out = std::move(idx);
  return Status::OK();
}

Status LabelIndex::WriteFile(const std::string& path, ffr::Env* env, uint32_t* crc) const {
  uint32_t written = 0;
  FFR_RETURN_IF_ERROR(ffr::WriteFileAtomically(env, path, [this, &written](ffr::WritableFile* file) {
    return EncodeTo([file, &written](std::string_view chunk) {
      written = ffr::Crc32Extend(written, chunk.data(), chunk.size());
      return file->Append(chunk.data(), chunk.size());
    });
  }));
  if (crc != nullptr) *crc = written;
  return Status::OK();
}

Status LabelIndex::ReadFile(const std::string& path, LabelIndex* out, uint32_t* crc) {
  std::string data;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), path, &data));
  if (crc != nullptr) *crc = ffr::Crc32(data.data(), data.size());
  return Decode(data, path, out);
}

}  // namespace ffyolo
