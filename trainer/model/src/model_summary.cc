#include "ffyolo/model_summary.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

namespace ffyolo {

namespace {

// Ultralytics' module column: the Python class path.
std::string PythonModulePath(const std::string& module) {
  if (module == "nn.Upsample") return "torch.nn.modules.upsampling.Upsample";
  if (module == "Detect") return "models.yolo.Detect";
  return "models.common." + module;
}

}  // namespace

int64_t CountModules(const YoloModel& model) {
  std::unordered_set<const torch::nn::Module*> distinct{&model};
  for (const auto& module : model.modules(/*include_self=*/false)) distinct.insert(module.get());
  return static_cast<int64_t>(distinct.size());
}

int64_t CountParameters(const torch::nn::Module& module, bool trainable_only) {
  int64_t count = 0;
  for (const torch::Tensor& p : module.parameters())
    if (!trainable_only || p.requires_grad()) count += p.numel();
  return count;
}

OpCounts CountModelOps(const YoloModel& model, int64_t imgsz) {
  const std::vector<double>& strides = model.strides();
  const int64_t probe = std::max<int64_t>(32, static_cast<int64_t>(*std::max_element(strides.begin(), strides.end())));
  const std::vector<LayerConfig>& layers = model.config().layers;
  std::vector<FeatureShape> outputs;
  OpCounts counts;
  for (size_t i = 0; i < layers.size(); ++i) {
    std::vector<FeatureShape> inputs;
    for (int f : layers[i].from)
      inputs.push_back(f >= 0 ? outputs[static_cast<size_t>(f)]
                       : i == 0 ? FeatureShape{model.config().ch, probe, probe}
                                : outputs.back());
    const std::shared_ptr<torch::nn::Module> row = model.row(i);
    const auto* row_module = dynamic_cast<const RowModule*>(row.get());
    outputs.push_back(row_module ? row_module->CountOps(inputs, &counts) : model.detect().CountOps(inputs, &counts));
  }
  const double scale = static_cast<double>(imgsz) / static_cast<double>(probe);
  counts.conv_macs *= scale * scale;
  counts.bn_elements *= scale * scale;
  counts.upsample_elements *= scale * scale;
  return counts;
}

std::string LayerTable(const YoloModel& model) {
  const ModelConfig& config = model.config();
  std::string table;
  char line[1024];
  if (!config.activation_text.empty()) table += "activation: " + config.activation_text + "\n";
  std::snprintf(line, sizeof(line), "%3s%18s%3s%10s  %-40s%-30s\n", "", "from", "n", "params", "module", "arguments");
  table += line;
  for (size_t i = 0; i < config.layers.size(); ++i) {
    const LayerConfig& layer = config.layers[i];
    std::snprintf(line, sizeof(line), "%3d%18s%3d%10lld  %-40s%-30s\n", layer.index, layer.from_text.c_str(),
                  layer.repeats, static_cast<long long>(CountParameters(*model.row(i))),
                  PythonModulePath(layer.module).c_str(), layer.args_text.c_str());
    table += line;
  }
  return table;
}

std::string SummaryLine(const YoloModel& model, int64_t imgsz) {
  char line[256];
  std::snprintf(line, sizeof(line), "%s summary: %lld layers, %lld parameters, %lld gradients, %.1f GFLOPs",
                model.config().name.c_str(), static_cast<long long>(CountModules(model)),
                static_cast<long long>(CountParameters(model)), static_cast<long long>(CountParameters(model, true)),
                CountModelOps(model, imgsz).gflops());
  return line;
}

}  // namespace ffyolo
