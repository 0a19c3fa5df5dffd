#include "ffyolo/model_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>
#include <variant>

#include "ffr/env.h"
#include "ffyolo/config_path.h"
#include "ffyolo/row_parser.h"
#include "ffyolo/yaml_parse.h"

namespace ffyolo {

namespace {

using ffr::Status;

// `inplace` is accepted and ignored: in-place activations only save memory.
constexpr const char* kKnownKeys[] = {"nc",   "depth_multiple", "width_multiple",   "anchors", "backbone",
                                      "head", "activation",     "channel_multiple", "ch",      "inplace"};
constexpr const char* kRequiredKeys[] = {"nc", "depth_multiple", "width_multiple", "anchors", "backbone", "head"};

Status ParseActivation(const std::string& text, const std::string& where, ActivationConfig* out) {
  const auto unsupported = [&] {
    return Status::NotSupported(where + ": activation '" + text +
                                "' is not supported (nn.SiLU(), nn.ReLU() or nn.LeakyReLU(slope))");
  };
  const size_t open = text.find('(');
  if (open == std::string::npos || text.back() != ')') return unsupported();
  std::string name = text.substr(0, open);
  const std::string arg = text.substr(open + 1, text.size() - open - 2);
  for (const char* prefix : {"torch.nn.", "nn."})
    if (name.rfind(prefix, 0) == 0) name = name.substr(std::string(prefix).size());
  if ((name == "SiLU" || name == "ReLU") && arg.empty()) {
    out->kind = name == "SiLU" ? ActivationConfig::Kind::kSiLU : ActivationConfig::Kind::kReLU;
    return Status::OK();
  }
  if (name == "LeakyReLU") {
    out->kind = ActivationConfig::Kind::kLeakyReLU;
    out->negative_slope = 0.01;
    if (arg.empty()) return Status::OK();
    const auto result = std::from_chars(arg.data(), arg.data() + arg.size(), out->negative_slope);
    if (result.ec == std::errc() && result.ptr == arg.data() + arg.size()) return Status::OK();
  }
  return unsupported();
}

// Fills in the parameter counts, or refuses a model over kMaxModelParameters
// before anything is allocated for it.
Status CheckModelSize(ModelConfig* config) {
  std::vector<double> rows;
  double total = 0;
  size_t largest = 0;
  for (const LayerConfig& layer : config->layers) {
    const double one = std::visit([](const auto& args) { return Parameters(args); }, layer.args);
    rows.push_back(static_cast<double>(layer.copies) * one);
    total += rows.back();
    if (rows.back() > rows[largest]) largest = rows.size() - 1;
  }
  if (total > static_cast<double>(kMaxModelParameters)) {
    const LayerConfig& row = config->layers[largest];
    char multiples[96];
    std::snprintf(multiples, sizeof(multiples), "depth_multiple %g and width_multiple %g", config->depth_multiple,
                  config->width_multiple);
    return Status::InvalidArgument(config->source + ": the model has " + ModelSizeText(total) +
                                   ", over the limit of " + std::to_string(kMaxModelParameters) + " (2^30); with " +
                                   multiples + ", its largest row is layer " + std::to_string(row.index) + " (" +
                                   row.module + " " + row.args_text + ", n " + std::to_string(row.repeats) +
                                   ") with " + ModelSizeText(rows[largest]));
  }
  config->parameters = static_cast<int64_t>(total);
  for (size_t i = 0; i < rows.size(); ++i) config->layers[i].parameters = static_cast<int64_t>(rows[i]);
  return Status::OK();
}

}  // namespace

ffr::Status ParseModelConfig(const std::string& yaml, const std::string& where, int64_t nc, ModelConfig* out) {
  YAML::Node root;
  FFR_RETURN_IF_ERROR(ParseYaml(yaml, where, &root));
  const YAML::Node& doc = root;
  if (!doc.IsMap()) return Status::InvalidArgument(where + ": a model YAML is a mapping of nc, anchors, backbone, ...");
  for (const auto& entry : doc) {
    const std::string key = entry.first.Scalar();
    if (std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key) == std::end(kKnownKeys))
      return Status::InvalidArgument(YamlLocation(where, entry.first) + ": unknown key '" + key + "'");
  }
  for (const char* key : kRequiredKeys)
    if (!doc[key]) return Status::InvalidArgument(where + ": missing key '" + key + "'");

