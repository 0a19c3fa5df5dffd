// Trainer: YOLOv5 v7.0's train.py as a sequence of stages over named state.
//
//   std::unique_ptr<Trainer> t;
//   FFR_RETURN_IF_ERROR(Trainer::Create(options, &observer, &t));   // set up
//   while (!t->done()) {
//     FFR_RETURN_IF_ERROR(t->RunEpoch());   // the batches of one epoch
//     FFR_RETURN_IF_ERROR(t->EndEpoch());   // validate, log, save, early stopping
//   }
//   FFR_RETURN_IF_ERROR(t->Finish());       // best.pt validated at IoU 0.65
//
// Its state is what a checkpoint holds (TrainState: model, EMA, optimizer,
// loss scaler, counters, position), so a run resumed from last.pt continues
// exactly. A stop (RequestTrainingStop) ends RunEpoch after the next optimizer
// step, or EndEpoch, with last.pt saved and Aborted returned. Every stage turns
// an exception into a Status; the trainer reports through its observer and
// prints nothing.
#pragma once

#include <cstdint>
#include <memory>

#include "ffr/status.h"
#include "ffyolo/train.h"
#include "ffyolo/train_observer.h"

namespace ffyolo {

class YoloModel;

// Where a run is, as last.pt records it.
struct TrainPosition {
  int64_t epoch = 0;          // the epoch RunEpoch runs next
  int64_t next_batch = 0;     // its first batch (> 0 when resumed inside it)
  int64_t last_opt_step = -1; // the iteration of the last optimizer step
  int64_t ema_updates = 0;
  double best_fitness = 0;
  int64_t best_epoch = -1;
};

class Trainer {
 public:
  // Set up: options (a resumed checkpoint's win), device and process group,
  // the run directory, the model (AutoAnchor, --weights), data, optimizer and
  // schedule, and the resumed state. `observer` may be null; it must outlive the Trainer.
  static ffr::Status Create(const TrainOptions& options, TrainObserver* observer, std::unique_ptr<Trainer>* out);
  ~Trainer();

  // Runs the batches of the current epoch from the current position.
  ffr::Status RunEpoch();
  // Rank 0 validates the EMA, writes results.csv/png and the checkpoints; all
  // ranks then agree on early stopping and move to the next epoch.
  ffr::Status EndEpoch();
  // All epochs ran, or early stopping ended the run.
  bool done() const;
  // Rank 0 validates best.pt (IoU 0.65, COCO stats, predictions.json).
  ffr::Status Finish();

  TrainPosition position() const;
  // What the run has done so far (save_dir, epochs, results, final numbers).
  const TrainSummary& summary() const;
  // The options in force (a resumed run's are the checkpoint's).
  const TrainOptions& options() const;
  YoloModel& model();
  YoloModel& ema();

 private:
  struct State;
  explicit Trainer(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

}  // namespace ffyolo
