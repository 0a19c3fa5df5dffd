#include "ffyolo/modules.h"

#include <torch/nn/modules/activation.h>

#include <string>
#include <variant>

namespace ffyolo {

torch::nn::AnyModule MakeActivation(const ActivationConfig& config) {
  switch (config.kind) {
    case ActivationConfig::Kind::kReLU:
      return torch::nn::AnyModule(torch::nn::ReLU());
    case ActivationConfig::Kind::kLeakyReLU:
      return torch::nn::AnyModule(
          torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(config.negative_slope)));
    case ActivationConfig::Kind::kSiLU:
      break;
  }
  return torch::nn::AnyModule(torch::nn::SiLU());
}

std::shared_ptr<torch::nn::Module> MakeRowModule(const LayerArgs& args, const torch::nn::AnyModule& act) {
  return std::visit([&](const auto& module_args) { return MakeModule(module_args, act); }, args);
}

RepeatImpl::RepeatImpl(const std::vector<std::shared_ptr<torch::nn::Module>>& copies) {
  for (size_t i = 0; i < copies.size(); ++i) {
    auto* row = dynamic_cast<RowModule*>(copies[i].get());
    TORCH_CHECK(row != nullptr, "Repeat: copy ", i, " is not a row module");
    register_module(std::to_string(i), copies[i]);
    copies_.push_back(row);
  }
}

torch::Tensor RepeatImpl::ForwardRow(const std::vector<torch::Tensor>& inputs) {
  std::vector<torch::Tensor> x = inputs;
  for (RowModule* copy : copies_) x = {copy->ForwardRow(x)};
  return x.at(0);
}

FeatureShape RepeatImpl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const {
  std::vector<FeatureShape> x = inputs;
  for (const RowModule* copy : copies_) x = {copy->CountOps(x, counts)};
  return x.at(0);
}

}  // namespace ffyolo
