#include "ffyolo/loader_bench.h"
#include "ffyolo/pixel_cache.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <numeric>
#include <thread>

#include <opencv2/imgproc.hpp>
#ifdef FFYOLO_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif

#include "ffr/env.h"
#include "ffyolo/boxes.h"
#include "ffyolo/hyp.h"
#include "ffyolo/hsv.h"
#include "ffyolo/image_decoder.h"
#include "ffyolo/letterbox.h"
#include "ffyolo/loader.h"
#include "ffyolo/mosaic.h"
#include "ffyolo/output/path_overlap.h"
#include "ffyolo/perspective.h"
#include "ffyolo/planes.h"
#include "ffyolo/random.h"
#include "cpu_clock.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// Wall time and CPU time (of the process, or of the calling thread) from Start() to Stop().
class Stopwatch {
 public:
  explicit Stopwatch(clockid_t cpu_clock = CLOCK_PROCESS_CPUTIME_ID) : cpu_clock_(cpu_clock) {}
  void Start() {
    wall_ = Clock::now();
    cpu_ = CpuSeconds(cpu_clock_);
  }
  double Seconds() const { return ffyolo::Seconds(wall_); }
  void Stop(BenchResult* result) const {
    result->seconds = Seconds();
    result->cpu_seconds = CpuSeconds(cpu_clock_) - cpu_;
  }

 private:
  const clockid_t cpu_clock_;
  Clock::time_point wall_;
  double cpu_ = 0;
};

Status ResolveSplit(const Dataset& dataset, const LoaderBenchOptions& o, std::string* split) {
  *split = o.split;
  return dataset.ResolveSplit(!o.validation, split);
}

// Every record of the split, read once into memory (not timed).
Status ReadAllRecords(const Dataset& dataset, const std::string& split, std::vector<std::string>* records) {
  std::unique_ptr<ffr::Reader> reader;
  FFR_RETURN_IF_ERROR(dataset.OpenReader(split, ffr::ReaderOptions(), &reader));
  ffr::ReadBuffer buf;
  records->clear();
  for (int64_t i = 0; i < reader->size(); ++i) {
    ffr::Sample s;
    FFR_RETURN_IF_ERROR(reader->Read(i, &buf, &s));
    records->emplace_back(reinterpret_cast<const char*>(s.data), s.size);
  }
  return Status::OK();
}

}  // namespace

Status BenchLoaderOptions(const Dataset& dataset, const LoaderBenchOptions& o, LoaderOptions* lo) {
  *lo = LoaderOptions();
  FFR_RETURN_IF_ERROR(ResolveSplit(dataset, o, &lo->split));
  lo->training = !o.validation;
  lo->img_size = o.img_size;
  lo->batch_size = o.batch_size;
  lo->workers = o.workers;
  lo->decode_less = o.decode_less;
  lo->pixel_cache = !o.cache.empty();
  return lo->pixel_cache ? PixelCacheBackend(o.cache, &lo->reader.backend) : Status::OK();
}

Status BenchLoader(const Dataset& dataset, const LoaderBenchOptions& o, BenchResult* result) {
  LoaderOptions lo;
  FFR_RETURN_IF_ERROR(BenchLoaderOptions(dataset, o, &lo));
  std::unique_ptr<Loader> loader;
  FFR_RETURN_IF_ERROR(Loader::Open(dataset, lo, &loader));
  const int64_t want = o.samples > 0 ? o.samples : loader->samples_per_epoch();
  int64_t epoch = 0, done = 0;
  bool warm = false;
  Stopwatch watch;
  FFR_RETURN_IF_ERROR(loader->Start(epoch));
  while (done < want) {
    const Batch* b = nullptr;
    FFR_RETURN_IF_ERROR(loader->Next(&b));
    if (!b) {
      FFR_RETURN_IF_ERROR(loader->Start(++epoch));
      continue;
    }
    if (!warm) {  // the first batch pays for thread start-up and first allocations
      warm = true;
      watch.Start();
    } else {
      done += b->size;
    }
    loader->Release(b);
  }
  result->items = done;
  watch.Stop(result);
  return Status::OK();
}

