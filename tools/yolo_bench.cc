// yolo-bench: throughput measurements with their baselines in the same run.
//   yolo-bench loader --data X.ffr [--split S] --img 640 --batch B --workers N [--val]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include "ffyolo/cpus.h"
#include "ffyolo/dataset.h"
#include "ffyolo/loader_bench.h"

namespace {

// Runs the loader while `measure` fills *other on its own thread: the loader
// starts once the measurement is set up, and the measurement stops when the
// loader is done. The loader's CPU time is the process's less the measurement's.
using Measurement = std::function<ffr::Status(ffyolo::Alongside*, ffyolo::BenchResult*)>;
ffr::Status LoaderBeside(const ffyolo::Dataset& dataset, const ffyolo::LoaderBenchOptions& o,
                         ffyolo::BenchResult* ours, ffyolo::BenchResult* other, const Measurement& measure) {
  ffyolo::Alongside alongside;
  std::atomic<bool> returned{false};
  ffr::Status other_status;
  std::thread beside([&] {
    other_status = measure(&alongside, other);
    returned = true;
  });
  while (!alongside.ready && !returned) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ffr::Status s = returned ? ffr::Status::OK() : ffyolo::BenchLoader(dataset, o, ours);
  alongside.stop = true;
  beside.join();
  FFR_RETURN_IF_ERROR(other_status);
  FFR_RETURN_IF_ERROR(s);
  ours->cpu_seconds = std::max(0.0, ours->cpu_seconds - other->cpu_seconds);
  return ffr::Status::OK();
}

int Fail(const ffr::Status& s) {
  std::fprintf(stderr, "yolo-bench: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ffyolo benchmarks"};
  app.require_subcommand(1);
  CLI::App* loader = app.add_subcommand("loader", "Loader samples/s vs the decode-only bound and the small-file baseline");
  std::string data;
  ffyolo::LoaderBenchOptions o;
  bool no_baseline = false, full_decode = false, alongside = false;
  loader->add_option("--data", data, "Packed dataset (NAME.ffr)")->required();
  loader->add_option("--split", o.split, "Split (default: train*, or val* with --val)");
  loader->add_option("--img", o.img_size, "Image size");
  loader->add_option("--batch", o.batch_size, "Batch size");
  loader->add_option("--workers", o.workers, "Loader threads (and baseline threads)");
  loader->add_flag("--val", o.validation, "Validation samples (letterbox, rect batches) instead of mosaic");
  loader->add_option("--samples", o.samples, "Samples to time (default: one epoch)");
  loader->add_flag("--full-decode", full_decode, "Decode every JPEG whole and at full size (no DCT scaling, no mosaic region decodes)");
  loader->add_flag("--no-baseline", no_baseline, "Skip the small-file baseline");
  loader->add_flag("--alongside", alongside,
                   "Measure the decode bound, then the baseline, on spare CPUs while the loader runs (twice), "
                   "instead of after it: each pair then sees the same machine, which a shared host's drift would "
                   "otherwise come between. Needs CPUs for both: workers + 1, then 2 x workers");
  loader->add_option("--workdir", o.workdir, "Where the baseline writes its files (default: a temporary dir)");
  CLI11_PARSE(app, argc, argv);
  o.decode_less = !full_decode;

  std::unique_ptr<ffyolo::Dataset> dataset;
  ffr::Status s = ffyolo::Dataset::Open(data, &dataset);
  if (!s.ok()) return Fail(s);
  const char* kind = o.validation ? "validation (letterbox)" : "training (mosaic)";

  ffyolo::BenchResult ours, decode, base, ours_beside_base;
  if (alongside) {
    const int need = std::max(o.workers + 1, no_baseline ? 0 : 2 * o.workers);
    if (ffyolo::UsableCpus() < need)
      std::printf("warning: --alongside with %d workers wants %d CPUs, this process has %d: the pairs share CPUs\n",
                  o.workers, need, ffyolo::UsableCpus());
    s = LoaderBeside(*dataset, o, &ours, &decode, [&](ffyolo::Alongside* a, ffyolo::BenchResult* r) {
      return ffyolo::BenchDecodeBound(*dataset, o, a, r);
    });
  } else {
    s = ffyolo::BenchLoader(*dataset, o, &ours);
    if (s.ok()) s = ffyolo::BenchDecodeBound(*dataset, o, nullptr, &decode);
  }
  if (!s.ok()) return Fail(s);
  std::printf("loader: %.1f samples/s  %s, img %d, batch %d, %d workers (%.1f per worker, %.1f per CPU-second)\n",
              ours.rate(), kind, o.img_size, o.batch_size, o.workers, ours.rate() / o.workers, ours.cpu_rate());
  const double per_sample = o.validation ? 1.0 : 4.0;
  const double bound = decode.rate() / per_sample;
  const double cpu_bound = decode.cpu_rate() / per_sample;
  std::printf("decode bound: %.1f decodes/s on 1 thread%s%s -> %.1f samples/s per worker; loader at %.0f%% of it "
              "(per CPU-second: bound %.1f samples, loader at %.0f%%)\n",
              decode.rate(), o.decode_less ? " (DCT-scaled where the resize allows)" : "",
              alongside ? ", alongside the loader" : "", bound, 100.0 * ours.rate() / o.workers / bound,
              cpu_bound, 100.0 * ours.cpu_rate() / cpu_bound);
  if (!no_baseline) {
    if (alongside) {
      s = LoaderBeside(*dataset, o, &ours_beside_base, &base, [&](ffyolo::Alongside* a, ffyolo::BenchResult* r) {
        return ffyolo::BenchSmallFileBaseline(*dataset, o, a, r);
      });
    } else {
      o.samples = ours.items;
      ours_beside_base = ours;
      s = ffyolo::BenchSmallFileBaseline(*dataset, o, nullptr, &base);
    }
    if (s.IsNotSupported()) {
      std::printf("baseline: skipped (%s)\n", s.message().c_str());
    } else if (!s.ok()) {
      return Fail(s);
    } else {
      std::printf("baseline: %.1f samples/s  small files + cv::imread + %s, %d workers%s; loader %.2fx "
                  "(per CPU-second %.2fx)\n",
                  base.rate(), o.validation ? "letterbox" : "2s x 2s canvas mosaic + warpAffine", o.workers,
                  alongside ? ", alongside the loader's second run" : "", ours_beside_base.rate() / base.rate(),
                  ours_beside_base.cpu_rate() / base.cpu_rate());
    }
  }
  return 0;
}
