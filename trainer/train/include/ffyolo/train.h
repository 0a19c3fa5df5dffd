// Train: YOLOv5 v7.0's train.py in C++, in one process (CPU or one GPU) or as
// one rank of a data-parallel job (docs/distributed.md): model from its YAML, SGD with three parameter groups, warmup and a linear or
// cosine schedule, gradient accumulation to a nominal batch of 64, EMA,
// gradient clipping, AMP on CUDA, validation every epoch, checkpoints, and the
// run directory Ultralytics users know (runs/train/expN/ with weights/last.pt
// and best.pt, results.csv, results.png, hyp.yaml, opt.yaml, train_batch0.jpg).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ffr/env.h"
#include "ffr/status.h"
#include "ffyolo/dist_env.h"
#include "ffyolo/manifest.h"
#include "ffyolo/results.h"
#include "ffyolo/train_observer.h"

namespace ffyolo {

// The model of a run given neither --cfg nor --weights.
inline constexpr char kDefaultModelCfg[] = "yolov5s.yaml";

// The settings of the training step's variants (--channels-last, --sync-free-loss, --cuda-graph,
// --fused-bn-silu): "on", "off", or "auto": on with CUDA, where each makes the step faster (docs/gpu.md,
// "The default step"), off on the CPU, where none does.
inline const std::vector<std::string> kStepVariantSettings = {"auto", "on", "off"};
// Whether `setting` of `flag` is on for a run on CUDA or not; InvalidArgument naming the flag for another setting.
ffr::Status StepVariantOn(const char* flag, const std::string& setting, bool cuda, bool* on);

// The four settings as given, and what a run makes of them.
struct StepVariantSettings {
  std::string channels_last = "auto", sync_free_loss = "auto", cuda_graph = "auto", fused_bn_silu = "auto";
};
struct StepVariants {
  bool channels_last = false, sync_free_loss = false, cuda_graph = false, fused_bn_silu = false;
};
// The variants a run on CUDA (or not) trains with. `graph_refusal` says why this run cannot capture its
// step (--quad, SyncBN over several ranks), "" when it can: a --cuda-graph given "on" is then refused with
// it, before anything is made, and "auto" trains eagerly, `note` saying why. The graph needs the sync-free
// loss, so it turns it on; "off" given for the loss turns the graph off the same way.
ffr::Status ResolveStepVariants(const StepVariantSettings& settings, bool cuda, const std::string& graph_refusal,
                                StepVariants* variants, std::string* note);

// A setting a user chooses is also a row of the options table (train_option_table.h): its flag,
// its opt.yaml key and what --resume does with it.
struct TrainOptions {
  std::string data;                       // packed dataset (NAME.ffr)
  // Recorded by the trainer in opt.yaml, not flags: the dataset's absolute path and identity
  // (Dataset::ManifestCrc), so that --resume finds it from any folder and refuses another one.
  std::string dataset_path, dataset_crc;
  // Model YAML, or a shipped model's name; "": the YAML in `weights`, else kDefaultModelCfg.
  std::string cfg;
  std::string hyp = "hyp.scratch-low.yaml";
  // Initial weights, optional: an ffyolo checkpoint or imported Ultralytics weights (checkpoint.h).
  std::string weights;
  int img_size = 640;
  int batch_size = 16;                    // total over all ranks
  int epochs = 100;
  int workers = 8;                        // loader threads per rank
  std::string device;                     // --device (device.h): "" the first GPU if any, "cpu", "0", "0,1"
  std::string project = "runs/train";
  std::string name = "exp";
  bool exist_ok = false;
  uint64_t seed = 0;
  bool cos_lr = false;
  std::string optimizer = "SGD";          // --optimizer: SGD, Adam or AdamW (train_step.h MakeOptimizer)
  bool multi_scale = false;               // --multi-scale: each batch resized to 0.5-1.5x img_size (multi_scale.h)
  double label_smoothing = 0.0;
  int patience = 100;
  int save_period = -1;
  bool noval = false;                     // validate only the final epoch
  bool nosave = false;                    // save only the final checkpoint
  bool noautoanchor = false;              // keep the model's anchors whatever their fit (AutoAnchor off)
  std::vector<int> freeze{0};             // --freeze (model.h FreezeLayers): {0} trains every layer
  // --cache: "ram" or "disk" train (and val) from the dataset's pixel caches
  // (pixel_cache.h), built first when missing or stale; "ram" maps them, so
  // the ranks of a machine share one copy in the page cache. "": decode JPEGs.
  std::string cache;
  std::string train_split, val_split;     // "" = train* / val* (the training split when there is no other)
  // train.py's data flags: --rect batches in aspect-ratio order without mosaic (one rank),
  // --image-weights class-weighted sampling each epoch, --single-cls one class 'item', --quad collate_fn4.
  bool rect = false;
  bool image_weights = false;
  bool single_cls = false;
  bool quad = false;
  int threads = 0;                        // torch intra-op threads (0: this rank's share of the usable CPUs)
  // The step's variants, each "auto" (on with CUDA), "on" or "off" (StepVariantOn):
  // the loss without host syncs (ComputeLoss's sync_free, loss.h): the same loss, so a step can run ahead of the GPU;
  std::string sync_free_loss = "auto";
  // weights and batches in channels-last (NHWC) memory;
  std::string channels_last = "auto";
  // the step captured as a CUDA graph and replayed (captured_step.h), with the sync-free loss; batches the
  // graph cannot take (another shape, accumulated gradients) train eagerly;
  std::string cuda_graph = "auto";
  // every Conv's BatchNorm and SiLU as one fused function in training (bn_silu.h): the same step with two
  // passes over each activation fewer.
  std::string fused_bn_silu = "auto";
  // Data parallelism: this process is rank dist.rank of a job (Gloo on CPU, NCCL on CUDA). Rank 0
  // validates, logs and writes the run directory; every rank reads its own shard of each epoch.
  bool distributed = false;
  DistEnv dist;
  bool sync_bn = false;                   // BatchNorm statistics over the whole job's batch
  bool bind_numa = false;                 // the process is bound to its NUMA node's CPUs (it owns them)
  int dist_timeout_s = 1800;              // longest wait in a collective (rank 0 validates meanwhile)
  // Resume: the last.pt to continue ("" = not resuming). Its saved options win.
  std::string resume;
  // Every file of the run directory is written through it (tests inject faults); not saved in opt.yaml.
  ffr::Env* env = ffr::Env::Default();

