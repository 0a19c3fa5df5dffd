// What the training tests share: a tiny packed dataset, quick options, and an
// observer that records every batch's loss items.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ffyolo/synthetic.h"
#include "ffyolo/train.h"

namespace ffyolo::testing {

// 32 small images of 3 classes (8 for validation), packed once per process.
const std::string& TinyDataset();

// Generates the synthetic COCO tree `so` describes and packs it into `output`; a test failure when either fails.
void PackSynthetic(const SyntheticOptions& so, const std::string& output);

// yolov5n at 128 px, batch 8 (4 batches an epoch), 2 workers and threads, --noval.
TrainOptions TinyTrainOptions(const std::string& project, int epochs);

// The width and height of `save_dir`/train_batch0.jpg, the grid of the first batch the run trained on.
std::pair<int, int> TrainBatchGridSize(const std::string& save_dir);

// The loss items of every batch; `on_batch` may act on each (e.g. ask for a stop).
class LossRecorder : public TrainObserver {
 public:
  std::vector<std::vector<double>> items;
  std::vector<std::vector<double>> means;  // the epoch's running mean after each batch
  std::function<void(int64_t epoch, int64_t batch)> on_batch;

  void OnTrainBatchEnd(const TrainBatchEnd& b) override {
    items.push_back({b.items[0], b.items[1], b.items[2]});
    means.push_back({b.mean_items[0], b.mean_items[1], b.mean_items[2]});
    if (on_batch) on_batch(b.epoch, b.batch);
  }
};

}  // namespace ffyolo::testing
