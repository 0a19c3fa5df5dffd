// Validator: val.py's loop over a packed split in C++: letterboxed rect
// batches from the loader, the model in eval mode, NMS (conf 0.001, IoU 0.6 in
// training, 0.65 for final numbers, 300 detections, multi-label), boxes scaled
// back to the original images, then the Ultralytics table and the COCO stats.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "ffr/status.h"
#include "ffyolo/dataset.h"
#include "ffyolo/dataset_eval.h"
#include "ffyolo/label_index.h"
#include "ffyolo/nms.h"

namespace ffyolo {

class YoloModel;
class ComputeLoss;
class Loader;
struct LoaderOptions;

struct ValidatorOptions {
  std::string split;  // "" = the dataset's validation split
  int img_size = 640;
  int batch_size = 32;
  int workers = 4;
  bool pixel_cache = false;   // read the split's validation pixel cache (LoaderOptions::pixel_cache)
  ffr::ReaderOptions reader;  // how the loader reads
  bool single_cls = false;    // --single-cls: every label class 0 (DatasetEvaluator)
  NmsOptions nms{/*conf_thres=*/0.001, /*iou_thres=*/0.6, /*agnostic=*/false, /*multi_label=*/true, /*max_det=*/300,
                 /*classes=*/{}};
  // Batch images: progress callback (done, total) after each batch.
  std::function<void(int64_t, int64_t)> on_progress;
};

// The loader a validator of `options` reads its split with: letterboxed rect batches, no augmentation.
LoaderOptions ValidationLoader(const ValidatorOptions& options);

struct ValidationOutput {
  DatasetEvalResult result;
  double loss[3] = {0, 0, 0};  // box, obj, cls averaged over batches (when a loss is given)
  std::string predictions_json;
  double seconds = 0;
};

class Validator {
 public:
  static ffr::Status Open(const Dataset& dataset, const ValidatorOptions& options, const c10::Device& device,
                          std::unique_ptr<Validator>* out);
  ~Validator();

  // Runs `model` (switched to eval mode) over the split; with `loss`, the
  // validation losses too; `half` runs the model in fp16 (CUDA AMP) and leaves
  // its weights rounded to fp16, as val.py's model.half() ... .float() does.
  ffr::Status Run(YoloModel& model, const ComputeLoss* loss, bool half, ValidationOutput* out);

  const std::string& split() const { return split_; }
  const LabelIndex& index() const { return index_; }
  const std::vector<std::string>& names() const;

 private:
  Validator(const Dataset& dataset, const ValidatorOptions& options, const c10::Device& device);

  const Dataset& dataset_;
  ValidatorOptions options_;
  c10::Device device_;
  std::string split_;
  LabelIndex index_;
  std::unique_ptr<Loader> loader_;
};

}  // namespace ffyolo
