#include "ffyolo/inspect.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "ffr/env.h"
#include "ffr/format.h"
#include "ffyolo/exif.h"
#include "ffyolo/image_check.h"
#include "ffyolo/output/path_overlap.h"

namespace ffyolo {
namespace {

using Json = nlohmann::ordered_json;

void Appendf(std::string* out, const char* format, ...) __attribute__((format(printf, 2, 3)));
void Appendf(std::string* out, const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf, sizeof(buf), format, args);
  va_end(args);
  if (n < 0) return;
  if (static_cast<size_t>(n) < sizeof(buf)) {
    out->append(buf, static_cast<size_t>(n));
    return;
  }
  std::string big(static_cast<size_t>(n) + 1, '\0');
  va_start(args, format);
  std::vsnprintf(big.data(), big.size(), format, args);
  va_end(args);
  out->append(big, 0, static_cast<size_t>(n));
}

Spread Summarize(std::vector<double>* values) {
  Spread s;
  if (values->empty()) return s;
  std::sort(values->begin(), values->end());
  const size_t n = values->size();
  s.min = values->front();
  s.max = values->back();
  s.median = n % 2 == 1 ? (*values)[n / 2] : ((*values)[n / 2 - 1] + (*values)[n / 2]) / 2;
  return s;
}

Json SpreadToJson(const Spread& s) { return Json{{"min", s.min}, {"median", s.median}, {"max", s.max}}; }

std::string ClassName(const Manifest& manifest, uint16_t class_index) {
  if (class_index < manifest.names.size()) return manifest.names[class_index];
  return "class " + std::to_string(class_index) + " (out of range)";
}

std::string FormatBox(const Box& b) {
  std::string out;
  Appendf(&out, "class %u%s at %g %g %g %g area %g", b.class_index, b.iscrowd ? " crowd" : "", b.cx, b.cy, b.w, b.h,
          b.area);
  return out;
}

// What differs between a record and its label index entry; "" when nothing. The index gives the size as
// viewed where the split applies EXIF orientations, the record as stored.
std::string IndexDifferences(const RecordView& record, const LabelIndex& index, size_t i, bool exif_applied) {
  std::string out;
  auto field = [&](const char* name, const std::string& in_record, const std::string& in_index) {
    if (in_record == in_index) return;
    out += (out.empty() ? "" : "; ") + std::string(name) + " " + in_record + " vs " + in_index;
  };
  auto size = [](uint32_t w, uint32_t h) { return std::to_string(w) + "x" + std::to_string(h); };
  field("image id", std::to_string(record.image_id()), std::to_string(index.image_id(i)));
  field("file name", std::string(record.file_name()), index.file_name(i));
  const RecordFrame frame = FrameOf(record, exif_applied);
  field("size", size(frame.width, frame.height), size(index.width(i), index.height(i)));
  field("encoding", ImageEncodingName(record.encoding()), ImageEncodingName(index.encoding(i)));
  field("image bytes", std::to_string(record.image_size()), std::to_string(index.image_bytes(i)));
  field("box count", std::to_string(record.box_count()), std::to_string(index.box_count(i)));
  if (record.box_count() != index.box_count(i)) return out;
  for (size_t j = 0; j < record.box_count(); ++j) {
    const Box in_record = record.box(j), in_index = index.boxes(i)[j];
    if (in_record == in_index) continue;
    field(("box " + std::to_string(j)).c_str(), FormatBox(in_record), FormatBox(in_index));
    break;  // the first differing box is enough to find the sample
  }
  return out;
}

// Reports the verification progress of all splits of one VerifyDataset call.
class VerifyProgress {
 public:
  VerifyProgress(const std::function<void(int64_t, int64_t)>& callback, int64_t total)
      : callback_(callback), total_(total) {}

  void Add(int64_t samples) {
    std::lock_guard<std::mutex> lock(mu_);
    done_ += samples;
    if (callback_) callback_(done_, total_);
  }

