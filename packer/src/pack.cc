#include "ffyolo/pack.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "ffr/env.h"
#include "ffr/reader.h"
#include "ffr/shard_writer.h"
#include "ffyolo/cpus.h"
#include "ffyolo/exif.h"
#include "ffyolo/image_check.h"
#include "ffyolo/label_index.h"
#include "ffyolo/output/disk_space.h"
#include "ffyolo/output/own_folder.h"
#include "ffyolo/output/path_overlap.h"
#include "ffyolo/output/report_clock.h"
#include "ffyolo/output/shard_set_writer.h"
#include "ffyolo/record.h"
#include "jpeg_shrinker.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kStateFile[] = ".pack-state";

std::string NowIso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

uint64_t FileSizeOrZero(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// The size of every source image file (0 when missing), by split: taken once,
// as a stat of each image is noticeable at COCO's 118,287.
using ImageSizes = std::vector<std::vector<uint64_t>>;

ImageSizes SourceImageSizes(const SourceDataset& source) {
  ImageSizes sizes;
  for (const SourceSplit& split : source.splits) {
    sizes.emplace_back();
    for (size_t i = 0; i < split.images.size(); ++i) sizes.back().push_back(FileSizeOrZero(split.images.path(i)));
  }
  return sizes;
}

// The least the shards take: every image stored as it is. Zero (unknown) when
// --max-size re-encodes some of them.
uint64_t LeastShardBytes(const PackOptions& opt, const ImageSizes& sizes) {
  if (opt.max_size > 0) return 0;
  uint64_t bytes = 0;
  for (const std::vector<uint64_t>& split : sizes)
    for (uint64_t b : split) bytes += b;
  return bytes;
}

// The images of each split cut into shards: plans[s][k] is the first image of shard k of split s.
using ShardPlans = std::vector<std::vector<size_t>>;

// What the shards of a pack take, for the free-space check up front and for a
// write that found the disk full: at least its images as they are (`least`:
// zero, unknown, with --max-size), less the finished shards a resumed pack keeps.
SpaceNeeded PackSpace(const PackOptions& opt, uint64_t least, const SourceDataset& source, const ShardPlans& plans,
                      const ShardSetWriter& writer) {
  SpaceNeeded needs;
  needs.output = opt.output;
  needs.writer = "the pack";
  needs.amount = "at least";
  needs.what = " for its shards";
  needs.why = " (the source's images as they are)";
  needs.move = "pack to another disk";
  needs.total = least;
  for (size_t s = 0; s < plans.size(); ++s) needs.kept += writer.ShardBytes(source.splits[s].name, plans[s].size() - 1);
  return needs;
}

// FNV-1a over everything that decides the output, so that a resumed pack
// continues only the very same work.
class Fingerprint {
 public:
  void Add(const std::string& s) {
    for (unsigned char c : s) Mix(c);
    Mix(0xff);
  }
  void Add(uint64_t v) { Add(std::to_string(v)); }
  // A float or an integer by its bytes.
  template <typename T>
  void AddValue(T v) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    for (unsigned char c : bytes) Mix(c);
  }
  std::string Hex() const {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h_));
    return buf;
  }

 private:
  void Mix(unsigned char c) { h_ = (h_ ^ c) * 0x100000001b3ull; }
  uint64_t h_ = 0xcbf29ce484222325ull;
};

// One image after reading and checking: its encoded record, or why it failed.
struct Prepared {
  Status status;
  RecordInfo info;
  std::string record;
  uint64_t image_bytes = 0;
  std::vector<std::string> warnings;
};

// How far the workers may read ahead of the writer, in source image bytes (or
// one image, however large) and in images: enough to keep both busy, and what
// bounds the records in memory whatever the shard size and the image count.
constexpr uint64_t kAheadBytes = uint64_t{64} << 20;
constexpr size_t kAheadImages = 512;

// Images prepared by workers in any order, taken by the writer in the order
// given: a worker claims the next image once those prepared and not yet taken
// leave room for it.
class Lookahead {
 public:
  // `sizes[j]`: the source bytes of the j-th image to prepare.
  explicit Lookahead(std::vector<uint64_t> sizes) : sizes_(std::move(sizes)) {}

