#include "ffyolo/model.h"

#include <c10/util/Exception.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/utils.h>

#include <cmath>
#include <new>
#include <unordered_set>

namespace ffyolo {

namespace {

// Distinct modules in pre-order, like Python's model.modules().
std::vector<std::shared_ptr<torch::nn::Module>> DistinctModules(const torch::nn::Module& model) {
  std::vector<std::shared_ptr<torch::nn::Module>> distinct;
  std::unordered_set<const torch::nn::Module*> seen{&model};
  for (const auto& module : model.modules(/*include_self=*/false))
    if (seen.insert(module.get()).second) distinct.push_back(module);
  return distinct;
}

}  // namespace

YoloModel::YoloModel(ModelConfig config) : config_(std::move(config)) {
  const torch::nn::AnyModule act = MakeActivation(config_.activation);
  rows_ = register_module("model", torch::nn::ModuleList());
  for (const LayerConfig& layer : config_.layers) {
    std::shared_ptr<torch::nn::Module> module = MakeRowModule(layer.args, act);
    if (auto detect = std::dynamic_pointer_cast<DetectImpl>(module)) {  // the last row, called directly
      detect_ = Detect(detect);
      rows_->push_back(detect_);
      continue;
    }
    if (layer.copies > 1) {
      std::vector<std::shared_ptr<torch::nn::Module>> copies{module};
      for (int i = 1; i < layer.copies; ++i) copies.push_back(MakeRowModule(layer.args, act));
      module = Repeat(copies).ptr();
    }
    rows_->push_back(module);
    row_modules_.push_back(dynamic_cast<RowModule*>(module.get()));
  }
  TORCH_CHECK(!detect_.is_empty() && rows_->size() == row_modules_.size() + 1,
              config_.source, ": the last row, and only it, must be Detect");
  saved_.assign(config_.layers.size(), false);
  for (int index : config_.save) saved_[static_cast<size_t>(index)] = true;

  // Strides from the output sizes of a probe; 256 is twice the smallest stride
  // Ultralytics expects to need.
  {
    torch::NoGradGuard no_grad;
    constexpr int64_t kProbe = 256;
    const DetectOutput probe = forward(torch::zeros({1, config_.ch, kProbe, kProbe}));
    std::vector<double> strides;
    for (const torch::Tensor& level : probe.raw)
      strides.push_back(static_cast<double>(kProbe) / static_cast<double>(level.size(-2)));
    detect_->set_strides(std::move(strides));
    detect_->CheckAnchorOrder();
    const auto stride_tensor = torch::tensor(detect_->strides(), torch::kFloat).view({-1, 1, 1});
    detect_->anchors.div_(stride_tensor);
  }
  InitializeBiases();
  // utils/torch_utils.py::initialize_weights; the probe ran with torch's defaults.
  for (const auto& module : DistinctModules(*this)) {
    if (auto* bn = module->as<torch::nn::BatchNorm2dImpl>()) {
      bn->options.eps(1e-3);
      bn->options.momentum(0.03);
    }
  }
}

DetectOutput YoloModel::forward(const torch::Tensor& images) {
  std::vector<torch::Tensor> saved(config_.layers.size());
  torch::Tensor x = images;
  const auto inputs_of = [&](const LayerConfig& layer) {
    std::vector<torch::Tensor> inputs;
    for (int f : layer.from) inputs.push_back(f == -1 ? x : saved[static_cast<size_t>(f)]);
    return inputs;
  };
  const bool check_format = is_training() && memory_format_ != c10::MemoryFormat::Contiguous;
  for (size_t i = 0; i < row_modules_.size(); ++i) {
    x = row_modules_[i]->ForwardRow(inputs_of(config_.layers[i]));
    TORCH_CHECK(!check_format || x.is_contiguous(memory_format_), config_.source, ": row ", i, " (",
                config_.layers[i].module, ") gave its output in another memory format than the model's ",
                memory_format_);
    if (saved_[i]) saved[i] = x;
  }
  return detect_->forward(inputs_of(config_.layers.back()));
}

void YoloModel::SetMemoryFormat(c10::MemoryFormat format) {
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(format));
  memory_format_ = format;
}

c10::MemoryFormat MemoryFormatOf(bool channels_last) {
  return channels_last ? c10::MemoryFormat::ChannelsLast : c10::MemoryFormat::Contiguous;
}

void YoloModel::InitializeBiases() {
  torch::NoGradGuard no_grad;
  DetectImpl& detect = *detect_;
  const double cls_prior = std::log(0.6 / (static_cast<double>(detect.nc()) - 0.99999));
  for (int64_t i = 0; i < detect.nl(); ++i) {
    // In float32, as Ultralytics computes it from the float stride tensor.
    const float cells_per_side = 640.0f / static_cast<float>(detect.strides()[static_cast<size_t>(i)]);
    const double obj_prior = std::log(static_cast<double>(8.0f / (cells_per_side * cells_per_side)));
    torch::Tensor bias = detect.m->at<torch::nn::Conv2dImpl>(static_cast<size_t>(i)).bias.view({detect.na(), -1});
    bias.select(1, 4).add_(obj_prior);
    bias.slice(1, 5, 5 + detect.nc()).add_(cls_prior);
  }
}