 private:
  const std::function<void(int64_t, int64_t)>& callback_;
  const int64_t total_;
  std::mutex mu_;
  int64_t done_ = 0;
};

// Checks one split: first its files (label index, shard sizes and headers,
// sample counts), then, on worker threads, every sample of the shards whose
// header could be read.
class SplitVerifier {
 public:
  SplitVerifier(const Dataset& dataset, const SplitInfo& split, const VerifyOptions& options,
                VerifyProgress* progress)
      : dataset_(dataset),
        split_(split),
        options_(options),
        progress_(progress),
        dir_(dataset.split_dir(split.name)),
        batch_size_(static_cast<int64_t>(std::max<size_t>(options.batch_size, 1))) {}

  // Adds what it found to *report.
  void Run(VerifyReport* report);

 private:
  // Counters of one worker, added to the report at its end.
  struct Tally {
    int64_t samples = 0, images = 0;
    uint64_t bytes = 0;
  };

  void LoadIndex();
  void OpenShards();
  void CheckSamples();
  void Work();
  void CheckSample(int64_t r, const ffr::Sample& sample, ImageInspector* inspector, Tally* tally);

  // Which sample reader index `r` is: its shard in the manifest, its place there and in the split.
  void Locate(int64_t r, size_t* shard, int64_t* local, int64_t* index) const;
  void AddProblem(const std::string& file, int64_t sample, const std::string& image, const std::string& message);
  bool IndexCovers(int64_t index) const { return have_index_ && index < static_cast<int64_t>(index_.size()); }
  // The image file name the label index gives sample `index`, "" without one.
  std::string IndexedName(int64_t index) const { return IndexCovers(index) ? index_.file_name(index) : ""; }

  const Dataset& dataset_;
  const SplitInfo& split_;
  const VerifyOptions& options_;
  VerifyProgress* progress_;
  const std::string dir_;
  const int64_t batch_size_;

  LabelIndex index_;
  bool have_index_ = false;
  std::vector<int64_t> shard_start_;  // split index of each manifest shard's first sample
  std::vector<size_t> good_shards_;   // the manifest shard of each shard the reader reads
  std::unique_ptr<ffr::Reader> reader_;
  std::atomic<int64_t> next_{0};  // the next reader index to hand to a worker

