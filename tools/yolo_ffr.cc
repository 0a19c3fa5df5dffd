// yolo-ffr info|verify|ls|cat|extract|show|batches|cache DATA.ffr: looks into a packed
// dataset, digests its loader's batches, or builds its pixel cache.
// Exit status: 0 fine, 1 an error or problems found, 2 a usage error.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "ffyolo/batch_digest.h"
#include "ffyolo/batch_grid.h"
#include "ffyolo/cli.h"
#include "ffyolo/cpus.h"
#include "ffyolo/flag_checks.h"
#include "ffyolo/inspect.h"
#include "ffyolo/output/path_overlap.h"
#include "ffyolo/pixel_cache.h"
#include "ffyolo/progress.h"

namespace {

using ffr::Status;

int Fail(const Status& s) {
  std::fprintf(stderr, "yolo-ffr: %s\n", s.message().c_str());
  return 1;
}

// Opens the dataset and picks the split: `split` if given, else the default one.
Status OpenSplit(const std::string& path, std::string* split, std::unique_ptr<ffyolo::Dataset>* dataset) {
  FFR_RETURN_IF_ERROR(ffyolo::Dataset::Open(path, dataset));
  return (*dataset)->ResolveSplit(/*training=*/true, split);
}

int Info(const std::string& path, std::vector<std::string> splits, bool json) {
  std::unique_ptr<ffyolo::Dataset> dataset;
  Status s = ffyolo::Dataset::Open(path, &dataset);
  if (!s.ok()) return Fail(s);
  if (splits.empty())
    for (const ffyolo::SplitInfo& split : dataset->manifest().splits) splits.push_back(split.name);
  std::vector<ffyolo::SplitStats> stats(splits.size());
  for (size_t i = 0; i < splits.size(); ++i) {
    s = dataset->CheckSplit(splits[i]);
    if (s.ok()) s = ffyolo::ComputeSplitStats(*dataset, splits[i], &stats[i]);
    if (!s.ok()) return Fail(s);
  }
  if (json) {
    std::fputs(ffyolo::SplitStatsToJson(*dataset, stats).c_str(), stdout);
    return 0;
  }
  const ffyolo::Manifest& m = dataset->manifest();
  const auto align = m.options.find("align");
  const bool aligned = align != m.options.end() && align->second != "0";
  std::printf("%s: %zu classes, packed %s from %s (%s)%s\n", dataset->path().c_str(), m.names.size(),
              m.created.c_str(), m.source.c_str(), m.source_layout.c_str(),
              aligned ? (", samples aligned to " + align->second + " bytes").c_str() : "");
  std::fputs(ffyolo::FormatRecordedSplits(m).c_str(), stdout);
  for (const ffyolo::SplitStats& split : stats) std::printf("\n%s", ffyolo::FormatSplitStats(split).c_str());
  return 0;
}

int Verify(const std::string& path, ffyolo::VerifyOptions options) {
  std::unique_ptr<ffyolo::ProgressBar> bar;
  options.on_progress = [&](int64_t done, int64_t total) {
    if (!bar) {
      ffyolo::ProgressBar::Options o;
      o.label = "verify";
      o.total = total;
      o.unit = "sample";
      bar.reset(new ffyolo::ProgressBar(o));
    }
    bar->Update(done);
  };
  ffyolo::VerifyReport report;
  const Status s = ffyolo::VerifyDataset(path, options, &report);
  if (bar) bar->Finish();
  if (!s.ok()) return Fail(s);
  for (const ffyolo::VerifyProblem& p : report.problems) std::printf("%s\n", p.message.c_str());
  std::printf("verified %lld of %lld samples (%.1f MB, %lld images) in %lld shards: %s\n",
              static_cast<long long>(report.samples), static_cast<long long>(report.expected_samples),
              report.bytes / 1e6, static_cast<long long>(report.images),
              static_cast<long long>(report.shards),
              report.ok() ? "OK" : (std::to_string(report.problems.size()) + " problems").c_str());
  return report.ok() ? 0 : 1;
}

// `yolo-ffr batches`: with a cache, the loader reads the split's pixel cache, built first when missing.
int Batches(const std::string& path, ffyolo::LoaderOptions options, const std::string& cache, int64_t epoch,
            int64_t limit) {
  std::unique_ptr<ffyolo::Dataset> dataset;
  Status s = ffyolo::Dataset::Open(path, &dataset);
  if (s.ok() && !cache.empty()) s = ffyolo::UsePixelCache(*dataset, cache, &options, "run without --cache");
  options.on_bad_sample = [](const std::string& m) { std::fprintf(stderr, "yolo-ffr: %s\n", m.c_str()); };
  if (s.ok())
    s = ffyolo::DigestBatches(*dataset, options, epoch, limit, [](const ffyolo::BatchDigest& d) {
      std::printf("%s\n", ffyolo::FormatBatchDigest(d).c_str());
    });
  return s.ok() ? 0 : Fail(s);
}

int Cache(const std::string& path, ffyolo::PixelCacheOptions options) {
  std::unique_ptr<ffyolo::Dataset> dataset;
  Status s = ffyolo::Dataset::Open(path, &dataset);
  if (!s.ok()) return Fail(s);
  std::unique_ptr<ffyolo::ProgressBar> bar;
  options.on_progress = [&](const ffyolo::PixelCacheOptions::Progress& p) {
    if (!bar) {
      ffyolo::ProgressBar::Options o;
      o.label = "cache";
      o.total = p.total;
      o.unit = "image";
      bar.reset(new ffyolo::ProgressBar(o));
    }
    bar->Update(p.done, std::to_string(p.bytes >> 20) + " MiB");
  };
  options.on_message = [](const std::string& m) { std::fprintf(stderr, "yolo-ffr: %s\n", m.c_str()); };
  ffyolo::PixelCacheSummary summary;
  s = ffyolo::BuildPixelCache(*dataset, options, &summary);
  if (bar) bar->Finish();
  if (!s.ok()) return Fail(s);
  const bool u8 = options.augmentation == ffyolo::Augmentation::kUltralytics8;
  std::printf("%s: %lld images of %s at --img %d for %s, %.1f MB: %s\n", summary.directory.c_str(),
              static_cast<long long>(summary.samples), summary.split.c_str(), options.img_size,
              u8 ? "Ultralytics 8" : options.training ? "training" : "validation", summary.bytes / 1e6,
              summary.was_complete ? "already complete"
                                   : (std::to_string(summary.built_shards) + " shards built, " +
                                      std::to_string(summary.kept_shards) + " kept, in " +
                                      std::to_string(static_cast<int>(summary.seconds + 0.5)) + " s")
                                         .c_str());
  return 0;
}

int List(const std::string& path, std::string split, int64_t limit) {
  std::unique_ptr<ffyolo::Dataset> dataset;
  ffyolo::LabelIndex index;
  Status s = OpenSplit(path, &split, &dataset);
  if (s.ok()) s = dataset->LoadLabelIndex(split, &index);
  if (!s.ok()) return Fail(s);
  const size_t n = limit >= 0 ? std::min(index.size(), static_cast<size_t>(limit)) : index.size();
  for (size_t i = 0; i < n; ++i) std::fputs(ffyolo::FormatIndexEntry(index, i).c_str(), stdout);
  return 0;
}

// Reads the samples `indices` of `split` and hands each to `use`, with whether the split applies EXIF orientations
// (the frame its boxes are in: inspect.h's RecordFrame).
template <typename Use>
int ForEachRecord(const std::string& path, std::string split, std::vector<int64_t> indices, int64_t by_id, Use use) {
  std::unique_ptr<ffyolo::Dataset> dataset;
  Status s = OpenSplit(path, &split, &dataset);
  if (s.ok()) s = dataset->CheckOwnImageIds(split, "cat and extract print each record's own image id");
  if (s.ok() && by_id >= 0) {
    indices.emplace_back();
    s = ffyolo::FindSampleByImageId(*dataset, split, by_id, &indices.back());
  }
  bool exif_applied = false;
  if (s.ok()) s = dataset->ExifApplied(split, &exif_applied);
  std::unique_ptr<ffr::Reader> reader;
  if (s.ok()) s = dataset->OpenReader(split, ffr::ReaderOptions(), &reader);
  if (!s.ok()) return Fail(s);
  ffr::ReadBuffer buffer;
  for (int64_t index : indices) {
    ffyolo::RecordView record;
    s = ffyolo::ReadRecord(*reader, index, &buffer, &record);
    if (s.ok()) s = use(dataset->manifest(), index, record, exif_applied);
    if (!s.ok()) return Fail(s);
  }
  return 0;
}

int Main(int argc, char** argv) {
  CLI::App app{"Look into a packed ffyolo dataset (NAME.ffr/)"};
  app.require_subcommand(1);
  std::string path, split, out_dir;
  std::vector<std::string> splits;
  std::vector<int64_t> indices;
  int64_t limit = -1, by_id = -1;
  bool json = false;
  ffyolo::VerifyOptions verify;

  CLI::App* info = app.add_subcommand("info", "Counts, class histogram and size statistics (label indexes only)");
  info->add_option("dataset", path, "Packed dataset directory")->required();
  info->add_option("--split", splits, "Only these splits (default: all)")->delimiter(',');
  info->add_flag("--json", json, "Machine-readable output");

  CLI::App* check = app.add_subcommand("verify", "Check every header, checksum, record, label and image");
  check->add_option("dataset", path, "Packed dataset directory")->required();
  check->add_option("--split", verify.splits, "Only these splits (default: all)")->delimiter(',');
  check->add_option("--workers", verify.workers, "Checking threads (default: one per CPU)")
      ->check(ffyolo::kNonNegative);
  bool no_images = false;
  CLI::Option* no_images_flag = check->add_flag("--no-images", no_images, "Skip the image header checks");
  check->add_flag("--decode", verify.full_decode, "Decode every JPEG fully (slower, catches corrupt data)")
      ->excludes(no_images_flag);

  CLI::App* ls = app.add_subcommand("ls", "One line per sample, from the label index");
  ls->add_option("dataset", path, "Packed dataset directory")->required();
  ls->add_option("--split", split, "Split, or several joined by + (default: the training split)");
  ls->add_option("--limit", limit, "At most this many lines")->check(ffyolo::kNonNegative);

  CLI::App* cat = app.add_subcommand("cat", "A sample's metadata and boxes");
  cat->add_option("dataset", path, "Packed dataset directory")->required();
  CLI::Option* cat_index = cat->add_option("index", indices, "Sample index in the split")->expected(0, 1);
  cat->add_option("--split", split, "Split, or several joined by + (default: the training split)");
  cat->add_option("--by-id", by_id, "The sample with this COCO image id")
      ->check(ffyolo::kNonNegative)
      ->excludes(cat_index);

  CLI::App* extract = app.add_subcommand("extract", "Write samples' original images, YOLO labels and metadata");
  extract->add_option("dataset", path, "Packed dataset directory")->required();
  extract->add_option("index", indices, "Sample indices in the split")->required();
  extract->add_option("--split", split, "Split, or several joined by + (default: the training split)");
  extract->add_option("-o,--output", out_dir, "Output directory")->required();
  bool force_extract = false;
  extract->add_flag("--force", force_extract, "Replace files of the same names in the output directory");

  ffyolo::ShowOptions show_options;
  std::string grid_path = "grid.jpg";
  CLI::App* show = app.add_subcommand("show", "Draw a grid of samples with their boxes and class names to a JPEG");
  show->add_option("dataset", path, "Packed dataset directory")->required();
  show->add_option("-o,--output", grid_path, "Output JPEG");
  bool force_show = false;
  show->add_flag("--force", force_show, "Replace the output JPEG if it is there");
  show->add_option("--split", show_options.split, "Split (default: train* with --augment, else val*)");
  show->add_flag("--augment", show_options.augment, "Training augmentation (mosaic, perspective, HSV, flips)");
  show->add_option("--seed", show_options.seed, "Augmentation seed");
  show->add_option("--img", show_options.img_size, "Image size");
  show->add_option("--images", show_options.images, "Number of images")->check(CLI::Range(1, 64));

  ffyolo::LoaderOptions batches_options;
  batches_options.workers = std::max(1, ffyolo::UsableCpus());
  int64_t batches_epoch = 0, batches_limit = -1;
  bool batches_val = false;
  std::string batches_cache;
  CLI::App* batches = app.add_subcommand(
      "batches", "One line per batch of the loader: its size and the CRC-32s of its pixels and targets (what any "
                 "loader with these options gives, bit for bit: the Python package's too)");
  batches->add_option("dataset", path, "Packed dataset directory")->required();
  batches->add_option("--split", batches_options.split, "Split (default: train*, or with --val val*)");
  batches->add_flag("--val", batches_val, "Validation batches (letterbox, rect) instead of training ones (mosaic)");
  batches->add_flag("--rect", batches_options.rect, "Rectangular training batches, no mosaic");
  batches->add_option("--img,--imgsz,--img-size", batches_options.img_size, "Image size")->check(ffyolo::kPositive);
  batches->add_option("--batch", batches_options.batch_size, "Batch size")->check(ffyolo::kPositive);
  batches->add_option("--seed", batches_options.seed, "Augmentation seed");
  batches->add_option("--epoch", batches_epoch, "Epoch")->check(ffyolo::kNonNegative);
  batches->add_option("--rank", batches_options.rank, "This rank's share of each epoch")->check(ffyolo::kNonNegative);
  batches->add_option("--world-size", batches_options.world_size, "Ranks")->check(ffyolo::kPositive);
  batches->add_option("--workers", batches_options.workers, "Loader threads (the batches do not depend on them)")
      ->check(ffyolo::kPositive);
  batches->add_option("--cache", batches_cache, "Read the pixel cache (built first if missing) instead of decoding")
      ->check(CLI::IsMember({"ram", "disk"}));
  batches->add_option("--limit", batches_limit, "At most this many batches");

  ffyolo::PixelCacheOptions cache_options;
  bool cache_for_val = false;
  std::string cache_augmentation = "yolov5";
  CLI::App* cache =
      app.add_subcommand("cache", "Decode and resize every image once into a pixel cache (yolo-train --cache uses it)");
  cache->add_option("dataset", path, "Packed dataset directory")->required();
  cache->add_option("--img,--imgsz,--img-size", cache_options.img_size, "Image size the cache is for")
      ->check(ffyolo::kPositive);
  cache->add_option("--split", cache_options.split, "Split (default: the training split, or with --val the validation split)");
  cache->add_flag("--val", cache_for_val, "For validation: val.py's resize (INTER_AREA when shrinking)");
  cache->add_option("--augmentation", cache_augmentation,
                    "Whose load_image: yolov5, or ultralytics8 (Ultralytics 8's sizes and INTER_LINEAR: the cache of "
                    "the loader's ultralytics8 mode, training and validation alike)");
  cache->add_option("-o,--output", cache_options.directory,
                    "Cache folder (default: DATA.ffr/cache/<split>-<img>[-val|-u8])");
  cache->add_flag("--verify", cache_options.verify, "Read an existing cache back, checking every CRC; rebuild what is damaged");
  cache->add_option("--workers", cache_options.threads, "Decoding threads (default: one per CPU)")
      ->check(ffyolo::kPositive);

  try {
    app.parse(argc, argv);
    if (cat->parsed() && indices.empty() && by_id < 0) throw CLI::RequiredError("index or --by-id");
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (info->parsed()) return Info(path, splits, json);
  if (batches->parsed()) {
    batches_options.training = !batches_val;
    return Batches(path, batches_options, batches_cache, batches_epoch, batches_limit);
  }
  if (cache->parsed()) {
    cache_options.training = !cache_for_val;
    const Status parsed = ffyolo::ParseAugmentation(cache_augmentation, &cache_options.augmentation);
    if (!parsed.ok()) return Fail(parsed);
    cache_options.instead = "build it on another disk (yolo-ffr cache -o DIR)";
    return Cache(path, cache_options);
  }
  if (check->parsed()) {
    verify.check_images = !no_images;
    return Verify(path, verify);
  }
  if (ls->parsed()) return List(path, split, limit);
  if (show->parsed()) {
    std::unique_ptr<ffyolo::Dataset> dataset;
    Status st = ffyolo::CheckOutputApart("-o", grid_path, {{"dataset", path}});
    if (st.ok()) st = ffyolo::CheckOutputFile("-o", grid_path, force_show, "--force");
    if (st.ok()) st = ffyolo::Dataset::Open(path, &dataset);
    if (st.ok()) st = ffyolo::RenderDatasetGrid(*dataset, show_options, grid_path);
    if (!st.ok()) return Fail(st);
    std::printf("%s\n", grid_path.c_str());
    return 0;
  }
  if (cat->parsed())
    return ForEachRecord(path, split, indices, by_id,
                         [](const ffyolo::Manifest& m, int64_t index, const ffyolo::RecordView& record,
                            bool exif_applied) {
                           std::fputs(ffyolo::FormatRecord(m, index, record, exif_applied).c_str(), stdout);
                           return Status::OK();
                         });
  if (Status st = ffyolo::CheckOutputApart("-o", out_dir, {{"dataset", path}}); !st.ok()) return Fail(st);
  // Every file the samples would write is checked before the first is written.
  std::vector<std::pair<int64_t, std::vector<std::string>>> planned;
  if (const int failed = ForEachRecord(path, split, indices, -1,
                                       [&](const ffyolo::Manifest&, int64_t index, const ffyolo::RecordView& record,
                                           bool) {
                                         planned.emplace_back(index, std::vector<std::string>());
                                         return ffyolo::ExtractedPaths(record, index, out_dir, &planned.back().second);
                                       });
      failed != 0)
    return failed;
  if (Status st = ffyolo::CheckExtractable(planned, force_extract); !st.ok()) return Fail(st);
  std::set<int64_t> extracted;
  return ForEachRecord(path, split, indices, -1,
                       [&](const ffyolo::Manifest& m, int64_t index, const ffyolo::RecordView& record,
                           bool exif_applied) {
                         if (!extracted.insert(index).second) return Status::OK();  // given twice
                         std::string image;
                         FFR_RETURN_IF_ERROR(
                             ffyolo::ExtractRecord(m, index, record, exif_applied, out_dir, force_extract, &image));
                         std::printf("%s\n", image.c_str());
                         return Status::OK();
                       });
}

}  // namespace

int main(int argc, char** argv) {
  return ffyolo::RunMain("yolo-ffr", [&] { return Main(argc, argv); });
}
