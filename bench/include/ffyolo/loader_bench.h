// What `yolo-bench loader` measures, in one run on one machine: the loader's
// samples/s, the TurboJPEG decode-only bound for the same images, and the
// baseline an Ultralytics user has today (one JPEG file per sample,
// cv::imread, mosaic on a 2s x 2s canvas, cv::warpAffine) with the same
// augmentations and thread count.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "ffr/status.h"
#include "ffyolo/dataset.h"

namespace ffyolo {

struct LoaderOptions;  // loader.h

struct LoaderBenchOptions {
  std::string split;        // "" = the dataset's default for training / validation
  bool validation = false;  // letterbox + rect batches instead of mosaic training samples
  int img_size = 640;
  int batch_size = 16;
  int workers = 1;
  int64_t samples = 0;      // samples to time (0: one epoch); one warm-up batch is not timed
  bool decode_less = true;
  // BenchLoader only: "ram" or "disk" reads the split's pixel cache (which
  // must be built: BuildPixelCache) through mmap or io_uring instead of decoding.
  std::string cache;
  std::string workdir;      // an existing directory for the baseline's own folder of small files ("" = the temporary directory)
};

// Items per wall second, and per CPU second of the whole process: on a shared
// host the second says what the work costs even when another tenant takes
// a core away for a while.
struct BenchResult {
  int64_t items = 0;  // samples, or decodes for the decode bound
  double seconds = 0;
  double cpu_seconds = 0;
  double rate() const { return seconds > 0 ? items / seconds : 0; }
  double cpu_rate() const { return cpu_seconds > 0 ? items / cpu_seconds : 0; }
};

// The loader BenchLoader measures.
ffr::Status BenchLoaderOptions(const Dataset& dataset, const LoaderBenchOptions& options, LoaderOptions* loader);

// The loader itself.
ffr::Status BenchLoader(const Dataset& dataset, const LoaderBenchOptions& options, BenchResult* result);

// What lets a measurement run beside the loader on spare CPUs (`yolo-bench
// loader --alongside`), so that both see the same machine: the measurement
// sets `ready` once it is set up and its clock starts, and then runs until
// `stop` is set (after the loader finishes).
struct Alongside {
  std::atomic<bool> ready{false};
  std::atomic<bool> stop{false};
};

// TurboJPEG decodes/s of the split's images (whole images, at the DCT scale
// the loader would use) on the calling thread; a mosaic sample costs 4
// decodes. Two seconds, or with `alongside` until told to stop; at least one
// pass over the split either way. CPU time is the thread's own.
ffr::Status BenchDecodeBound(const Dataset& dataset, const LoaderBenchOptions& options, Alongside* alongside,
                             BenchResult* result);

// The small-file baseline with `workers` threads: `samples` samples, or with
// `alongside` as many as it makes until told to stop. CPU time is its worker
// threads'. Needs OpenCV imgcodecs.
ffr::Status BenchSmallFileBaseline(const Dataset& dataset, const LoaderBenchOptions& options, Alongside* alongside,
                                   BenchResult* result);

}  // namespace ffyolo