  // opt.yaml: the saved rows of the options table (train_option_table.h), which decide a run.
  std::string ToYaml() const;
  static ffr::Status FromYaml(const std::string& yaml, TrainOptions* out);
};

struct TrainSummary {
  std::string save_dir;
  int64_t epochs_run = 0;
  double best_fitness = 0;
  std::vector<EpochResult> results;
  double final_map50 = 0, final_map = 0;  // best.pt's numbers (COCO eval at IoU 0.65)
  std::array<double, 12> final_coco{};
};

// The most recent runs/train/*/weights/last.pt under `project`, for --resume without a path.
ffr::Status FindLastCheckpoint(const std::string& project, std::string* path);

// "runs/train/exp", then exp2, exp3, ... (Ultralytics' increment_path).
std::string IncrementPath(const std::string& path, bool exist_ok);

// The NMS IoU threshold of the final validation of best.pt: 0.65 on COCO, else
// 0.60, as train.py (`0.65 if is_coco else 0.60`, where is_coco means a val
// path ending in coco/val2017.txt): here a dataset packed from a source folder
// named coco, validated on its val2017 split.
double FinalValidationIouThreshold(const Manifest& manifest, const std::string& val_split);

// InvalidArgument when the run directory `run_dir` is, holds or lies inside
// the packed dataset `data`: the run would write its files into the dataset.
ffr::Status CheckRunApartFromDataset(const std::string& run_dir, const std::string& data);

// Runs a Trainer (trainer.h) through all its stages. Returns Aborted when a
// stop was requested: last.pt then holds the exact position (after the last
// optimizer step) and --resume continues from it. `observer` may be null.
ffr::Status Train(const TrainOptions& options, TrainObserver* observer, TrainSummary* summary);

// Asks a running Train() to stop at its next optimizer step (or epoch end) and
// save a resumable last.pt. Async-signal-safe: yolo-train calls it on SIGTERM,
// SIGUSR1 and a first SIGINT.
void RequestTrainingStop();
bool TrainingStopRequested();
void ClearTrainingStop();

// The layer table and summary line of a model YAML (or shipped model name) at nc classes.
ffr::Status ModelSummaryText(const std::string& cfg, int64_t nc, int img_size, std::string* text);

}  // namespace ffyolo