  std::mutex mu_;  // guards problems_ and tally_
  std::vector<VerifyProblem> problems_;
  Tally tally_;
};

void SplitVerifier::Run(VerifyReport* report) {
  LoadIndex();
  OpenShards();
  if (reader_) CheckSamples();
  std::stable_sort(problems_.begin(), problems_.end(),
                   [](const VerifyProblem& a, const VerifyProblem& b) { return a.sample < b.sample; });
  report->problems.insert(report->problems.end(), problems_.begin(), problems_.end());
  report->samples += tally_.samples;
  report->images += tally_.images;
  report->bytes += tally_.bytes;
  report->shards += static_cast<int64_t>(good_shards_.size());
}

void SplitVerifier::LoadIndex() {
  const Status s = dataset_.LoadLabelIndex(split_.name, &index_);
  have_index_ = s.ok();
  if (!have_index_) AddProblem(split_.label_index, -1, "", s.message());
}

void SplitVerifier::OpenShards() {
  ffr::Env* env = ffr::Env::Default();
  std::vector<std::string> good_paths;
  int64_t start = 0;
  for (size_t k = 0; k < split_.shards.size(); ++k) {
    const ShardInfo& shard = split_.shards[k];
    const std::string path = dir_ + "/" + shard.file;
    shard_start_.push_back(start);
    start += shard.samples;
    if (!env->FileExists(path)) {
      AddProblem(shard.file, -1, "",
                 path + ": missing shard (the manifest lists it with " + std::to_string(shard.samples) + " samples)");
      continue;
    }
    uint64_t size = 0;
    Status s = env->GetFileSize(path, &size);
    if (s.ok()) {
      const Status same = shard.CheckSize(path, size);
      if (!same.ok()) AddProblem(shard.file, -1, "", same.message());
    }
    // Each shard alone first, so that one broken header does not hide the others.
    ffr::ReaderOptions header_only;
    header_only.backend = ffr::IoBackend::kPread;
    std::unique_ptr<ffr::Reader> one;
    if (s.ok()) s = ffr::Reader::Open(std::vector<std::string>{path}, header_only, &one);
    if (!s.ok()) {
      AddProblem(shard.file, -1, "", s.message());
      continue;
    }
    if (one->size() != shard.samples) {
      AddProblem(shard.file, -1, "",
                 path + ": holds " + std::to_string(one->size()) + " samples, the manifest says " +
                     std::to_string(shard.samples));
      continue;
    }
    if (const Status same = shard.CheckHeader(path, one->shard_meta_crc(0)); !same.ok()) {
      AddProblem(shard.file, -1, "", same.message());
      continue;
    }
    good_shards_.push_back(k);
    good_paths.push_back(path);
  }
  // FFRecord's readers take every *.ffr of the folder: one the manifest does not list would join the split there.
  std::vector<std::string> children;
  if (env->GetChildren(dir_, &children).ok())
    for (const std::string& name : children) {
      const bool listed = std::any_of(split_.shards.begin(), split_.shards.end(),
                                      [&](const ShardInfo& s) { return s.file == name; });
      if (!listed && name.size() > 4 && name.compare(name.size() - 4, 4, ".ffr") == 0)
        AddProblem(name, -1, "",
                   dir_ + "/" + name + ": a shard the manifest does not list (FFRecord readers would read it as "
                                       "part of split " + split_.name + ")");
    }
  shard_start_.push_back(start);
  if (start != split_.samples)
    AddProblem(kManifestFile, -1, "",
               dataset_.path() + "/" + kManifestFile + ": the shards of split " + split_.name + " add up to " +
                   std::to_string(start) + " samples, the split says " + std::to_string(split_.samples));
  if (good_paths.empty()) return;
  // Checksums are compared per sample in CheckSample, so that a bad sample
  // does not fail its whole batch.
  ffr::ReaderOptions options;
  options.verify_checksums = false;
  const Status s = ffr::Reader::Open(good_paths, options, &reader_);
  if (!s.ok()) AddProblem("", -1, "", s.message());
}

void SplitVerifier::CheckSamples() {
  const int64_t batches = (reader_->size() + batch_size_ - 1) / batch_size_;
  int workers = options_.workers > 0 ? options_.workers : static_cast<int>(std::thread::hardware_concurrency());
  workers = static_cast<int>(std::clamp<int64_t>(batches, 1, std::max(workers, 1)));
  std::vector<std::thread> threads;
  for (int t = 1; t < workers; ++t) threads.emplace_back([this] { Work(); });
  Work();
  for (std::thread& t : threads) t.join();
}

void SplitVerifier::Work() {
  ffr::ReadBuffer buffer;
  std::vector<int64_t> indices;
  std::vector<ffr::Sample> samples(batch_size_);
  ImageInspector inspector;
  Tally tally;
  for (;;) {
    const int64_t begin = next_.fetch_add(batch_size_);
    if (begin >= reader_->size()) break;
    const int64_t end = std::min(reader_->size(), begin + batch_size_);
    indices.clear();
    for (int64_t r = begin; r < end; ++r) indices.push_back(r);
    if (reader_->ReadBatch(indices.data(), indices.size(), &buffer, samples.data()).ok()) {
      for (size_t k = 0; k < indices.size(); ++k) CheckSample(indices[k], samples[k], &inspector, &tally);
    } else {
      // Read again one by one to tell which samples fail.
      for (int64_t r : indices) {
        ffr::Sample sample;
        const Status s = reader_->Read(r, &buffer, &sample);
        if (s.ok()) {
          CheckSample(r, sample, &inspector, &tally);
          continue;
        }
        size_t shard;
        int64_t local, index;
        Locate(r, &shard, &local, &index);
        AddProblem(split_.shards[shard].file, index, IndexedName(index), s.message());
      }
    }
    progress_->Add(end - begin);
  }
  std::lock_guard<std::mutex> lock(mu_);
  tally_.samples += tally.samples;
  tally_.images += tally.images;
  tally_.bytes += tally.bytes;
}

void SplitVerifier::CheckSample(int64_t r, const ffr::Sample& sample, ImageInspector* inspector, Tally* tally) {
  size_t shard;
  int64_t local, index;
  Locate(r, &shard, &local, &index);
  const std::string& file = split_.shards[shard].file;
  std::string image = IndexedName(index);
  auto where = [&] {
    return dir_ + "/" + file + " sample " + std::to_string(local) + " (index " + std::to_string(index) +
           (image.empty() ? "" : ", " + image) + ")";
  };
  ++tally->samples;
  tally->bytes += sample.size;

  const uint32_t stored = reader_->sample_crc(r), computed = ffr::Crc32(sample.data, sample.size);
  if (stored != computed) {
    AddProblem(file, index, image,
               where() + ": checksum mismatch (stored " + std::to_string(stored) + ", computed " +
                   std::to_string(computed) + ")");
    return;
  }
  RecordView record;
  Status s = RecordView::Parse(sample.data, sample.size, where(), &record);
  if (!s.ok()) {
    AddProblem(file, index, image, s.message());
    return;
  }
  if (image.empty()) image = std::string(record.file_name());
  if (IndexCovers(index)) {
    const std::string differences = IndexDifferences(record, index_, static_cast<size_t>(index), split_.exif_applied);
    if (!differences.empty())
      AddProblem(file, index, image, where() + ": the record and the label index disagree (record vs index): " +
                                         differences);
  }
  RecordInfo info = record.info();
  std::vector<std::string> clipped;  // boxes within the clip tolerance are fine here
  s = CheckBoxes(&info, dataset_.num_classes(), where(), &clipped);
  if (!s.ok()) AddProblem(file, index, image, s.message());

  if (!options_.check_images) return;
  ++tally->images;
  ImageFacts facts;
  const std::string_view bytes(reinterpret_cast<const char*>(record.image_data()), record.image_size());
  s = inspector->Inspect(bytes, where(), options_.full_decode, &facts);
  if (!s.ok()) {
    AddProblem(file, index, image, s.message());
  } else if (facts.encoding != record.encoding()) {
    AddProblem(file, index, image,
               where() + ": the image is " + ImageEncodingName(facts.encoding) + " but the record says " +
                   ImageEncodingName(record.encoding()));
  } else if (facts.width != 0 && (facts.width != record.width() || facts.height != record.height())) {
    AddProblem(file, index, image,
               where() + ": the image is " + std::to_string(facts.width) + "x" + std::to_string(facts.height) +
                   " but the record says " + std::to_string(record.width()) + "x" + std::to_string(record.height()));
  } else if (record.exif_orientation() != 0) {
    // A JPEG re-encoded by --max-size before it wrote the tag back lost its EXIF block (1 then), not the
    // record's byte.
    const int in_image = ImageExifOrientation(record.image_data(), record.image_size());
    if (in_image != 1 && in_image != record.exif_orientation())
      AddProblem(file, index, image,
                 where() + ": the image's EXIF orientation is " + std::to_string(in_image) + " but the record says " +
                     std::to_string(record.exif_orientation()));
  }
}

void SplitVerifier::Locate(int64_t r, size_t* shard, int64_t* local, int64_t* index) const {
  size_t reader_shard;
  reader_->Locate(r, &reader_shard, local);
  *shard = good_shards_[reader_shard];
  *index = shard_start_[*shard] + *local;
}

void SplitVerifier::AddProblem(const std::string& file, int64_t sample, const std::string& image,
                               const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  problems_.push_back(VerifyProblem{split_.name, file, sample, image, message});
}

// Through a temporary name and a rename: a file that was a link is replaced, not its target.
Status WriteWholeFile(const std::string& path, std::string_view data) {
  return ffr::WriteFileAtomically(ffr::Env::Default(), path, std::string(data));
}

}  // namespace