Status BenchDecodeBound(const Dataset& dataset, const LoaderBenchOptions& o, Alongside* alongside,
                        BenchResult* result) {
  std::string split;
  FFR_RETURN_IF_ERROR(ResolveSplit(dataset, o, &split));
  std::vector<std::string> records;
  FFR_RETURN_IF_ERROR(ReadAllRecords(dataset, split, &records));
  ImageDecoder decoder;
  Stopwatch watch(CLOCK_THREAD_CPUTIME_ID);
  watch.Start();
  if (alongside != nullptr) alongside->ready = true;
  int64_t decodes = 0;
  const auto more = [&] {
    if (decodes < static_cast<int64_t>(records.size())) return true;
    return alongside != nullptr ? !alongside->stop.load() : watch.Seconds() < 2.0;
  };
  for (size_t i = 0; more(); ++i) {
    const std::string& r = records[i % records.size()];
    const std::string sample = dataset.split_dir(split) + " sample " + std::to_string(i % records.size());
    RecordView v;
    FFR_RETURN_IF_ERROR(RecordView::Parse(reinterpret_cast<const uint8_t*>(r.data()), r.size(), sample, &v));
    const cv::Size target = LoadResizeSize(static_cast<int>(v.width()), static_cast<int>(v.height()), o.img_size);
    cv::Mat img;
    int denominator = 1;
    DecodeOptions decode;
    if (o.decode_less) decode.min_w = target.width, decode.min_h = target.height;
    FFR_RETURN_IF_ERROR(decoder.Decode(v.image_data(), v.image_size(), v.encoding(),
                                       sample + " (" + std::string(v.file_name()) + ")", decode, &img, &denominator));
    ++decodes;
  }
  result->items = decodes;
  watch.Stop(result);
  return Status::OK();
}

