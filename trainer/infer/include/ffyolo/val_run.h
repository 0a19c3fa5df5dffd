// What `yolo-val --weights` does, behind a torch-free interface: load a
// checkpoint, validate it on a packed split, report both tables.
#pragma once

#include <string>

#include "ffr/status.h"
#include "ffyolo/validator.h"

namespace ffyolo {

struct ValRunOptions {
  std::string data;
  std::string weights;
  std::string split;  // "" = the validation split (or the only one)
  std::string device;  // --device (device.h)
  int img_size = 640;
  int batch_size = 32;
  int workers = 4;
  int threads = 0;  // torch threads, 0: all usable CPUs
  double conf_thres = 0.001;
  double iou_thres = 0.6;
  int max_det = 300;
  bool single_cls = false;  // --single-cls: the data scored as one class (a model trained with --single-cls)
};

// Validates the checkpoint's EMA weights (or model weights when it has no EMA).
ffr::Status ValidateWeights(const ValRunOptions& options, ValidationOutput* out, std::vector<std::string>* names);

}  // namespace ffyolo