// ---- info

Status ComputeSplitStats(const Dataset& dataset, const std::string& split, SplitStats* out) {
  LabelIndex index;
  FFR_RETURN_IF_ERROR(dataset.LoadLabelIndex(split, &index));
  const Manifest& manifest = dataset.manifest();
  const SplitInfo& info = *manifest.FindSplit(split);
  SplitStats stats;
  stats.name = split;
  stats.samples = static_cast<int64_t>(index.size());
  stats.skipped = info.skipped;
  stats.exif_oriented = info.exif_oriented;
  stats.exif_applied = info.exif_applied;
  stats.shards = info.shards.size();
  stats.bytes = info.bytes;
  stats.classes.resize(manifest.names.size());
  for (size_t c = 0; c < stats.classes.size(); ++c) {
    stats.classes[c].name = manifest.names[c];
    stats.classes[c].category_id = manifest.category_ids[c];
  }
  std::vector<double> widths, heights, aspects, box_widths, box_heights;
  std::vector<size_t> last_image(stats.classes.size(), SIZE_MAX);  // the last image counted per class
  for (size_t i = 0; i < index.size(); ++i) {
    const double w = index.width(i), h = index.height(i);
    widths.push_back(w);
    heights.push_back(h);
    if (h > 0) aspects.push_back(w / h);
    if (index.box_count(i) == 0) ++stats.background;
    for (size_t j = 0; j < index.box_count(i); ++j) {
      const Box& box = index.boxes(i)[j];
      if (box.class_index >= stats.classes.size())
        return Status::Corruption(dataset.split_dir(split) + "/" + info.label_index + ": sample " + std::to_string(i) +
                                  " box " + std::to_string(j) + " has class " + std::to_string(box.class_index) +
                                  ", the dataset has " + std::to_string(stats.classes.size()) + " classes");
      ClassCount& count = stats.classes[box.class_index];
      ++count.boxes;
      if (last_image[box.class_index] != i) ++count.images;
      last_image[box.class_index] = i;
      ++stats.boxes;
      stats.crowd_boxes += box.iscrowd;
      box_widths.push_back(box.w * w);
      box_heights.push_back(box.h * h);
    }
  }
  stats.width = Summarize(&widths);
  stats.height = Summarize(&heights);
  stats.aspect = Summarize(&aspects);
  stats.box_width = Summarize(&box_widths);
  stats.box_height = Summarize(&box_heights);
  stats.mean_boxes = stats.samples > 0 ? static_cast<double>(stats.boxes) / stats.samples : 0;
  *out = std::move(stats);
  return Status::OK();
}

