// TrainObserver: what a training run reports, for a tool to show or a test to
// record. The trainer prints nothing; yolo-train implements this with the
// progress bar and Ultralytics' console lines.
//
// Every rank reports its epochs and batches; rank 0 alone validates, so it
// alone reports fit-epoch ends, the end of training and most messages.
// Callbacks run on the training thread (a slow observer slows training),
// except OnMessage for a corrupt sample, which comes from a loader thread
// while the training thread may be in another callback.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ffyolo/dataset_eval.h"
#include "ffyolo/results.h"
#include "ffyolo/val_metrics.h"

namespace ffyolo {

enum class TrainMessage {
  kInfo,     // a console line of train.py (model summary, AutoAnchor, optimizer, ...)
  kWarning,  // something the user should know that does not stop the run
};

// Set up is done; the first batch comes next.
struct TrainStart {
  std::string save_dir;
  int img_size = 0;
  int workers = 0;          // loader threads of this rank
  std::string cache;        // the pixel cache read ("ram", "disk"), or "" when the loader decodes images
  int threads = 0;          // torch intra-op threads of this rank
  int64_t epochs = 0;
  int64_t start_epoch = 0;  // > 0 or first_batch > 0: resumed
  int64_t first_batch = 0;
  int64_t batches_per_epoch = 0;
  int rank = 0;
  int world_size = 1;
  std::vector<std::string> names;  // the dataset's classes
  // The splits it trains and validates on: one, or several joined by '+' (Dataset::ResolveSplit).
  std::string train_split, val_split;
};

struct TrainBatchEnd {
  int64_t epoch = 0, epochs = 0;
  int64_t batch = 0;         // its index in the epoch
  int64_t batches = 0;       // per epoch
  // Losses and memory cross from the GPU only every 10 batches and at the
  // epoch's last (each read waits for the GPU); in between they repeat the last read.
  double items[3] = {0, 0, 0};      // the batch's box, obj, cls losses
  double mean_items[3] = {0, 0, 0}; // their mean over this epoch's batches so far
  int64_t instances = 0;     // boxes in the batch
  int size = 0;              // its image width
  double gpu_mem_gb = 0;     // CUDA memory reserved (torch.cuda.memory_reserved() / 1E9); 0 on CPU
};

// An epoch's batches are done (or a stop ended them early), with how long they took this rank.
struct TrainEpochEnd {
  int64_t epoch = 0;
  int64_t batches = 0;             // trained in this epoch by this run (fewer when resumed or stopped)
  double seconds = 0;              // from the loader's start to the last batch's step, on the host
  double data_wait_seconds = 0;    // of which the training thread waited for the loader's next batch
  double data_wait_share() const { return seconds > 0 ? data_wait_seconds / seconds : 0; }
};

// After validation, results.csv and the checkpoints of an epoch.
struct FitEpochEnd {
  EpochResult result;
  bool validated = false;    // --noval validates the final epoch only
  ValMetrics metrics;        // when validated
  bool best = false;         // this epoch's fitness is the best so far (best.pt was written)
};

struct TrainEnd {
  std::string save_dir;
  std::string best_weights;  // the validated best.pt ("" when none was saved)
  DatasetEvalResult final;   // best.pt's evaluation at IoU 0.65 (when best_weights is set)
};

class TrainObserver {
 public:
  virtual ~TrainObserver() = default;
  virtual void OnMessage(TrainMessage kind, const std::string& text) {}
  // Long set-up work (building a pixel cache), a few times a second; the last call has done == total.
  virtual void OnSetUpProgress(const std::string& task, int64_t done, int64_t total) {}
  virtual void OnTrainStart(const TrainStart& start) {}
  virtual void OnTrainEpochStart(int64_t epoch, int64_t epochs, int64_t batches, int64_t first_batch) {}
  virtual void OnTrainBatchEnd(const TrainBatchEnd& batch) {}
  virtual void OnTrainEpochEnd(const TrainEpochEnd& end) {}
  virtual void OnFitEpochEnd(const FitEpochEnd& epoch) {}
  virtual void OnTrainEnd(const TrainEnd& end) {}
};

}  // namespace ffyolo