void YoloModel::Fuse() {
  for (const auto& module : DistinctModules(*this))
    if (auto* conv = module->as<ConvImpl>()) conv->Fuse();
  fused_ = true;
}

void YoloModel::SetSyncBatchNorm(Communicator* comm) {
  for (const auto& module : DistinctModules(*this))
    if (auto* conv = module->as<ConvImpl>()) conv->SetSyncBatchNorm(comm);
}

void YoloModel::SetFusedBnSilu(bool on) {
  for (const auto& module : DistinctModules(*this))
    if (auto* conv = module->as<ConvImpl>()) conv->SetFusedBnSilu(on);
}

ffr::Status BuildModel(const ModelConfig& config, std::shared_ptr<YoloModel>* out) {
  // The parser caps the size (kMaxModelParameters), but a model under the cap
  // can still be more than this machine's memory: that, too, is an error that
  // names the file and what it asked for.
  const std::string failed = config.source + ": building the model failed (" +
                             ModelSizeText(static_cast<double>(config.parameters)) + "): ";
  try {
    *out = std::make_shared<YoloModel>(config);
  } catch (const std::bad_alloc&) {
    return ffr::Status::IOError(failed + "out of memory");
  } catch (const c10::Error& e) {  // LibTorch's CPU allocator says "can't allocate memory" this way
    return ffr::Status::InvalidArgument(failed + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return ffr::Status::InvalidArgument(failed + e.what());
  }
  return ffr::Status::OK();
}

ffr::Status BuildModel(const std::string& yaml_path, int64_t nc, std::shared_ptr<YoloModel>* out) {
  ModelConfig config;
  FFR_RETURN_IF_ERROR(LoadModelConfig(yaml_path, nc, &config));
  return BuildModel(config, out);
}

ffr::Status BuildModelFromString(const std::string& yaml, const std::string& where, int64_t nc,
                                 std::shared_ptr<YoloModel>* out) {
  ModelConfig config;
  FFR_RETURN_IF_ERROR(ParseModelConfig(yaml, where, nc, &config));
  return BuildModel(config, out);
}

ParameterGroups SplitParameterGroups(const torch::nn::Module& model) {
  ParameterGroups groups;
  std::vector<std::shared_ptr<torch::nn::Module>> modules = DistinctModules(model);
  std::vector<const torch::nn::Module*> order{&model};
  for (const auto& module : modules) order.push_back(module.get());
  for (const torch::nn::Module* module : order) {
    const bool is_bn = dynamic_cast<const torch::nn::BatchNorm2dImpl*>(module) != nullptr;
    for (const auto& param : module->named_parameters(/*recurse=*/false)) {
      if (param.key() == "bias") {
        groups.biases.push_back(param.value());
      } else if (param.key() == "weight" && is_bn) {
        groups.bn_weights.push_back(param.value());
      } else {
        groups.decayed_weights.push_back(param.value());
      }
    }
  }
  return groups;
}

ffr::Status FreezeLayers(YoloModel* model, const std::vector<int>& freeze, std::vector<std::string>* frozen) {
  std::vector<std::string> prefixes;  // train.py: [f'model.{x}.' for x in (freeze if len(freeze) > 1 else range(freeze[0]))]
  if (freeze.size() == 1) {
    for (int x = 0; x < freeze[0]; ++x) prefixes.push_back("model." + std::to_string(x) + ".");
  } else {
    for (int x : freeze) prefixes.push_back("model." + std::to_string(x) + ".");
  }
  const auto frozen_by = [&](const std::string& name) {
    for (const std::string& prefix : prefixes)
      if (name.find(prefix) != std::string::npos) return true;  // `x in k`
    return false;
  };
  auto parameters = model->named_parameters();
  size_t count = 0;
  for (const auto& p : parameters) count += frozen_by(p.key());
  if (count == parameters.size() && count > 0) {
    std::string given;
    for (int x : freeze) given += " " + std::to_string(x);
    return ffr::Status::InvalidArgument("--freeze" + given + " freezes every layer of this " +
                                        std::to_string(model->config().layers.size()) +
                                        "-layer model: nothing would train (--freeze 10 is the backbone)");
  }
  frozen->clear();
  for (auto& p : parameters) {
    const bool freeze_it = frozen_by(p.key());
    p.value().set_requires_grad(!freeze_it);
    if (freeze_it) frozen->push_back(p.key());
  }
  return ffr::Status::OK();
}

}  // namespace ffyolo