std::string FormatSplitStats(const SplitStats& s) {
  std::string out;
  Appendf(&out, "%s: %lld samples, %lld boxes (%lld crowd), %lld background, %lld skipped, %zu shards, %.1f MB\n",
          s.name.c_str(), static_cast<long long>(s.samples), static_cast<long long>(s.boxes),
          static_cast<long long>(s.crowd_boxes), static_cast<long long>(s.background),
          static_cast<long long>(s.skipped), s.shards, s.bytes / 1e6);
  if (s.exif_oriented > 0)
    Appendf(&out, "  %lld image%s with an EXIF orientation other than 1: %s\n", static_cast<long long>(s.exif_oriented),
            s.exif_oriented == 1 ? "" : "s",
            s.exif_applied ? "trained and shown as viewed (turned as the orientation says)"
                           : "trained and shown as stored, not turned (packed with --exif ignore, or before "
                             "yolo-pack applied orientations: re-pack to apply them)");
  else if (s.exif_oriented < 0)
    Appendf(&out, "  EXIF orientations not recorded (packed before yolo-pack read them)\n");
  Appendf(&out, "  %-18s %10s %10s %10s\n", "", "min", "median", "max");
  const std::pair<const char*, const Spread*> rows[] = {
      {"image width", &s.width},     {"image height", &s.height},      {"aspect (w/h)", &s.aspect},
      {"box width (px)", &s.box_width}, {"box height (px)", &s.box_height},
  };
  for (const auto& [label, spread] : rows)
    Appendf(&out, "  %-18s %10.4g %10.4g %10.4g\n", label, spread->min, spread->median, spread->max);
  Appendf(&out, "  boxes per image: %.2f on average\n", s.mean_boxes);

  std::vector<const ClassCount*> present;
  std::string absent;
  size_t absent_count = 0;
  for (const ClassCount& c : s.classes) {
    if (c.boxes > 0) {
      present.push_back(&c);
    } else {
      absent += (absent.empty() ? "" : ", ") + c.name;
      ++absent_count;
    }
  }
  std::stable_sort(present.begin(), present.end(),
                   [](const ClassCount* a, const ClassCount* b) { return a->boxes > b->boxes; });
  Appendf(&out, "  %-18s %6s %8s %8s\n", "class", "id", "boxes", "images");
  for (const ClassCount* c : present)
    Appendf(&out, "  %-18s %6d %8lld %8lld\n", c->name.c_str(), c->category_id, static_cast<long long>(c->boxes),
            static_cast<long long>(c->images));
  if (absent_count > 0) Appendf(&out, "  %zu classes without boxes: %s\n", absent_count, absent.c_str());
  return out;
}