  // The next image for a worker; false once all are claimed or Stop was called.
  bool Claim(size_t* j) {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [&] {
      return stop_ || claimed_ == sizes_.size() || slots_.empty() ||
             (ahead_bytes_ + sizes_[claimed_] <= kAheadBytes && slots_.size() < kAheadImages);
    });
    if (stop_ || claimed_ == sizes_.size()) return false;
    ahead_bytes_ += sizes_[claimed_];
    slots_.emplace_back();
    *j = claimed_++;
    return true;
  }

  void Put(size_t j, Prepared prepared) {
    std::lock_guard<std::mutex> lock(mu_);
    slots_[j - taken_] = std::move(prepared);
    if (j == taken_) ready_.notify_one();
  }

  // The next image in order, once its worker put it. Only while workers run.
  Prepared Take() {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [&] { return !slots_.empty() && slots_.front().has_value(); });
    Prepared prepared = std::move(*slots_.front());
    slots_.pop_front();
    ahead_bytes_ -= sizes_[taken_++];
    room_.notify_all();
    return prepared;
  }

  // Workers claim nothing more.
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    room_.notify_all();
  }

 private:
  const std::vector<uint64_t> sizes_;
  std::mutex mu_;
  std::condition_variable room_, ready_;
  std::deque<std::optional<Prepared>> slots_;  // images taken_ .. claimed_ - 1
  size_t claimed_ = 0, taken_ = 0;             // guarded by mu_
  uint64_t ahead_bytes_ = 0;                   // of the images in slots_
  bool stop_ = false;
};

// Finishes each shard (its tail, header, fsync and rename) in the background
// while the next one is written: the fsync waits for the device to take the
// whole shard, and a writer waiting with it leaves the disk idle once the
// workers' lookahead is full. One shard finishes at a time, so that shards
// appear in order and at most two are open.
class ShardFinisher {
 public:
  ~ShardFinisher() { Wait(); }

  // Once the shard before is finished (its status, if it failed), starts
  // finishing `writer`; `done` gets the writer and what Finish returned, and
  // returns the shard's status.
  Status Start(std::unique_ptr<ffr::ShardWriter> writer, std::function<Status(const ffr::ShardWriter&, Status)> done) {
    FFR_RETURN_IF_ERROR(Wait());
    pending_ = std::async(std::launch::async, [w = std::move(writer), done = std::move(done)] {
      return done(*w, w->Finish());
    });
    return Status::OK();
  }

  // The last shard started: how its finish went.
  Status Wait() { return pending_.valid() ? pending_.get() : Status::OK(); }

 private:
  std::future<Status> pending_;
};

class SplitPacker {
 public:
  // The split's EvalBoxes are handed over to its label index (see MoveEvalBoxesToIndex).
  // `starts`: the split's shard plan, `writer`: the pack's.
  SplitPacker(const PackOptions& opt, const SourceDataset& source, SourceSplit* split,
              const std::vector<uint64_t>& sizes, const std::vector<size_t>& starts, ShardSetWriter* writer,
              PackSummary* summary)
      : opt_(opt), source_(source), split_(*split), sizes_(sizes), starts_(starts), writer_(*writer),
        summary_(summary), dir_(opt.output + "/" + split->name) {}

  Status Run(SplitInfo* info);

 private:
  void PrepareOne(const SourceImage& image, ImageInspector* inspector, JpegShrinker* shrinker, Prepared* out) const;
  void Prepare(const std::vector<size_t>& images, Lookahead* ahead);
  Status WriteShard(const std::string& path, size_t begin, size_t end, Lookahead* ahead, ShardFinisher* finisher,
                    ShardInfo* written);
  Status NoteShardNeed(Status s, size_t begin, size_t end) const;
  Status ResumeShard(const std::string& path, size_t begin, size_t end, ShardInfo* info);
  void AddToIndex(size_t image, const RecordInfo& info, uint64_t image_bytes);
  Status MoveEvalBoxesToIndex();
  void Message(const std::string& m) const {
    if (opt_.on_message) opt_.on_message(m);
  }
  void Report(bool force);

