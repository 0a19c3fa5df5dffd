// yolo-bench: throughput measurements with their baselines in the same run.
//   yolo-bench loader --data X.ffr [--split S] --img 640 --batch B --workers N [--val] [--cache ram|disk]
//   yolo-bench train --cfg yolov5s --img 640 --batch 64 --device 0 [--data X.ffr --workers 15] [--profile P.md]
//   yolo-bench allreduce --cfg yolov5s --device 0
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>

#include "ffyolo/cli.h"
#include "ffyolo/cpus.h"
#include "ffyolo/dataset.h"
#include "ffyolo/flag_checks.h"
#include "ffyolo/loader.h"
#include "ffyolo/loader_bench.h"
#include "ffyolo/pixel_cache.h"
#if FFYOLO_WITH_TRAINER
#include "ffyolo/train.h"
#include "ffyolo/train_bench.h"
#endif

namespace {

using ffyolo::kNonNegative;
using ffyolo::kPositive;

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

#if FFYOLO_WITH_TRAINER
constexpr int kProfiledSteps = 3;
constexpr size_t kProfiledKernelsShown = 40;

// One line of key=value pairs, so that scripts (gpu-run.sh) can read it back.
// With a profile path, the profiled steps' kernels go there as Markdown.
int RunTrain(const ffyolo::TrainBenchOptions& o, const std::string& profile_path) {
  ffyolo::TrainBenchResult r;
  const ffr::Status s = ffyolo::BenchTraining(o, &r);
  if (!s.ok()) return Fail(s);
  std::printf("train: %s cfg=%s img=%d batch=%d device=%s amp=%d steps=%d images_per_s=%.1f", o.data.empty() ? "ceiling" : "pipeline",
              o.cfg.c_str(), o.img_size, o.batch_size, r.device.c_str(), r.amp ? 1 : 0, o.steps,
              r.images_per_second());
  if (!o.data.empty())
    std::printf(" workers=%d data_wait_share=%.3f loader_samples_per_cpu_s=%.1f", o.workers, r.data_wait_share(),
                r.loader_samples_per_cpu_second());
  const ffyolo::StepVariants& v = r.variants;
  std::printf(" channels_last=%d sync_free_loss=%d cuda_graph=%d fused_bn_silu=%d gpu_mem_gb=%.2f loss=%.4g",
              v.channels_last ? 1 : 0, v.sync_free_loss ? 1 : 0, v.cuda_graph ? 1 : 0, v.fused_bn_silu ? 1 : 0,
              r.peak_memory_gb, r.last_loss);
  if (o.no_step) std::printf(" no_step=1");
  for (const auto& [part, seconds] : r.part_seconds)
    std::printf(" ms_%s=%.2f", part.c_str(), 1e3 * seconds / o.steps);
  std::printf("\n");
  if (!profile_path.empty()) {
    const std::string table = ffyolo::KernelProfileMarkdown(r.kernels, r.profiled, o.profile_steps, kProfiledKernelsShown);
    std::FILE* f = std::fopen(profile_path.c_str(), "w");
    if (!f || std::fputs(table.c_str(), f) < 0 || std::fclose(f) != 0)
      return Fail(ffr::Status::IOError("yolo-bench train: cannot write the profile " + profile_path));
    std::printf("profile: %s\n", profile_path.c_str());
  }
  return 0;
}

int RunAllReduce(const ffyolo::TrainBenchOptions& o) {
  ffyolo::AllReduceBenchResult r;
  const ffr::Status s = ffyolo::BenchGradientAllReduce(o, &r);
  if (!s.ok()) return Fail(s);
  std::printf("allreduce: backend=%s cfg=%s ranks=1 init_s=%.3f bytes=%lld ms_per_all_reduce=%.3f\n",
              r.backend.c_str(), o.cfg.c_str(), r.init_seconds, static_cast<long long>(r.bytes),
              1e3 * r.seconds_per_all_reduce);
  return 0;
}
#endif

// The loader from the pixel cache, then from JPEGs, in one run.
int CompareCache(const ffyolo::Dataset& dataset, ffyolo::LoaderBenchOptions o, const char* kind) {
  ffyolo::LoaderOptions lo;
  ffr::Status s = ffyolo::BenchLoaderOptions(dataset, o, &lo);
  ffyolo::PixelCacheSummary summary;
  if (s.ok()) s = ffyolo::BuildPixelCache(dataset, ffyolo::PixelCacheFor(lo), &summary);
  if (!s.ok()) return Fail(s);
  ffyolo::BenchResult cached, jpeg;
  s = ffyolo::BenchLoader(dataset, o, &cached);
  const std::string cache = o.cache;
  o.cache.clear();
  if (s.ok()) s = ffyolo::BenchLoader(dataset, o, &jpeg);
  if (!s.ok()) return Fail(s);
  std::printf("cache (%s, %s, %.1f MB): %.1f samples/s  %s, img %d, batch %d, %d workers (%.1f per worker, %.1f per "
              "CPU-second)\n",
              cache.c_str(), summary.directory.c_str(), summary.bytes / 1e6, cached.rate(), kind, o.img_size,
              o.batch_size, o.workers, cached.rate() / o.workers, cached.cpu_rate());
  std::printf("jpeg%s: %.1f samples/s (%.1f per worker, %.1f per CPU-second); cache %.2fx (per CPU-second %.2fx)\n",
              o.decode_less ? "" : " (--full-decode)", jpeg.rate(), jpeg.rate() / o.workers, jpeg.cpu_rate(),
              cached.rate() / jpeg.rate(), cached.cpu_rate() / jpeg.cpu_rate());
  return 0;
}

int Main(int argc, char** argv) {
  CLI::App app{"ffyolo benchmarks"};
  app.require_subcommand(1);
  CLI::App* loader = app.add_subcommand("loader", "Loader samples/s vs the decode-only bound and the small-file baseline");
  std::string data;
  ffyolo::LoaderBenchOptions o;
  bool no_baseline = false, full_decode = false, alongside = false;
  loader->add_option("--data", data, "Packed dataset (NAME.ffr)")->required();
  loader->add_option("--split", o.split, "Split (default: train*, or val* with --val)");
  loader->add_option("--img", o.img_size, "Image size")->check(kPositive);
  loader->add_option("--batch", o.batch_size, "Batch size")->check(kPositive);
  loader->add_option("--workers", o.workers, "Loader threads (and baseline threads)")->check(kPositive);
  loader->add_flag("--val", o.validation, "Validation samples (letterbox, rect batches) instead of mosaic");
  loader->add_option("--samples", o.samples, "Samples to time (0, the default: one epoch)")
      ->check(kNonNegative);
  loader->add_option("--cache", o.cache,
                     "Also time the loader on the split's pixel cache (built first if needed, untimed), side by side "
                     "with the JPEG loader")
      ->check(CLI::IsMember({"ram", "disk"}));
  loader->add_flag("--full-decode", full_decode, "Decode every JPEG whole and at full size (no DCT scaling, no mosaic region decodes)");
  loader->add_flag("--no-baseline", no_baseline, "Skip the small-file baseline");
  loader->add_flag("--alongside", alongside,
                   "Measure the decode bound, then the baseline, on spare CPUs while the loader runs (twice), "
                   "instead of after it: each pair then sees the same machine, which a shared host's drift would "
                   "otherwise come between. Needs CPUs for both: workers + 1, then 2 x workers");
  loader->add_option("--workdir", o.workdir, "An existing directory outside the dataset in which the baseline writes its files, in a folder of its own that it removes (default: the temporary directory)");
#if FFYOLO_WITH_TRAINER
  ffyolo::TrainBenchOptions t;
  bool no_amp = false;
  CLI::App* train = app.add_subcommand(
      "train", "Training images/s: the step on a batch already on the device (the ceiling), or fed by the loader");
  CLI::App* allreduce = app.add_subcommand("allreduce", "One rank's c10d set-up and all-reduce of the gradients");
  for (CLI::App* sub : {train, allreduce}) {
    sub->add_option("--cfg", t.cfg, "Model (a shipped name or a YAML)");
    sub->add_option("--device", t.device, "cuda device, i.e. 0 or cpu (default: the first GPU, else the CPU)");
    sub->add_option("--steps", t.steps, "Timed steps")->check(kPositive);
  }
  train->add_option("--img", t.img_size, "Image size")->check(kPositive);
  train->add_option("--batch", t.batch_size, "Batch size")->check(kPositive);
  train->add_option("--warmup", t.warmup_steps, "Untimed steps first")->check(kNonNegative);
  train->add_option("--data", t.data, "Packed dataset: feed the steps through the loader (default: one random batch)");
  train->add_option("--workers", t.workers, "Loader threads")->check(kPositive);
  train->add_flag("--parts", t.parts, "Also time each part of the step (the ceiling; the device drained after each)");
  train->add_option("--cache", t.cache, "Read the pixel cache (ram or disk; built first, not timed) instead of decoding")
      ->check(CLI::IsMember({"ram", "disk"}));
  train->add_flag("--no-amp", no_amp, "FP32 on CUDA too");
  const std::pair<const char*, std::string ffyolo::StepVariantSettings::*> variants[] = {
      {"--channels-last", &ffyolo::StepVariantSettings::channels_last},
      {"--sync-free-loss", &ffyolo::StepVariantSettings::sync_free_loss},
      {"--cuda-graph", &ffyolo::StepVariantSettings::cuda_graph},
      {"--fused-bn-silu", &ffyolo::StepVariantSettings::fused_bn_silu}};
  for (const auto& [flag, setting] : variants)
    train->add_option(flag, t.variants.*setting,
                      std::string("yolo-train's ") + flag + ": auto (the default: on CUDA), on (the flag alone), off")
        ->expected(0, 1)
        ->default_str("on")
        ->check(CLI::IsMember(ffyolo::kStepVariantSettings));
  train->add_flag("--no-step", t.no_step,
                  "With --data: the loader and the copies to the device alone, no training step (ffyolo.torch.Loader's "
                  "work)");
  std::string profile;
  train->add_option("--profile", profile,
                    "After the timed steps, profile " + std::to_string(kProfiledSteps) +
                        " more and write their kernels' time, by kind and the top " +
                        std::to_string(kProfiledKernelsShown) + ", to this Markdown file (the ceiling)");
#endif
  CLI11_PARSE(app, argc, argv);
#if FFYOLO_WITH_TRAINER
  t.amp = !no_amp;
  if (!profile.empty()) t.profile_steps = kProfiledSteps;
  if (train->parsed()) return RunTrain(t, profile);
  if (allreduce->parsed()) return RunAllReduce(t);
#endif
  o.decode_less = !full_decode;

  std::unique_ptr<ffyolo::Dataset> dataset;
  ffr::Status s = ffyolo::Dataset::Open(data, &dataset);
  if (!s.ok()) return Fail(s);
  const char* kind = o.validation ? "validation (letterbox)" : "training (mosaic)";
  if (!o.cache.empty()) return CompareCache(*dataset, o, kind);

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

}  // namespace

int main(int argc, char** argv) {
  return ffyolo::RunMain("yolo-bench", [&] { return Main(argc, argv); });
}