std::string SplitStatsToJson(const Dataset& dataset, const std::vector<SplitStats>& splits) {
  Json root;
  root["path"] = dataset.path();
  root["names"] = dataset.manifest().names;
  root["category_ids"] = dataset.manifest().category_ids;
  root["train"] = dataset.manifest().train;  // the data YAML's lists ([] when not recorded)
  root["val"] = dataset.manifest().val;
  Json& out = root["splits"] = Json::array();
  for (const SplitStats& s : splits) {
    Json classes = Json::array();
    for (size_t c = 0; c < s.classes.size(); ++c)
      classes.push_back(Json{{"index", c},
                             {"name", s.classes[c].name},
                             {"category_id", s.classes[c].category_id},
                             {"boxes", s.classes[c].boxes},
                             {"images", s.classes[c].images}});
    out.push_back(Json{{"name", s.name},
                       {"samples", s.samples},
                       {"boxes", s.boxes},
                       {"crowd_boxes", s.crowd_boxes},
                       {"background", s.background},
                       {"skipped", s.skipped},
                       {"exif_oriented", s.exif_oriented >= 0 ? Json(s.exif_oriented) : Json()},
                       {"exif_applied", s.exif_applied},
                       {"shards", s.shards},
                       {"bytes", s.bytes},
                       {"image_width", SpreadToJson(s.width)},
                       {"image_height", SpreadToJson(s.height)},
                       {"aspect", SpreadToJson(s.aspect)},
                       {"mean_boxes", s.mean_boxes},
                       {"box_width", SpreadToJson(s.box_width)},
                       {"box_height", SpreadToJson(s.box_height)},
                       {"classes", std::move(classes)}});
  }
  return root.dump(2) + "\n";
}

// ---- verify

Status VerifyDataset(const std::string& path, const VerifyOptions& options, VerifyReport* report) {
  *report = VerifyReport();
  std::unique_ptr<Dataset> dataset;
  FFR_RETURN_IF_ERROR(Dataset::Open(path, &dataset));
  std::vector<std::string> splits = options.splits;
  if (splits.empty())
    for (const SplitInfo& s : dataset->manifest().splits) splits.push_back(s.name);
  int64_t total = 0;
  for (const std::string& s : splits) {
    FFR_RETURN_IF_ERROR(dataset->CheckSplit(s));
    total += dataset->manifest().FindSplit(s)->samples;
  }
  report->expected_samples = total;
  VerifyProgress progress(options.on_progress, total);
  for (const std::string& s : splits)
    SplitVerifier(*dataset, *dataset->manifest().FindSplit(s), options, &progress).Run(report);
  return Status::OK();
}

// ---- ls, cat, extract