  ModelConfig config;
  config.source = where;
  config.name = "Model";
  if (!ReadInt(doc["nc"], &config.nc) || config.nc < 1 || config.nc > kMaxClasses)
    return Status::InvalidArgument(YamlLocation(where, doc["nc"]) + ": nc must be an integer from 1 to " +
                                   std::to_string(kMaxClasses));
  if (nc > kMaxClasses)
    return Status::InvalidArgument(where + ": " + std::to_string(nc) + " classes, more than " +
                                   std::to_string(kMaxClasses));
  if (nc > 0) config.nc = nc;
  if (!ReadDouble(doc["depth_multiple"], &config.depth_multiple) || config.depth_multiple <= 0)
    return Status::InvalidArgument(YamlLocation(where, doc["depth_multiple"]) + ": depth_multiple must be a number > 0");
  if (!ReadDouble(doc["width_multiple"], &config.width_multiple) || config.width_multiple <= 0)
    return Status::InvalidArgument(YamlLocation(where, doc["width_multiple"]) + ": width_multiple must be a number > 0");
  if (doc["channel_multiple"] && (!ReadInt(doc["channel_multiple"], &config.channel_multiple) ||
                                  config.channel_multiple < 1 || config.channel_multiple > kMaxChannels))
    return Status::InvalidArgument(YamlLocation(where, doc["channel_multiple"]) +
                                   ": channel_multiple must be an integer from 1 to " + std::to_string(kMaxChannels));
  if (doc["ch"] && (!ReadInt(doc["ch"], &config.ch) || config.ch < 1 || config.ch > kMaxChannels))
    return Status::InvalidArgument(YamlLocation(where, doc["ch"]) + ": ch must be an integer from 1 to " +
                                   std::to_string(kMaxChannels));
  if (doc["activation"]) {
    if (!doc["activation"].IsScalar())
      return Status::InvalidArgument(YamlLocation(where, doc["activation"]) + ": activation must be e.g. nn.SiLU()");
    config.activation_text = doc["activation"].Scalar();
    FFR_RETURN_IF_ERROR(ParseActivation(config.activation_text, YamlLocation(where, doc["activation"]),
                                        &config.activation));
  }
  YamlAnchors anchors;
  FFR_RETURN_IF_ERROR(ParseAnchors(doc["anchors"], YamlLocation(where, doc["anchors"]), &anchors));

  for (const char* section : {"backbone", "head"}) {
    const YAML::Node& rows = doc[section];
    if (!rows.IsSequence())
      return Status::InvalidArgument(YamlLocation(where, rows) + ": " + section + " must be a list of rows");
    for (size_t r = 0; r < rows.size(); ++r) {
      LayerConfig layer;
      FFR_RETURN_IF_ERROR(RowParser(where, section, r, rows[r], config, anchors).Parse(&layer));
      config.layers.push_back(std::move(layer));
    }
  }

  if (config.layers.empty()) return Status::InvalidArgument(where + ": no rows in backbone and head");
  for (const LayerConfig& layer : config.layers) {
    const bool last = &layer == &config.layers.back();
    if (std::holds_alternative<DetectArgs>(layer.args) != last)
      return Status::InvalidArgument(where + ": layer " + std::to_string(layer.index) + " (" + layer.module +
                                     "): the last row, and only it, must be Detect");
  }
  std::set<int> save;
  for (const LayerConfig& layer : config.layers)
    for (int f : layer.from)
      if (f != -1) save.insert(f);
  config.save.assign(save.begin(), save.end());
  FFR_RETURN_IF_ERROR(CheckModelSize(&config));
  *out = std::move(config);
  return Status::OK();
}

ffr::Status LoadModelConfig(const std::string& path, int64_t nc, ModelConfig* out) {
  std::string text;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), path, &text));
  FFR_RETURN_IF_ERROR(ParseModelConfig(text, path, nc, out));
  // DetectionModel names itself after the file: yolov5s.yaml -> "YOLOv5s".
  std::string stem = path.substr(path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.rfind('.'));
  for (size_t at = stem.find("yolov5"); at != std::string::npos; at = stem.find("yolov5", at + 6))
    stem.replace(at, 6, "YOLOv5");
  out->name = stem;
  return Status::OK();
}

namespace {

template <size_t... I>
std::string JoinModuleNames(std::index_sequence<I...>) {
  std::string names;
  ((names += std::string(I ? ", " : "") + std::variant_alternative_t<I, LayerArgs>::kName), ...);
  return names;
}

}  // namespace

std::string ModuleNames() { return JoinModuleNames(std::make_index_sequence<std::variant_size_v<LayerArgs>>()); }

std::string ModelSizeText(double parameters) {
  // The count as an integer while int64 holds it exactly (a YAML's can be far more), else as 4.7e+30.
  char text[96];
  if (parameters < 9e15) {
    std::snprintf(text, sizeof(text), "%lld parameters", static_cast<long long>(parameters));
  } else {
    std::snprintf(text, sizeof(text), "%.2g parameters", parameters);
  }
  const double gib = parameters * 4 / (1 << 30);
  std::snprintf(text + std::strlen(text), sizeof(text) - std::strlen(text),
                gib < 100 ? ", %.3g GiB as float32" : ", %.0f GiB as float32", gib);
  return text;
}

std::string ResolveModelYaml(const std::string& name_or_path) { return ResolveConfig(name_or_path, "models"); }

Status CheckImgSize(int img_size, int stride, int* rounded, std::string* warning) {
  warning->clear();
  if (img_size <= 0) return Status::InvalidArgument("--img " + std::to_string(img_size) + ": must be positive");
  *rounded = (img_size + stride - 1) / stride * stride;
  if (*rounded != img_size)
    *warning = "--img-size " + std::to_string(img_size) + " must be multiple of max stride " + std::to_string(stride) +
               ", updating to " + std::to_string(*rounded);
  return Status::OK();
}

}  // namespace ffyolo
