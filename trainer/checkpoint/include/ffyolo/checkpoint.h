// Checkpoint: everything needed to resume a run exactly, or to use its
// weights: model, EMA, optimizer state (momentum buffers), loss scaler, epoch
// and batch position, best fitness, and the options and hyperparameters as
// YAML. One LibTorch archive, serialised in memory and written through an
// ffr::Env atomically (temporary name, fsync, rename, fsync of the directory),
// so that a failed save leaves the previous file whole. The keys are
// documented in docs/checkpoint.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ffr/env.h"
#include "ffr/status.h"
#include "ffyolo/model.h"

namespace torch::optim {
class Optimizer;
}

namespace ffyolo {

struct CheckpointInfo {
  int64_t epoch = -1;       // the last finished epoch (-1: final weights, nothing to resume)
  int64_t next_batch = 0;   // > 0: stopped inside epoch + 1 before this batch
  double best_fitness = 0;
  int64_t ema_updates = 0;
  int64_t last_opt_step = -1;  // the iteration of the last optimizer step
  double loss_scale = 65536;   // AMP's dynamic loss scale
  int64_t scale_growth_tracker = 0;
  std::string model_yaml;   // the model config, to rebuild the network
  int64_t nc = 0;
  std::vector<std::string> names;  // class index -> name (the dataset's); empty in older checkpoints
  std::string opt_yaml;     // the run's options
  std::string hyp_yaml;     // its hyperparameters
  std::string date;
  // --image-weights: the per-class mAP50-95 the next epoch's image weights use (empty without).
  std::vector<double> maps;
  // next_batch > 0: the mean loss items (box, obj, cls) of the epoch's batches before it, so that the
  // epoch's mean in results.csv is the uninterrupted run's (empty otherwise, and in older checkpoints).
  std::vector<double> epoch_loss;
};

// Writes `path` atomically through `env`. `ema` and `optimizer` may be null (stripped weights).
ffr::Status SaveCheckpoint(const std::string& path, const CheckpointInfo& info, const YoloModel& model,
                           const YoloModel* ema, const torch::optim::Optimizer* optimizer,
                           ffr::Env* env = ffr::Env::Default());

// The functions below that read weights also take Ultralytics weights converted by
// scripts/ultralytics_weights.py import (docs/checkpoint.md): their info has the model YAML and nc,
// epoch -1, and they cannot be resumed.

// Reads the metadata only.
ffr::Status ReadCheckpointInfo(const std::string& path, CheckpointInfo* info);

// Rebuilds the network described in the checkpoint and loads its weights:
// the EMA's when `prefer_ema` and present, else the model's.
ffr::Status LoadCheckpointModel(const std::string& path, bool prefer_ema, std::shared_ptr<YoloModel>* model,
                                CheckpointInfo* info);

// Restores model, EMA and optimizer state into existing objects (resume).
ffr::Status LoadCheckpointState(const std::string& path, YoloModel* model, YoloModel* ema,
                                torch::optim::Optimizer* optimizer);

// Fine-tuning from --weights as train.py does: copies the file's weights into `model` where key and
// shape match (intersect_dicts), leaving out the anchors when `exclude_anchors` (a model built from
// another config). *transferred of the model's *total state-dict entries were copied.
ffr::Status TransferWeights(const std::string& path, bool exclude_anchors, YoloModel* model,
                            int64_t* transferred, int64_t* total);

}  // namespace ffyolo