std::string FormatIndexEntry(const LabelIndex& index, size_t i) {
  std::string out;
  Appendf(&out, "%6zu %12lld  %-24s %5ux%-5u %-5s %9llu %4zu boxes\n", i,
          static_cast<long long>(index.image_id(i)), index.file_name(i).c_str(), index.width(i), index.height(i),
          ImageEncodingName(index.encoding(i)), static_cast<unsigned long long>(index.image_bytes(i)),
          index.box_count(i));
  return out;
}

Status FindSampleByImageId(const Dataset& dataset, const std::string& split, int64_t image_id, int64_t* index) {
  LabelIndex labels;
  FFR_RETURN_IF_ERROR(dataset.LoadLabelIndex(split, &labels));
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels.image_id(i) == image_id) {
      *index = static_cast<int64_t>(i);
      return Status::OK();
    }
  }
  return Status::NotFound(dataset.split_dir(split) + ": no sample with image id " + std::to_string(image_id));
}

Status ReadRecord(const ffr::Reader& reader, int64_t index, ffr::ReadBuffer* buffer, RecordView* out) {
  ffr::Sample sample;
  FFR_RETURN_IF_ERROR(reader.Read(index, buffer, &sample));
  return RecordView::Parse(sample.data, sample.size, reader.Describe(index), out);
}

RecordFrame FrameOf(const RecordView& record, bool exif_applied) {
  const int orientation = record.exif_orientation();
  const bool swaps = exif_applied && OrientationSwapsSides(orientation);
  return {swaps ? record.height() : record.width(), swaps ? record.width() : record.height(),
          exif_applied || !OrientationTurns(orientation)};
}

std::string FormatRecord(const Manifest& manifest, int64_t index, const RecordView& r, bool exif_applied) {
  const RecordFrame frame = FrameOf(r, exif_applied);
  // The frame is named where it matters: where the orientation turns the image.
  std::string which;
  if (OrientationTurns(r.exif_orientation()))
    which = frame.viewed ? " as viewed (EXIF orientation " + std::to_string(r.exif_orientation()) + ", stored " +
                               std::to_string(r.width()) + "x" + std::to_string(r.height()) + ")"
                         : " as stored (EXIF orientation " + std::to_string(r.exif_orientation()) +
                               ", not applied in this split: cv2.imread shows it turned)";
  std::string out;
  Appendf(&out, "sample %lld: image id %lld, %.*s, %ux%u %s%s, %zu image bytes, %zu boxes\n",
          static_cast<long long>(index), static_cast<long long>(r.image_id()),
          static_cast<int>(r.file_name().size()), r.file_name().data(), frame.width, frame.height,
          ImageEncodingName(r.encoding()), which.c_str(), r.image_size(), r.box_count());
  if (r.box_count() == 0) return out;
  Appendf(&out, "  %3s %-16s %9s %9s %9s %9s  %8s %8s %8s %8s %10s %s\n", "#", "class", "cx", "cy", "w", "h", "cx px",
          "cy px", "w px", "h px", "area", "crowd");
  for (size_t j = 0; j < r.box_count(); ++j) {
    const Box b = r.box(j);
    Appendf(&out, "  %3zu %-16s %9.6f %9.6f %9.6f %9.6f  %8.1f %8.1f %8.1f %8.1f %10.1f %s\n", j,
            ClassName(manifest, b.class_index).c_str(), b.cx, b.cy, b.w, b.h, b.cx * frame.width,
            b.cy * frame.height, b.w * frame.width, b.h * frame.height, b.area, b.iscrowd ? "yes" : "no");
  }
  return out;
}

std::string YoloLabelText(const RecordView& record) {
  std::string out;
  for (size_t j = 0; j < record.box_count(); ++j) {
    const Box b = record.box(j);
    if (!b.iscrowd) Appendf(&out, "%u %g %g %g %g\n", b.class_index, b.cx, b.cy, b.w, b.h);
  }
  return out;
}

