// What `yolo-bench train` and `yolo-bench allreduce` measure: the training
// step's ceiling on a batch already on the device, the same step fed by the
// loader (the real pipeline), and the gradient all-reduce of one rank. Each
// step is the Trainer's own (train_step.h): what is measured is what trains.
// Every step is an optimizer step, as the Trainer's are from --batch 64 (the
// nominal batch) up; below it the Trainer accumulates, which this does not.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ffr/status.h"
#include "ffyolo/kernel_profile.h"
#include "ffyolo/train.h"

namespace ffyolo {

struct TrainBenchOptions {
  std::string cfg = "yolov5s";  // a shipped model name or a YAML path
  int64_t nc = 80;              // classes (the dataset's when `data` is set)
  int img_size = 640;
  int batch_size = 64;
  std::string device;           // as --device ("" = the first GPU, else the CPU)
  bool amp = true;              // autocast on CUDA (never on the CPU)
  int warmup_steps = 10;        // not timed: cuDNN's search, the allocator, the loader's first batches
  int steps = 50;               // timed
  // "": the ceiling, one batch of random pixels and boxes made on the device
  // once. A packed dataset: the real pipeline, its training split through the
  // loader (mosaic 640 with the default hyp) and the side-stream copies.
  std::string data;
  int workers = 8;              // loader threads
  // "ram" or "disk": the loader reads the pixel cache (built first if needed,
  // not timed) instead of decoding, as yolo-train --cache. "": it decodes.
  std::string cache;
  std::string cache_dir;        // "" = the cache's default folder in the dataset
  // The step's variants as yolo-train's flags set them (train.h): channels-last memory, the sync-free
  // loss, the CUDA graph, BatchNorm and SiLU fused; each "auto" (on CUDA), "on" or "off".
  StepVariantSettings variants;
  // With `data`: the loader and the copies to the device alone, no training step (what the Python
  // package's ffyolo.torch.Loader does, for comparing the two).
  bool no_step = false;
  // The ceiling only: time each part of the step too, the device drained after
  // each (so the steps take longer than without: read the shares, not the sum).
  bool parts = false;
  // The ceiling only: after the timed steps, this many more under the
  // profiler (Kineto: CUDA kernels on a GPU, operators on the CPU).
  int profile_steps = 0;
};

struct TrainBenchResult {
  std::string device;             // "cuda:0", "cpu"
  bool amp = false;
  StepVariants variants;          // the variants the step ran with
  int64_t images = 0;             // trained in the timed steps
  double seconds = 0;             // wall time of the timed steps, the device drained at both ends
  double data_wait_seconds = 0;   // of which the training thread waited for the loader
  double loader_cpu_seconds = 0;  // CPU time of the process outside the training thread (the loader's workers)
  double peak_memory_gb = 0;      // CUDA memory reserved at the end (torch.cuda.memory_reserved)
  double last_loss = 0;           // the last timed step's loss (the model is seeded: repeatable on the CPU)
  // With `parts`: each part of the step (TrainStepParts::after_part's names) and its seconds over the timed steps.
  std::vector<std::pair<std::string, double>> part_seconds;
  // With `profile_steps`: the device's kernels over those steps (the CPU's operators without a GPU).
  std::vector<KernelTime> kernels;
  std::string profiled;  // what `kernels` are
  double images_per_second() const { return seconds > 0 ? images / seconds : 0; }
  double data_wait_share() const { return seconds > 0 ? data_wait_seconds / seconds : 0; }
  double loader_samples_per_cpu_second() const { return loader_cpu_seconds > 0 ? images / loader_cpu_seconds : 0; }
};

ffr::Status BenchTraining(const TrainBenchOptions& options, TrainBenchResult* result);

struct AllReduceBenchResult {
  std::string backend;             // "nccl" on a GPU, "gloo" on the CPU
  double init_seconds = 0;         // rendezvous and process group creation
  int64_t bytes = 0;               // the model's gradients
  double seconds_per_all_reduce = 0;
};

// One rank on this machine: joins a job of one (c10d over a local TCPStore),
// then sums a buffer the size of `options.cfg`'s gradients `options.steps`
// times in GradientSync's 25 MB buckets (all started, then waited for).
ffr::Status BenchGradientAllReduce(const TrainBenchOptions& options, AllReduceBenchResult* result);

}  // namespace ffyolo
