// YoloModel: a YOLOv5 detection network (models/yolo.py::DetectionModel)
// built from a model YAML. The rows live in a ModuleList registered as
// "model", so parameter and buffer names are Ultralytics' state-dict keys
// (model.0.conv.weight, ..., model.24.anchors).
#pragma once

#include <c10/core/MemoryFormat.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include <memory>
#include <string>
#include <vector>

#include "ffr/status.h"
#include "ffyolo/model_config.h"
#include "ffyolo/modules.h"

namespace ffyolo {

class YoloModel : public torch::nn::Module {
 public:
  // Builds the rows and initializes them as DetectionModel.__init__ does:
  // a stride probe on zeros(1, ch, 256, 256) in training mode (which leaves
  // every BN at running_var 0.9 and num_batches_tracked 1), the anchor order
  // check, anchors divided by the strides, the objectness and class bias
  // priors, then BN eps 1e-3 and momentum 0.03. The weights are drawn from
  // torch's global generator: seed it with torch::manual_seed for repeatable
  // models. Throws on a config the modules reject; BuildModel reports that as
  // a Status.
  explicit YoloModel(ModelConfig config);

  // Training mode: the raw levels. Eval mode: also the decoded (bs, N, nc+5).
  DetectOutput forward(const torch::Tensor& images);

  // Folds every BatchNorm into its conv (evaluation and export only).
  void Fuse();
  bool fused() const { return fused_; }
  // The memory format the model computes in: its 4-d weights converted in place (before an optimizer or
  // an EMA takes them), and with ChannelsLast every row's output checked in training to be in it, so a
  // layer falling back to NCHW (a copy before and after it on the GPU) is an error naming it, not a
  // silent slow-down. Contiguous (NCHW) is the default.
  void SetMemoryFormat(c10::MemoryFormat format);
  c10::MemoryFormat memory_format() const { return memory_format_; }
  // Every BatchNorm normalizes with the job's global batch statistics in training (--sync-bn); nullptr: off.
  void SetSyncBatchNorm(Communicator* comm);
  // Every Conv's BatchNorm and SiLU run as one fused function in training (--fused-bn-silu; bn_silu.h).
  void SetFusedBnSilu(bool on);

  const ModelConfig& config() const { return config_; }
  int64_t nc() const { return config_.nc; }
  // The module of row i: what the state-dict keys model.{i}.* name.
  std::shared_ptr<torch::nn::Module> row(size_t i) const { return rows_->ptr(i); }
  DetectImpl& detect() { return *detect_; }
  const DetectImpl& detect() const { return *detect_; }
  const std::vector<double>& strides() const { return detect_->strides(); }

 private:
  // _initialize_biases(cf=None): objectness prior "8 objects per 640 image",
  // class prior 0.6 / (nc - 0.99999), added to the default bias init.
  void InitializeBiases();

  ModelConfig config_;
  torch::nn::ModuleList rows_{nullptr};
  std::vector<RowModule*> row_modules_;  // rows_ but Detect, as row interfaces
  Detect detect_{nullptr};
  std::vector<bool> saved_;  // per row: a later row reads its output
  bool fused_ = false;
  c10::MemoryFormat memory_format_ = c10::MemoryFormat::Contiguous;
};

// NHWC (ChannelsLast) with --channels-last, where the GPU's tensor-core convolutions read their operands
// without a layout change (docs/gpu.md), else NCHW (Contiguous).
c10::MemoryFormat MemoryFormatOf(bool channels_last);

// Builds from a parsed config, a YAML file (nc > 0 overrides the YAML's nc:
// the dataset's class count) or YAML text named `where` in messages. What
// LibTorch throws while building, running out of memory included (a model
// under kMaxModelParameters can still be more than the machine has), comes
// back as a Status naming the file and the model's size.
ffr::Status BuildModel(const ModelConfig& config, std::shared_ptr<YoloModel>* out);
ffr::Status BuildModel(const std::string& yaml_path, int64_t nc, std::shared_ptr<YoloModel>* out);
ffr::Status BuildModelFromString(const std::string& yaml, const std::string& where, int64_t nc,
                                 std::shared_ptr<YoloModel>* out);

// The optimizer's parameter groups, split and ordered as train.py's
// smart_optimizer does: every parameter named "bias" (no decay, warmup bias
// lr), the other weights (decayed), and BatchNorm weights (no decay).
struct ParameterGroups {
  std::vector<torch::Tensor> biases;
  std::vector<torch::Tensor> decayed_weights;
  std::vector<torch::Tensor> bn_weights;
};
ParameterGroups SplitParameterGroups(const torch::nn::Module& model);

// train.py's --freeze: one value N freezes layers 0..N-1, several values those layers; their
// parameters stop training (requires_grad false; the optimizer still holds them, as v7.0's does).
// Every other parameter trains. *frozen gets the names of the frozen ones. Freezing every parameter
// (--freeze 100 on a 25-layer model) is refused, the model left as it was: nothing would train, and
// backward would fail with LibTorch's "element 0 of tensors does not require grad".
ffr::Status FreezeLayers(YoloModel* model, const std::vector<int>& freeze, std::vector<std::string>* frozen);

}  // namespace ffyolo