std::string RecordMetadataJson(const Manifest& manifest, int64_t index, const RecordView& r, bool exif_applied) {
  Json boxes = Json::array();
  for (size_t j = 0; j < r.box_count(); ++j) {
    const Box b = r.box(j);
    Json box{{"class", b.class_index}, {"name", ClassName(manifest, b.class_index)}};
    if (b.class_index < manifest.category_ids.size()) box["category_id"] = manifest.category_ids[b.class_index];
    box.update(Json{{"cx", b.cx}, {"cy", b.cy}, {"w", b.w}, {"h", b.h}, {"area", b.area}, {"iscrowd", b.iscrowd}});
    boxes.push_back(std::move(box));
  }
  const RecordFrame frame = FrameOf(r, exif_applied);
  const Json root{{"index", index},
                  {"image_id", r.image_id()},
                  {"file_name", std::string(r.file_name())},
                  {"width", frame.width},
                  {"height", frame.height},
                  {"frame", frame.viewed ? "viewed" : "stored"},
                  {"exif_orientation", r.exif_orientation()},
                  {"stored_width", r.width()},
                  {"stored_height", r.height()},
                  {"encoding", ImageEncodingName(r.encoding())},
                  {"image_bytes", r.image_size()},
                  {"boxes", std::move(boxes)}};
  return root.dump(2) + "\n";
}

namespace {

// The base name only: a record's name must not write outside the folder.
std::string_view ExtractedName(const RecordView& record) {
  return record.file_name().substr(record.file_name().rfind('/') + 1);
}

}  // namespace

Status ExtractedPaths(const RecordView& record, int64_t index, const std::string& dir, std::vector<std::string>* paths) {
  const std::string_view name = ExtractedName(record);
  if (name.empty() || name == "." || name == "..")
    return Status::Corruption("sample " + std::to_string(index) + ": unusable file name '" +
                              std::string(record.file_name()) + "'");
  const size_t dot = name.rfind('.');
  const std::string stem(name.substr(0, dot == 0 || dot == std::string_view::npos ? name.size() : dot));
  *paths = {dir + "/" + std::string(name), dir + "/" + stem + ".txt", dir + "/" + stem + ".json"};
  return Status::OK();
}

Status ExtractRecord(const Manifest& manifest, int64_t index, const RecordView& record, bool exif_applied,
                     const std::string& dir, bool replace, std::string* image_path) {
  std::vector<std::string> paths;
  FFR_RETURN_IF_ERROR(ExtractedPaths(record, index, dir, &paths));
  FFR_RETURN_IF_ERROR(CheckExtractable({{index, paths}}, replace));
  FFR_RETURN_IF_ERROR(ffr::Env::Default()->CreateDirs(dir));
  *image_path = paths[0];
  const std::string_view image(reinterpret_cast<const char*>(record.image_data()), record.image_size());
  FFR_RETURN_IF_ERROR(WriteWholeFile(paths[0], image));
  FFR_RETURN_IF_ERROR(WriteWholeFile(paths[1], YoloLabelText(record)));
  return WriteWholeFile(paths[2], RecordMetadataJson(manifest, index, record, exif_applied));
}

Status CheckExtractable(const std::vector<std::pair<int64_t, std::vector<std::string>>>& samples, bool replace) {
  std::map<std::string, int64_t> written;  // path -> the sample extracted there
  for (const auto& [index, paths] : samples)
    for (const std::string& path : paths) {
      const auto [earlier, fresh] = written.emplace(path, index);
      if (!fresh && earlier->second != index)
        return Status::InvalidArgument("samples " + std::to_string(earlier->second) + " and " +
                                       std::to_string(index) + " both extract to " + path +
                                       " (their file names share a stem); extract them to separate folders");
      if (!fresh) continue;
      FFR_RETURN_IF_ERROR(CheckOutputFile("", path, /*replace=*/true, "--force"));  // never a FIFO or a device
      struct stat st;
      if (!replace && ::lstat(path.c_str(), &st) == 0)
        return Status::AlreadyExists(path + " exists, and extracting sample " + std::to_string(index) +
                                     " would replace it; --force replaces it");
    }
  return Status::OK();
}

}  // namespace ffyolo