Status BenchSmallFileBaseline(const Dataset& dataset, const LoaderBenchOptions& o, Alongside* alongside,
                              BenchResult* result) {
#ifndef FFYOLO_HAVE_IMGCODECS
  return Status::NotSupported("the small-file baseline needs OpenCV imgcodecs (cv::imread)");
#else
  std::string split;
  FFR_RETURN_IF_ERROR(ResolveSplit(dataset, o, &split));
  std::vector<std::string> records;
  FFR_RETURN_IF_ERROR(ReadAllRecords(dataset, split, &records));
  // One JPEG file per sample, as a COCO tree holds them.
  // Always a folder of its own, removed afterwards: the user's files in
  // --workdir (or the dataset's) must never be overwritten or left beside.
  std::error_code ec;
  const fs::path temp = fs::temp_directory_path(ec);
  const std::string parent = o.workdir.empty() ? (ec ? fs::path("/tmp") : temp).string() : o.workdir;
  if (!fs::is_directory(parent, ec))
    return Status::IOError(parent + ": cannot hold the baseline's files: not an existing directory");
  if (PlaceWithin(parent, dataset.path()))
    return Status::InvalidArgument(parent + ": cannot hold the baseline's files: it lies inside the dataset " +
                                   dataset.path());
  const std::string dir = parent + "/yolo-bench-files." + std::to_string(::getpid());
  if (fs::create_directory(dir, ec); ec)
    return Status::IOError(dir + ": cannot create the baseline's work directory: " + ec.message());
  struct RemoveOnReturn {
    std::string dir;
    ~RemoveOnReturn() { ffr::Env::Default()->RemoveTree(dir); }
  } remove_on_return{dir};
  std::vector<std::string> files;
  std::vector<std::vector<Box>> labels;
  for (size_t i = 0; i < records.size(); ++i) {
    RecordView v;
    FFR_RETURN_IF_ERROR(
        RecordView::Parse(reinterpret_cast<const uint8_t*>(records[i].data()), records[i].size(), split, &v));
    files.push_back(dir + "/" + std::to_string(i) + ".jpg");
    const Status written = ffr::WriteFileAtomically(
        ffr::Env::Default(), files.back(),
        std::string(reinterpret_cast<const char*>(v.image_data()), v.image_size()));
    if (!written.ok())
      return Status::IOError(dir + ": cannot write the baseline's files there: " + written.message());
    std::vector<Box> boxes;
    for (const Box& b : v.boxes())
      if (!b.iscrowd) boxes.push_back(b);
    labels.push_back(std::move(boxes));
  }
  records.clear();

  const int s = o.img_size;
  const Hyp hyp;
  const int64_t want = o.samples > 0 ? o.samples : static_cast<int64_t>(files.size());
  std::atomic<int64_t> next{0}, done{0};
  const int workers = std::max(1, o.workers);
  std::vector<double> cpu_seconds(workers, 0.0);  // per worker thread
  std::atomic<bool> failed{false};
  const auto more = [&](int64_t p) { return alongside != nullptr ? !alongside->stop.load() : p < want; };
  auto worker = [&](int t) {
    const double cpu_start = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
    std::vector<uint8_t> out(static_cast<size_t>(3) * 2 * s * 2 * s);
    cv::Mat canvas(2 * s, 2 * s, CV_8UC3), img(s, s, CV_8UC3);
    std::array<cv::Mat, 4> tiles;
    for (int64_t p; more(p = next.fetch_add(1)); ++done) {
      SampleRandom rng({7, static_cast<uint64_t>(p)});
      const int64_t index = p % static_cast<int64_t>(files.size());
      std::vector<PixelBox> boxes;
      if (!o.validation) {
        const int yc = static_cast<int>(rng.Uniform(s / 2.0, 1.5 * s));
        const int xc = static_cast<int>(rng.Uniform(s / 2.0, 1.5 * s));
        int64_t idx[4] = {index, 0, 0, 0};
        for (int k = 1; k < 4; ++k) idx[k] = static_cast<int64_t>(rng.Below(files.size()));
        std::array<cv::Size, 4> sizes;
        for (int k = 0; k < 4; ++k) {
          cv::Mat im = cv::imread(files[idx[k]], cv::IMREAD_COLOR);
          if (im.empty()) {
            failed = true;
            return;
          }
          const cv::Size t = LoadResizeSize(im.cols, im.rows, s);
          if (t != im.size()) cv::resize(im, im, t, 0, 0, cv::INTER_LINEAR);
          tiles[k] = im;
          sizes[k] = im.size();
        }
        const auto plan = PlanMosaic(sizes, s, xc, yc);
        for (int k = 0; k < 4; ++k)
          AppendPixelBoxes(labels[idx[k]], sizes[k].width, sizes[k].height, plan[k].padw(), plan[k].padh(), &boxes);
        double scale = 1;
        PerspectiveHyp ph;
        const cv::Matx33d m = DrawPerspective(&rng, ph, 2 * s, 2 * s, s, s, &scale);
        WarpMosaicWithCanvas(tiles, plan, s, m, &canvas, &img);
        TransformBoxes(m, scale, s, s, &boxes);
        ApplyHsv(BuildHsvLuts(DrawHsvGains(&rng, hyp.hsv_h, hyp.hsv_s, hyp.hsv_v)), &img);
        if (rng.Uniform() < hyp.fliplr) cv::flip(img, img, 1);
        WriteRgbPlanes(img, out.data());
      } else {
        cv::Mat im = cv::imread(files[index], cv::IMREAD_COLOR);
        if (im.empty()) {
          failed = true;
          return;
        }
        const cv::Size t = LoadResizeSize(im.cols, im.rows, s);
        if (t != im.size())
          cv::resize(im, im, t, 0, 0, LoadResizeInterpolation(false, im.cols, im.rows, s));
        const LetterboxPlan lb = PlanLetterbox(im.cols, im.rows, s, s, false);
        cv::Mat boxed(s, s, CV_8UC3);
        ApplyLetterbox(im, lb, &boxed);
        AppendPixelBoxes(labels[index], lb.ratio * im.cols, lb.ratio * im.rows, lb.dw, lb.dh, &boxes);
        WriteRgbPlanes(boxed, out.data());
      }
      ToNormalized(boxes, s, s);
    }
    cpu_seconds[t] = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
  };
  Stopwatch watch;
  watch.Start();
  if (alongside != nullptr) alongside->ready = true;
  std::vector<std::thread> pool;
  for (int t = 0; t < workers; ++t) pool.emplace_back(worker, t);
  for (auto& t : pool) t.join();
  watch.Stop(result);
  result->items = done;
  result->cpu_seconds = std::accumulate(cpu_seconds.begin(), cpu_seconds.end(), 0.0);
  if (failed) return Status::IOError(dir + ": cv::imread failed on a baseline file");
  return Status::OK();
#endif
}

}  // namespace ffyolo
