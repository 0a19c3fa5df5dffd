// What Ultralytics prints about a model: parse_model's per-layer table and
// model_info's one-line summary, with the same counting conventions, so logs
// compare line by line with the reference implementation's.
#pragma once

#include <cstdint>
#include <string>

#include "ffyolo/model.h"

namespace ffyolo {

// len(list(model.modules())): every distinct module, the model itself and the
// one shared activation included.
int64_t CountModules(const YoloModel& model);
// Parameter elements (BN running buffers excluded); with trainable_only, those
// that require gradients.
int64_t CountParameters(const torch::nn::Module& module, bool trainable_only = false);
// One forward pass on an imgsz x imgsz image, counted like model_info: on a
// max(stride, 32) square probe, scaled by (imgsz / probe)^2.
OpCounts CountModelOps(const YoloModel& model, int64_t imgsz = 640);

// The table parse_model logs: "from  n  params  module  arguments" per row,
// preceded by the activation line when the YAML sets one.
std::string LayerTable(const YoloModel& model);
// "YOLOv5s summary: 214 layers, 7235389 parameters, 7235389 gradients, 16.6 GFLOPs".
std::string SummaryLine(const YoloModel& model, int64_t imgsz = 640);

}  // namespace ffyolo
