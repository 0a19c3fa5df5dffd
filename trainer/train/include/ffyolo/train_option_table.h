// The options table: each TrainOptions setting a user chooses is declared
// once, here, with its yolo-train flag, its help, its opt.yaml key and what
// --resume does with it. yolo-train registers its flags from it, ToYaml and
// FromYaml write and read opt.yaml by it, and a resume merges the options it
// was given with the run's by it (ResumedOptions).
//
// The fields that are no row (resume, distributed, dist, dist_timeout_s, env)
// say how this process runs, not what the run computes: a resume keeps them.
#pragma once

#include <string>
#include <vector>

#include "ffr/status.h"
#include "ffyolo/train.h"

namespace ffyolo {

// What --resume does with an option given beside it.
enum class OnResume {
  kRestored,        // the run's opt.yaml decides; a value given is dropped (the run continues as it was)
  kRefusedIfOther,  // the run's opt.yaml decides what it trains on; another value given is refused
  kGivenWins,       // a value given wins (--data: a moved copy of the run's dataset, checked by its identity)
  kLaunch,          // not saved: this launch decides (where its ranks run)
};

// The check a flag's value passes (yolo-train maps it to its CLI11 validator).
enum class FlagCheck { kNone, kNonNegative, kUnitInterval };

// Where --help lists a flag: kParallel after the launcher's own flags (launch_policy.h).
enum class FlagGroup { kRun, kParallel };

struct TrainOptionSpec {
  const char* flags;  // CLI11's names ("--img,--imgsz,--img-size"), the first the one messages name; "": no flag
  const char* help;
  const char* key;    // opt.yaml's, train.py's name; nullptr: not saved
  // The key's place in opt.yaml, whose order (train.py's) is not --help's: a new key takes the next slot.
  int yaml_slot;
  OnResume on_resume;
  FlagGroup group = FlagGroup::kRun;
  std::vector<std::string> choices = {};  // the values the flag takes; empty: any
  FlagCheck check = FlagCheck::kNone;
  const char* implicit = nullptr;         // the value of the flag given without one; nullptr: it needs one
};

// Calls visit(spec, &TrainOptions::field) for every row, in --help's order.
template <class Visit>
void VisitTrainOptions(Visit&& visit) {
  using O = TrainOptions;
  using S = TrainOptionSpec;
  constexpr OnResume kRestored = OnResume::kRestored;
  visit(S{"--data", "Packed dataset (NAME.ffr)", "data", 0, OnResume::kGivenWins}, &O::data);
  visit(S{"--cfg",
          "model.yaml path or shipped model name (yolov5n/s/m/l/x); default: the --weights model, else yolov5s.yaml",
          "cfg", 1, kRestored},
        &O::cfg);
  visit(S{"--hyp", "Hyperparameter YAML (default: configs/hyps/hyp.scratch-low.yaml)", "hyp", 2, kRestored}, &O::hyp);
  visit(S{"--weights",
          "initial weights path: an ffyolo checkpoint or Ultralytics weights imported by "
          "scripts/ultralytics_weights.py",
          "weights", 3, kRestored},
        &O::weights);
  visit(S{"--img,--imgsz,--img-size", "Train and val image size (pixels)", "imgsz", 4, kRestored}, &O::img_size);
  visit(S{"--batch,--batch-size", "Total batch size", "batch_size", 5, kRestored}, &O::batch_size);
  visit(S{"--epochs", "Epochs", "epochs", 6, kRestored}, &O::epochs);
  visit(S{"--workers", "Loader threads", "workers", 7, kRestored}, &O::workers);
  visit(S{"--device", "cuda device, i.e. 0 or 0,1,2,3 or cpu (default: GPU 0 if any, else cpu)", "device", 8,
          kRestored},
        &O::device);
  visit(S{"--project", "Save to project/name", "project", 9, kRestored}, &O::project);
  visit(S{"--name", "Save to project/name", "name", 10, kRestored}, &O::name);
  visit(S{"--exist-ok", "Reuse project/name instead of incrementing", "exist_ok", 11, kRestored}, &O::exist_ok);
  visit(S{"--seed", "Global training seed", "seed", 12, kRestored}, &O::seed);
  visit(S{"--cos-lr", "Cosine LR schedule", "cos_lr", 13, kRestored}, &O::cos_lr);
  visit(S{"--optimizer", "optimizer", "optimizer", 14, kRestored, FlagGroup::kRun, {"SGD", "Adam", "AdamW"}},
        &O::optimizer);
  visit(S{"--multi-scale", "vary img-size +/- 50%", "multi_scale", 15, kRestored}, &O::multi_scale);
  visit(S{"--label-smoothing", "Label smoothing epsilon", "label_smoothing", 16, kRestored, FlagGroup::kRun, {},
          FlagCheck::kUnitInterval},
        &O::label_smoothing);
  visit(S{"--patience", "EarlyStopping patience (epochs without improvement; 0: never stop early)", "patience", 17,
          kRestored, FlagGroup::kRun, {}, FlagCheck::kNonNegative},
        &O::patience);
  visit(S{"--save-period", "Save a checkpoint every x epochs (disabled if < 1)", "save_period", 18, kRestored},
        &O::save_period);
  visit(S{"--noval", "Only validate the final epoch", "noval", 19, kRestored}, &O::noval);
  visit(S{"--nosave", "Only save the final checkpoint", "nosave", 20, kRestored}, &O::nosave);
  visit(S{"--noautoanchor", "Disable AutoAnchor", "noautoanchor", 29, kRestored}, &O::noautoanchor);
  visit(S{"--freeze", "Freeze layers: backbone=10, first3=0 1 2", "freeze", 31, kRestored}, &O::freeze);
  visit(S{"--cache",
          "Image --cache ram/disk (decoded once into DATA.ffr/cache/, shared by this machine's ranks)", "cache", 30,
          kRestored, FlagGroup::kRun, {"ram", "disk"}, FlagCheck::kNone, "ram"},
        &O::cache);
  visit(S{"--train-split",
          "Training split, or several joined by + or , (default: the data YAML's train:, else train*)", "train_split",
          21, OnResume::kRefusedIfOther},
        &O::train_split);
  visit(S{"--val-split",
          "Validation split, or several joined by + or , (default: the data YAML's val:, else val*, else the "
          "training split)",
          "val_split", 22, OnResume::kRefusedIfOther},
        &O::val_split);
  visit(S{"--threads", "Torch threads per rank (default: its share of the usable CPUs)", "threads", 27, kRestored},
        &O::threads);
  visit(S{"--rect", "rectangular training", "rect", 23, kRestored}, &O::rect);
  visit(S{"--image-weights", "use weighted image selection for training", "image_weights", 24, kRestored},
        &O::image_weights);
  visit(S{"--single-cls", "train multi-class data as single-class", "single_cls", 25, kRestored}, &O::single_cls);
  visit(S{"--quad", "quad dataloader", "quad", 26, kRestored}, &O::quad);
  visit(S{"--sync-free-loss",
          "The loss without host syncs, the same loss: auto (the default: on CUDA), on (the flag alone), off (see "
          "docs/gpu.md)",
          nullptr, -1, OnResume::kLaunch, FlagGroup::kRun, kStepVariantSettings, FlagCheck::kNone, "on"},
        &O::sync_free_loss);
  visit(S{"--channels-last",
          "Weights and batches in channels-last (NHWC) memory: auto (the default: on CUDA), on (the flag alone), off "
          "(see docs/gpu.md)", nullptr,
          -1, OnResume::kLaunch, FlagGroup::kRun, kStepVariantSettings, FlagCheck::kNone, "on"},
        &O::channels_last);
  visit(S{"--cuda-graph",
          "Capture the training step as a CUDA graph and replay it, with the sync-free loss: auto (the default: on "
          "CUDA), on (the flag alone), off (see docs/gpu.md)",
          nullptr, -1, OnResume::kLaunch, FlagGroup::kRun, kStepVariantSettings, FlagCheck::kNone, "on"},
        &O::cuda_graph);
  visit(S{"--fused-bn-silu",
          "Run each Conv's BatchNorm and SiLU as one fused CUDA function in training, the same step: auto (the "
          "default: on CUDA), on (the flag alone; the CPU runs its slow host version), off (see docs/gpu.md)",
          nullptr, -1, OnResume::kLaunch, FlagGroup::kRun, kStepVariantSettings, FlagCheck::kNone, "on"},
        &O::fused_bn_silu);
  visit(S{"--sync-bn", "Synchronized BatchNorm over all ranks", "sync_bn", 28, kRestored, FlagGroup::kParallel},
        &O::sync_bn);
  visit(S{"--bind-numa", "Bind each worker to the NUMA node of its GPU (CPU runs: round robin)", nullptr, -1,
          OnResume::kLaunch, FlagGroup::kParallel},
        &O::bind_numa);
  // Recorded by the trainer (OpenDataset), not flags.
  visit(S{"", "", "dataset_path", 32, kRestored}, &O::dataset_path);
  visit(S{"", "", "dataset_crc", 33, kRestored}, &O::dataset_crc);
}

// The options a --resume runs with: `given` (what it was started with) with
// every saved row taken from `saved` (the run's opt.yaml) but where the row's
// OnResume says otherwise. InvalidArgument for a kRefusedIfOther flag given
// another value than the run's.
ffr::Status ResumedOptions(const TrainOptions& given, const TrainOptions& saved, TrainOptions* resumed);

}  // namespace ffyolo
