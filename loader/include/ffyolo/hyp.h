// Hyp: YOLOv5 hyperparameters, read from an Ultralytics hyp YAML
// (configs/hyps/hyp.scratch-low.yaml, same keys). Defaults are scratch-low's.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ffr/status.h"

namespace ffyolo {

struct Hyp {
  // Optimisation.
  double lr0 = 0.01, lrf = 0.01, momentum = 0.937, weight_decay = 0.0005;
  double warmup_epochs = 3.0, warmup_momentum = 0.8, warmup_bias_lr = 0.1;
  // Loss.
  double box = 0.05, cls = 0.5, cls_pw = 1.0, obj = 1.0, obj_pw = 1.0, iou_t = 0.20, anchor_t = 4.0,
         fl_gamma = 0.0;
  // Augmentation.
  double hsv_h = 0.015, hsv_s = 0.7, hsv_v = 0.4;
  double degrees = 0.0, translate = 0.1, scale = 0.5, shear = 0.0, perspective = 0.0;
  double flipud = 0.0, fliplr = 0.5, mosaic = 1.0, mixup = 0.0, copy_paste = 0.0;

  // Reads `path`; unknown keys and values out of their range are errors
  // naming the file, line and key (a typo must not silently keep a default);
  // missing keys keep their default and are listed in *defaulted.
  static ffr::Status Load(const std::string& path, Hyp* out, std::vector<std::string>* defaulted = nullptr);
  static ffr::Status Parse(const std::string& yaml, const std::string& where, Hyp* out,
                           std::vector<std::string>* defaulted = nullptr);
  // Every key with its value, in Ultralytics' order.
  std::vector<std::pair<std::string, double>> Values() const;
  // Every key, in Ultralytics' order, as YAML.
  std::string ToYaml() const;
};

}  // namespace ffyolo