  const PackOptions& opt_;
  const SourceDataset& source_;
  SourceSplit& split_;
  const std::vector<uint64_t>& sizes_;  // of split_.images' files
  const std::vector<size_t>& starts_;   // shard k holds images [starts_[k], starts_[k + 1])
  ShardSetWriter& writer_;
  PackSummary* summary_;
  std::string dir_;
  LabelIndex index_;
  std::vector<size_t> packed_from_;  // the source image of each sample of index_
  std::vector<uint8_t> orientations_;  // and its EXIF orientation
  int64_t exif_oriented_ = 0;        // of index_'s samples
  SplitInfo info_;
  std::atomic<int64_t> done_{0};
  std::atomic<uint64_t> bytes_{0};
  ReportClock report_clock_;
};

void SplitPacker::Report(bool force) {
  if (opt_.on_progress && report_clock_.Due(force))
    opt_.on_progress({split_.name, done_.load(), static_cast<int64_t>(split_.images.size()), bytes_.load()});
}

void SplitPacker::PrepareOne(const SourceImage& image, ImageInspector* inspector, JpegShrinker* shrinker,
                             Prepared* out) const {
  const std::string& where = image.path;
  if (!image.problem.ok()) {
    out->status = image.problem;
    return;
  }
  std::string bytes;
  Status s = ffr::ReadFileToString(ffr::Env::Default(), image.path, &bytes);
  if (s.IsNotFound()) s = Status::NotFound(where + ": image file is missing");
  if (!s.ok()) {
    out->status = s;
    return;
  }
  out->info = image.info;
  ImageFacts facts;
  s = inspector->Inspect(bytes, where, opt_.full_decode, &facts);
  // A JPEG's, PNG's or TIFF's, as cv::imread applies it (other formats: 1), read before --max-size re-encodes.
  if (s.ok())
    out->info.exif_orientation =
        static_cast<uint8_t>(ImageExifOrientation(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  if (s.ok()) s = ApplyImageFacts(facts, where, opt_.exif == ExifPolicy::kAuto, &out->info);
  // --exif apply: the labels were drawn on the stored pixels; they turn with them.
  if (s.ok() && opt_.exif == ExifPolicy::kApply)
    for (Box& b : out->info.boxes) {
      double cx = b.cx, cy = b.cy, w = b.w, h = b.h;
      TurnBoxToViewed(out->info.exif_orientation, 1, 1, &cx, &cy, &w, &h);
      b.cx = static_cast<float>(cx), b.cy = static_cast<float>(cy), b.w = static_cast<float>(w), b.h = static_cast<float>(h);
    }
  if (s.ok() && shrinker != nullptr && facts.encoding == ImageEncoding::kJpeg) {
    std::string smaller;
    int w = 0, h = 0;
    bool shrunk = false;
    s = shrinker->Shrink(bytes, facts, where, &smaller, &w, &h, &shrunk);
    if (s.ok() && shrunk) {
      // Boxes are normalized and stay valid; COCO areas scale with the pixels.
      const double scale = static_cast<double>(w) * h / (static_cast<double>(out->info.width) * out->info.height);
      for (Box& b : out->info.boxes) b.area = static_cast<float>(b.area * scale);
      out->info.width = static_cast<uint32_t>(w);
      out->info.height = static_cast<uint32_t>(h);
      // The re-encode has no EXIF: the orientation goes back in, so that the stored file still says it.
      if (out->info.exif_orientation > 1) smaller = JpegWithExifOrientation(smaller, out->info.exif_orientation);
      bytes.swap(smaller);
    }
  }
  if (s.ok()) s = CheckBoxes(&out->info, source_.class_names.size(), where, &out->warnings);
  if (s.ok() && image.area_from_box) SetAreaFromBoxes(&out->info);
  if (s.ok()) s = EncodeRecord(out->info, bytes, &out->record);
  out->image_bytes = bytes.size();
  out->status = s;
}

// A worker: prepares the images it claims, in any order.
void SplitPacker::Prepare(const std::vector<size_t>& images, Lookahead* ahead) {
  ImageInspector inspector;
  std::unique_ptr<JpegShrinker> shrinker;
  if (opt_.max_size > 0) shrinker.reset(new JpegShrinker(opt_.max_size, opt_.quality));
  for (size_t j; ahead->Claim(&j);) {
    Prepared p;
    PrepareOne(split_.images[images[j]], &inspector, shrinker.get(), &p);
    bytes_ += p.image_bytes;
    ++done_;
    ahead->Put(j, std::move(p));
  }
}

// What an out-of-space failure in the shard of images [begin, end) says: what
// this shard needed (the whole pack's need comes later).
Status SplitPacker::NoteShardNeed(Status s, size_t begin, size_t end) const {
  if (!IsOutOfSpace(s)) return s;
  uint64_t bytes = 0;
  for (size_t i = begin; i < end; ++i) bytes += sizes_[i];
  return Status::IOError(s.message() + " (the shard's " + std::to_string(end - begin) + " images take " +
                         ByteSize(bytes) + " in the source)");
}

// The shard at `path`: images [begin, end) taken from `ahead` in source order,
// so that warnings and fail-fast name the first bad image; `finisher` finishes
// it while the next one is written, and fills in `written` then.
Status SplitPacker::WriteShard(const std::string& path, size_t begin, size_t end, Lookahead* ahead,
                               ShardFinisher* finisher, ShardInfo* written) {
  std::unique_ptr<ffr::ShardWriter> w;
  ffr::ShardWriterOptions options;
  options.sample_alignment = opt_.align;
  options.direct_io = true;
  options.env = opt_.env;
  FFR_RETURN_IF_ERROR(ffr::ShardWriter::Create(path, static_cast<int64_t>(end - begin), options, &w));
  Status s;
  for (size_t i = begin; i < end && s.ok(); ++i) {
    const Prepared p = ahead->Take();
    Report(false);
    for (const std::string& warning : p.warnings) Message("warning: " + warning);
    summary_->warnings += static_cast<int64_t>(p.warnings.size());
    if (p.status.ok()) {
      s = w->Append(p.record.data(), p.record.size());
      if (s.ok()) AddToIndex(i, p.info, p.image_bytes);
    } else if (opt_.skip_bad) {
      Message("skipped: " + p.status.message());
      ++info_.skipped;
      s = w->Skip();
    } else {
      return p.status;
    }
  }
  FFR_RETURN_IF_ERROR(NoteShardNeed(s, begin, end));
  return finisher->Start(std::move(w), [this, begin, end, written](const ffr::ShardWriter& finished, Status s) {
    FFR_RETURN_IF_ERROR(NoteShardNeed(s, begin, end));
    written->samples = finished.appended();
    written->bytes = finished.bytes();
    written->meta_crc = finished.meta_crc();
    return Status::OK();
  });
}

// A shard a previous run finished with images [begin, end): its records go
// into the label index again, and the images it skipped (--skip-bad; the
// records keep source order) are named and counted again.
Status SplitPacker::ResumeShard(const std::string& path, size_t begin, size_t end, ShardInfo* info) {
  ffr::ReaderOptions ro;
  ro.env = opt_.env;
  std::unique_ptr<ffr::Reader> reader;
  FFR_RETURN_IF_ERROR(ffr::Reader::Open(path, ro, &reader));
  const auto skipped_earlier = [this](size_t image) {
    Message("skipped: " + split_.images.path(image) + " (by the earlier run this one resumes)");
    ++info_.skipped;
  };
  ffr::ReadBuffer buf;
  size_t next = begin;  // the source image the next record should be
  for (int64_t i = 0; i < reader->size(); ++i) {
    ffr::Sample s;
    FFR_RETURN_IF_ERROR(reader->Read(i, &buf, &s));
    RecordView v;
    FFR_RETURN_IF_ERROR(RecordView::Parse(s.data, s.size, reader->Describe(i), &v));
    const RecordInfo record = v.info();
    for (; next < end; ++next) {
      if (split_.images.image_id(next) == record.image_id && split_.images.file_name(next) == record.file_name)
        break;
      skipped_earlier(next);
    }
    if (next == end)
      return Status::Corruption(reader->Describe(i) + ": image id " + std::to_string(record.image_id) + " (" +
                                record.file_name + ") is not among the shard's images in " + split_.listing);
    AddToIndex(next++, record, v.image_size());
  }
  for (; next < end; ++next) skipped_earlier(next);
  info->samples = reader->size();
  info->meta_crc = reader->shard_meta_crc(0);
  return opt_.env->GetFileSize(path, &info->bytes);
}

void SplitPacker::AddToIndex(size_t image, const RecordInfo& info, uint64_t image_bytes) {
  // The index gives sizes as viewed (what every consumer uses), the record as stored (what decodes).
  RecordInfo viewed = info;
  if (opt_.exif != ExifPolicy::kIgnore && OrientationSwapsSides(info.exif_orientation))
    std::swap(viewed.width, viewed.height);
  orientations_.push_back(info.exif_orientation);
  index_.Add(viewed, image_bytes);
  if (info.exif_orientation > 1) ++exif_oriented_;
  packed_from_.push_back(image);
}

// The source's EvalBoxes become the label index's, moved in place rather than
// copied (they are the largest part of the metadata a pack holds): those of
// images not packed are dropped, and those of images --max-size shrank shrink
// with them, as the Boxes' areas did (PrepareOne). Samples keep the source's
// order, so each image's boxes move only towards the front.
Status SplitPacker::MoveEvalBoxesToIndex() {
  if (!split_.images.has_eval_boxes()) return Status::OK();
  std::vector<uint64_t> source_begin;
  std::vector<EvalBox> boxes;
  split_.images.TakeEvalBoxes(&source_begin, &boxes);
  std::vector<uint64_t> begin{0};
  begin.reserve(index_.size() + 1);
  for (size_t i = 0; i < index_.size(); ++i) {
    const size_t image = packed_from_[i];
    // --exif apply: the JSON's boxes are on the stored pixels (its size the stored one); they turn with them.
    const int turn = opt_.exif == ExifPolicy::kApply ? orientations_[i] : 1;
    const double source_w = split_.images.width(image), source_h = split_.images.height(image);
    const bool swapped = OrientationSwapsSides(turn);
    const double sx = static_cast<double>(index_.width(i)) / (swapped ? source_h : source_w);
    const double sy = static_cast<double>(index_.height(i)) / (swapped ? source_w : source_h);
    uint64_t to = begin.back();
    for (uint64_t from = source_begin[image]; from < source_begin[image + 1]; ++from, ++to) {
      EvalBox b = boxes[from];
      if (turn > 1) {
        double cx = b.x + b.w / 2, cy = b.y + b.h / 2;
        TurnBoxToViewed(turn, source_w, source_h, &cx, &cy, &b.w, &b.h);
        b.x = cx - b.w / 2, b.y = cy - b.h / 2;
      }
      if (sx != 1 || sy != 1) {
        b.x *= sx, b.w *= sx;
        b.y *= sy, b.h *= sy;
        b.area *= sx * sy;
      }
      boxes[to] = b;
    }
    begin.push_back(to);
  }
  boxes.resize(begin.back());
  return index_.SetEvalBoxes(std::move(begin), std::move(boxes));
}

Status SplitPacker::Run(SplitInfo* result) {
  FFR_RETURN_IF_ERROR(opt_.env->CreateDirs(dir_));
  info_.name = split_.name;
  for (const std::string& orphan : split_.orphan_labels) Message("warning: label without an image: " + orphan);
  summary_->warnings += static_cast<int64_t>(split_.orphan_labels.size());

  index_.Reserve(split_.images.size(), split_.images.total_boxes());
  packed_from_.reserve(split_.images.size());
  orientations_.reserve(split_.images.size());

  // Shards an earlier run of the same pack finished are kept; the images of
  // the others are prepared by workers ahead of the writer (this thread).
  const size_t shard_count = starts_.size() - 1;
  std::vector<size_t> todo;
  std::vector<uint64_t> todo_sizes;
  for (size_t k = 0; k < shard_count; ++k) {
    const bool finished = writer_.HasShard(split_.name, k);
    for (size_t i = starts_[k]; i < starts_[k + 1] && !finished; ++i) {
      todo.push_back(i);
      todo_sizes.push_back(sizes_[i]);
    }
  }
  Lookahead ahead(std::move(todo_sizes));
  const int threads = std::min<int>(opt_.threads > 0 ? opt_.threads : UsableCpus(), static_cast<int>(todo.size()));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back([&] { Prepare(todo, &ahead); });
  std::vector<ShardInfo> shards(shard_count);
  ShardFinisher finisher;
  Status status;
  for (size_t k = 0; k < shard_count && status.ok(); ++k) {
    shards[k].file = ShardFileName(k);
    const auto resume = [&](const std::string& path, bool* kept) {
      const Status s = ResumeShard(path, starts_[k], starts_[k + 1], &shards[k]);
      if (!s.ok()) return Status::Corruption("cannot resume: " + s.message() + "; rerun with --force");
      done_ += static_cast<int64_t>(starts_[k + 1] - starts_[k]);
      ++summary_->resumed_shards;
      *kept = true;
      return Status::OK();
    };
    const auto write = [&](const std::string& path) {
      return WriteShard(path, starts_[k], starts_[k + 1], &ahead, &finisher, &shards[k]);
    };
    status = writer_.WriteShard(split_.name, k, resume, write);
  }
  ahead.Stop();  // on failure, images may be left unclaimed
  for (std::thread& t : workers) t.join();
  const Status last = finisher.Wait();
  FFR_RETURN_IF_ERROR(status);
  FFR_RETURN_IF_ERROR(last);
  Report(true);
  if (index_.size() == 0)
    return Status::InvalidArgument("split '" + split_.name + "': all " + std::to_string(split_.images.size()) +
                                   " images of " + split_.listing + " are bad and were skipped; nothing to pack");

  info_.samples = static_cast<int64_t>(index_.size());
  for (const ShardInfo& s : shards) info_.bytes += s.bytes;
  for (size_t i = 0; i < index_.size(); ++i) {
    const size_t n = index_.box_count(i);
    info_.boxes += static_cast<int64_t>(n);
    info_.background += n == 0 ? 1 : 0;
    for (size_t b = 0; b < n; ++b) info_.crowd_boxes += index_.boxes(i)[b].iscrowd ? 1 : 0;
  }
  info_.shards = shards;
  info_.exif_oriented = exif_oriented_;
  info_.exif_applied = opt_.exif != ExifPolicy::kIgnore;
  FFR_RETURN_IF_ERROR(MoveEvalBoxesToIndex());
  FFR_RETURN_IF_ERROR(index_.WriteFile(dir_ + "/" + kLabelIndexFile, opt_.env, &info_.label_index_crc));
  summary_->images += info_.samples;
  summary_->boxes += info_.boxes;
  summary_->background += info_.background;
  summary_->skipped += info_.skipped;
  summary_->exif_oriented += info_.exif_oriented;
  summary_->bytes += info_.bytes;
  *result = info_;
  return Status::OK();
}

std::map<std::string, std::string> OptionsRecord(const PackOptions& opt) {
  std::map<std::string, std::string> m;
  m["shard_bytes"] = std::to_string(opt.shard_bytes);
  m["shards"] = std::to_string(opt.shards);
  m["check"] = opt.full_decode ? "true" : "false";
  m["skip_bad"] = opt.skip_bad ? "true" : "false";
  m["max_size"] = std::to_string(opt.max_size);
  m["quality"] = std::to_string(opt.quality);
  m["align"] = std::to_string(opt.align);
  std::string splits;
  for (const std::string& s : opt.scan.splits) splits += (splits.empty() ? "" : ",") + s;
  m["splits"] = splits.empty() ? "all" : splits;
  m["layout"] = SourceLayoutName(opt.scan.layout);
  return m;
}

std::string StateFingerprint(const PackOptions& opt, const SourceDataset& source, const ImageSizes& sizes) {
  Fingerprint f;
  // The shard plan's version: a pack left by a yolo-pack that cut shards otherwise is not resumed
  // (its finished shards would hold other images than the plan's).
  f.Add("shard plan 2");
  f.Add(fs::absolute(opt.source).lexically_normal().string());
  for (const auto& [k, v] : OptionsRecord(opt)) f.Add(k + "=" + v);
  for (const std::string& name : source.class_names) f.Add(name);
  for (const int id : source.category_ids) f.AddValue(id);
  // Everything a record takes from the source: labels fixed between a failed
  // pack and its rerun must not leave the old ones in the finished shards.
  for (size_t s = 0; s < source.splits.size(); ++s) {
    f.Add(source.splits[s].name);
    for (size_t i = 0; i < source.splits[s].images.size(); ++i) {
      const SourceImage& image = source.splits[s].images[i];
      f.Add(image.path);
      f.Add(sizes[s][i]);
      f.Add(image.info.file_name);
      f.AddValue(image.info.image_id);
      f.AddValue(image.info.width);
      f.AddValue(image.info.height);
      f.AddValue(image.info.boxes.size());
      for (const Box& b : image.info.boxes)
        for (const float v : {float(b.class_index), float(b.iscrowd), b.cx, b.cy, b.w, b.h, b.area}) f.AddValue(v);
      f.Add(image.problem.ToString());
    }
  }
  return f.Hex();
}

// The output is emptied before packing when forced and written into always, so
// an output that is, holds or lies inside an input would destroy it: refused
// whatever `force` says.
Status CheckOutputApartFromInputs(const PackOptions& opt) {
  return CheckOutputApart("output", opt.output, {{"source", opt.source}, {"data YAML", opt.scan.data_yaml}},
                          /*output_emptied=*/true);
}

// Decides what to do with an existing output directory: start afresh, resume,
// or refuse. Takes the output's LOCK (held by `writer` to the end of the pack),
// so that two packs into one output take turns: the second then finds the
// first's dataset, or its unfinished pack, and decides as below.
Status PrepareOutput(const PackOptions& opt, const std::string& state, ShardSetWriter* writer) {
  ffr::Env* env = opt.env;
  std::vector<std::string> children;
  // A folder that is neither a dataset nor an unfinished pack is someone else's: refused, --force
  // or not (--force replaces only what a pack wrote), before the lock file could be left in it.
  const std::string ours = "a packed dataset nor an unfinished pack";
  FFR_RETURN_IF_ERROR(CheckOwnFolder(
      env, opt.output, [&](const std::string& name) { return writer->IsOwnFile(name); }, ours, &children));
  FFR_RETURN_IF_ERROR(writer->Lock([&] {
    if (opt.on_message)
      opt.on_message(opt.output + ": waiting for " + kDatasetLockFile + ", held by another pack or by a process " +
                     "reading the dataset (yolo-train, yolo-val, ...)");
  }));
  FFR_RETURN_IF_ERROR(writer->Entries(&children));
  if (!children.empty() && opt.force) {
    for (const std::string& child : children) FFR_RETURN_IF_ERROR(env->RemoveTree(opt.output + "/" + child));
  } else if (!children.empty()) {
    // The state file outlives dataset.yaml: with both there, the pack wrote its
    // dataset but failed before it could say so, and running it again finishes it.
    switch (writer->ReadState(state)) {
      case ShardSetWriter::Found::kSameWork:
        return Status::OK();  // resume
      case ShardSetWriter::Found::kOtherWork:
        return Status::AlreadyExists(opt.output +
                                     ": holds an unfinished pack of another source, other labels or other options; "
                                     "rerun that pack to resume it, or use --force to start over");
      case ShardSetWriter::Found::kNoState:
        if (env->FileExists(writer->commit_path()))
          return Status::AlreadyExists(opt.output + ": already holds a complete dataset; use --force to overwrite it");
        return ForeignFolder(opt.output, children, ours);
    }
  }
  return writer->Begin(state);
}

// The splits, then dataset.yaml, then the state file's removal.
Status PackSplits(const PackOptions& opt, SourceDataset* source_dataset, const ImageSizes& sizes,
                  const ShardPlans& plans, ShardSetWriter* writer, PackSummary* summary) {
  const SourceDataset& source = *source_dataset;
  Manifest& m = summary->manifest;
  m.created = NowIso8601();
  m.source = fs::absolute(opt.source).lexically_normal().string();
  m.source_layout = SourceLayoutName(source.layout);
  m.names = source.class_names;
  m.category_ids = source.category_ids;
  m.train = source.train_splits;
  m.val = source.val_splits;
  m.options = OptionsRecord(opt);
  for (size_t s = 0; s < source.splits.size(); ++s) {
    SplitInfo info;
    FFR_RETURN_IF_ERROR(
        SplitPacker(opt, source, &source_dataset->splits[s], sizes[s], plans[s], writer, summary).Run(&info));
    m.splits.push_back(std::move(info));
  }
  return writer->Commit(m.ToYaml());
}

}  // namespace

Status Pack(const PackOptions& options, PackSummary* summary) {
  const auto start = Clock::now();
  PackOptions opt = options;
  if (opt.env == nullptr) opt.env = ffr::Env::Default();
  while (opt.output.size() > 1 && opt.output.back() == '/') opt.output.pop_back();
  if (opt.output.empty()) return Status::InvalidArgument("no output directory given");
  FFR_RETURN_IF_ERROR(CheckOutputApartFromInputs(opt));
  if (opt.shards <= 0 && opt.shard_bytes == 0)
    return Status::InvalidArgument("the shard size must be more than 0 bytes (or give a number of shards)");
  if (opt.max_size < 0 || opt.quality < 1 || opt.quality > 100)
    return Status::InvalidArgument("--max-size must be >= 0 and --quality in [1, 100]");
  const Status align = ffr::CheckSampleAlignment(opt.align);
  if (!align.ok()) return Status::InvalidArgument("--align: " + align.message());
  SourceDataset source;
  FFR_RETURN_IF_ERROR(ScanSource(opt.source, opt.scan, &source));
  // A split folder may be a link out of the source tree: the output must not land in what it reads either.
  for (const SourceSplit& split : source.splits)
    FFR_RETURN_IF_ERROR(CheckOutputApart("output", opt.output,
                                         {{"image folder of split " + split.name, split.images.image_dir()},
                                          {"label folder of split " + split.name, split.images.label_dir()}},
                                         /*output_emptied=*/true));
  // An empty split would pack "successfully" into a dataset nothing can train
  // or validate on, most likely from a wrong path or an unfinished download.
  for (const SourceSplit& split : source.splits)
    if (split.images.empty())
      return Status::InvalidArgument("split '" + split.name + "' has no images: " + split.listing +
                                     " lists none; pack the other splits with --splits");
  for (const std::string& w : source.warnings)
    if (opt.on_message) opt.on_message("warning: " + w);
  *summary = PackSummary();
  summary->warnings += static_cast<int64_t>(source.warnings.size());
  const ImageSizes sizes = SourceImageSizes(source);
  ShardSetWriter writer(opt.env, opt.output, kStateFile, kManifestFile);
  FFR_RETURN_IF_ERROR(PrepareOutput(opt, "fingerprint: " + StateFingerprint(opt, source, sizes) + "\n", &writer));

  ShardPlans plans;
  for (const std::vector<uint64_t>& split : sizes)
    plans.push_back(PlanShards(split, opt.shard_bytes, static_cast<size_t>(std::max(opt.shards, 0))));
  const SpaceNeeded needs = PackSpace(opt, LeastShardBytes(opt, sizes), source, plans, writer);
  FFR_RETURN_IF_ERROR(CheckFreeSpace(needs));
  const Status s = PackSplits(opt, &source, sizes, plans, &writer, summary);
  if (!s.ok()) return WithSpaceNeeded(s, needs);
  summary->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return Status::OK();
}

}  // namespace ffyolo
