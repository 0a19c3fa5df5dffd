#include "ffyolo/model_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>
#include <variant>

#include "ffr/env.h"
#include "ffyolo/config_path.h"
#include "ffyolo/module_shapes.h"
#include "ffyolo/yaml_parse.h"

namespace ffyolo {

namespace {

using ffr::Status;

// `inplace` is accepted and ignored: in-place activations only save memory.
constexpr const char* kKnownKeys[] = {"nc",   "depth_multiple", "width_multiple",   "anchors", "backbone",
                                      "head", "activation",     "channel_multiple", "ch",      "inplace"};
constexpr const char* kRequiredKeys[] = {"nc", "depth_multiple", "width_multiple", "anchors", "backbone", "head"};

// Bounds far beyond any real model, so that the arithmetic on what a YAML
// says (scaled widths, Concat sums, Detect's na * (nc + 5), repeats, anchor
// placeholders) stays exact in int64 and small in memory: a YAML past them is
// refused. 65536 classes is also what a record's class index can hold.
constexpr int64_t kMaxClasses = 65536;
constexpr int64_t kMaxChannels = int64_t{1} << 20;
constexpr double kMaxRepeats = 1024;
constexpr int64_t kMaxAnchors = 1024;


bool IsNone(const YAML::Node& node) {
  return node.IsNull() || (node.IsScalar() && node.Scalar() == "None");
}

bool ReadInt(const YAML::Node& node, int64_t* value) {
  if (!node.IsScalar()) return false;
  const std::string& s = node.Scalar();
  const auto result = std::from_chars(s.data(), s.data() + s.size(), *value);
  return result.ec == std::errc() && result.ptr == s.data() + s.size();
}

bool ReadDouble(const YAML::Node& node, double* value) {
  return node.IsScalar() && YAML::convert<double>::decode(node, *value) && std::isfinite(*value);
}

bool ReadBool(const YAML::Node& node, bool* value) {
  return node.IsScalar() && YAML::convert<bool>::decode(node, *value);
}

// Python's repr of a value as yaml.safe_load and parse_model's eval() leave it.
std::string PyRepr(const YAML::Node& node) {
  if (node.IsSequence()) {
    std::string s = "[";
    for (size_t i = 0; i < node.size(); ++i) s += (i ? ", " : "") + PyRepr(node[i]);
    return s + "]";
  }
  if (IsNone(node)) return "None";
  bool b;
  if (ReadBool(node, &b)) return b ? "True" : "False";
  double d;
  if (ReadDouble(node, &d)) return node.Scalar();
  return "'" + node.Scalar() + "'";
}

std::string JoinRepr(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s + "]";
}

std::string AnchorsRepr(const std::vector<std::vector<double>>& levels) {
  std::vector<std::string> level_reprs;
  for (const auto& level : levels) {
    std::vector<std::string> values;
    for (double v : level) {
      char text[32];
      // Whole numbers print as Python ints while int64 holds them exactly; others (1e77 too) as floats.
      const bool whole = v == std::floor(v) && std::fabs(v) < 9e15;
      const auto result = whole ? std::to_chars(text, text + sizeof(text), int64_t(v))
                                : std::to_chars(text, text + sizeof(text), v);
      values.emplace_back(text, result.ptr);
    }
    level_reprs.push_back(JoinRepr(values));
  }
  return JoinRepr(level_reprs);
}

// utils/general.py::make_divisible.
int64_t MakeDivisible(double x, int64_t divisor) {
  return static_cast<int64_t>(std::ceil(x / static_cast<double>(divisor))) * divisor;
}

// int(c2 * e), the hidden width of Bottleneck and C3, is whole groups of g and
// at most kMaxChannels.
bool HiddenWidthOk(int64_t c2, int64_t g, double e) {
  const double hidden = static_cast<double>(c2) * e;
  return g >= 1 && e > 0 && hidden >= 1 && hidden <= static_cast<double>(kMaxChannels) &&
         static_cast<int64_t>(hidden) % g == 0;
}

// parse_model's depth gain, max(round(n * gd), 1) for n > 1; std::nearbyint
// rounds half to even like Python's round().
int DepthGain(int64_t n, double gd) {
  if (n <= 1) return static_cast<int>(n);
  return std::max(static_cast<int>(std::nearbyint(static_cast<double>(n) * gd)), 1);
}

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

// The YAML's `anchors`: pixel (w, h) pairs per level, or just the number of
// anchors per level (placeholders for AutoAnchor to replace).
struct YamlAnchors {
  std::vector<std::vector<double>> levels;
  int64_t count = 0;  // the integer form
  int64_t na() const { return levels.empty() ? count : static_cast<int64_t>(levels[0].size() / 2); }
};

// `context` starts the error message.
Status ParseAnchors(const YAML::Node& node, const std::string& context, YamlAnchors* out) {
  const std::string bad = context + ": anchors must be a list of levels, each a list of pixel pairs "
                                    "w0,h0, w1,h1, ... of the same length, or a number of anchors";
  if (ReadInt(node, &out->count))
    return out->count > 0 && out->count <= kMaxAnchors ? Status::OK() : Status::InvalidArgument(bad);
  if (!node.IsSequence() || node.size() == 0) return Status::InvalidArgument(bad);
  for (const YAML::Node& level_node : node) {
    if (!level_node.IsSequence() || level_node.size() < 2 || level_node.size() % 2 != 0 ||
        level_node.size() != node[0].size())
      return Status::InvalidArgument(bad);
    std::vector<double> level;
    for (const YAML::Node& value : level_node) {
      double v;
      if (!ReadDouble(value, &v) || v <= 0) return Status::InvalidArgument(bad);
      level.push_back(v);
    }
    out->levels.push_back(std::move(level));
  }
  return Status::OK();
}

// One row of the backbone or head while it is resolved; its errors name the
// file, line, section, row and layer index.
class RowParser {
 public:
  RowParser(const std::string& where, const char* section, size_t row, const YAML::Node& node,
            const ModelConfig& config, const YamlAnchors& anchors)
      : node_(node), config_(config), anchors_(anchors) {
    YAML::Emitter text;
    text.SetSeqFormat(YAML::Flow);
    text << node;
    prefix_ = YamlLocation(where, node) + ": " + section + " row " + std::to_string(row) + " (layer " +
              std::to_string(config.layers.size()) + ") " + text.c_str() + ": ";
  }

  Status Parse(LayerConfig* layer);

 private:
  Status Error(const std::string& what) const { return Status::InvalidArgument(prefix_ + what); }
  Status ParseFrom(LayerConfig* layer);
  // The output channels of `from` entry f.
  int64_t Channels(int f) const {
    if (f == -1) return config_.layers.empty() ? config_.ch : config_.layers.back().out_channels;
    return config_.layers[static_cast<size_t>(f)].out_channels;
  }
  Status SingleInput(const LayerConfig& layer) const;
  Status MaxArgs(size_t n, const char* signature) const;
  Status IntArg(size_t i, const char* name, int64_t* value) const;
  Status BoolArg(size_t i, const char* name, bool* value) const;
  Status DoubleArg(size_t i, const char* name, double* value) const;
  // c1, c2 of the Conv family: args[0] scaled by the width multiple unless it is the output width.
  Status InOutChannels(const LayerConfig& layer, int64_t* c1, int64_t* c2) const;
  // The module named in the row, found among LayerArgs' alternatives from the I-th on.
  template <size_t I = 0>
  Status ParseModule(LayerConfig* layer);
  // One per module: its arguments from args_, and the row's out_channels and args_text.
  Status ParseArgs(LayerConfig* layer, ConvArgs* a);
  Status ParseArgs(LayerConfig* layer, BottleneckArgs* a);
  Status ParseArgs(LayerConfig* layer, C3Args* a);
  Status ParseArgs(LayerConfig* layer, SPPFArgs* a);
  Status ParseArgs(LayerConfig* layer, ConcatArgs* a);
  Status ParseArgs(LayerConfig* layer, UpsampleArgs* a);
  Status ParseArgs(LayerConfig* layer, DetectArgs* a);
  // The Conv family's args_text and out_channels: c1, c2 and the rest of the row's arguments.
  void ConvFamilyText(LayerConfig* layer, int64_t c1, int64_t c2, bool with_repeats) const;

  const YAML::Node node_;
  const ModelConfig& config_;
  const YamlAnchors& anchors_;
  YAML::Node args_;
  std::string prefix_;
};

Status RowParser::Parse(LayerConfig* layer) {
  if (!node_.IsSequence() || node_.size() != 4) return Error("a row is [from, number, module, args]");
  layer->index = static_cast<int>(config_.layers.size());
  FFR_RETURN_IF_ERROR(ParseFrom(layer));
  int64_t number;
  if (!ReadInt(node_[1], &number) || number < 1) return Error("number must be an integer >= 1");
  if (static_cast<double>(number) * config_.depth_multiple > kMaxRepeats)
    return Error("number times depth_multiple is over " + std::to_string(static_cast<int>(kMaxRepeats)));
  layer->repeats = DepthGain(number, config_.depth_multiple);
  layer->copies = layer->repeats;
  if (!node_[2].IsScalar()) return Error("module must be a name");
  layer->module = node_[2].Scalar();
  args_ = node_[3];
  if (!args_.IsSequence()) return Error("args must be a list");

  return ParseModule(layer);
}

template <size_t I>
Status RowParser::ParseModule(LayerConfig* layer) {
  if constexpr (I == std::variant_size_v<LayerArgs>) {
    return Status::NotSupported(prefix_ + "unknown module '" + layer->module + "' (supported: " + ModuleNames() +
                                ")");
  } else {
    using Args = std::variant_alternative_t<I, LayerArgs>;
    static_assert(kModuleName<Args> != nullptr, "a module needs its kModuleName");
    if (layer->module != kModuleName<Args>) return ParseModule<I + 1>(layer);
    Args args;
    FFR_RETURN_IF_ERROR(ParseArgs(layer, &args));
    layer->args = std::move(args);
    return Status::OK();
  }
}

Status RowParser::ParseFrom(LayerConfig* layer) {
  const YAML::Node& from = node_[0];
  std::vector<int64_t> written;
  int64_t f;
  if (ReadInt(from, &f)) {
    written.push_back(f);
  } else if (from.IsSequence() && from.size() > 0) {
    for (const YAML::Node& entry : from) {
      if (!ReadInt(entry, &f)) return Error("from must be a layer index or a list of them");
      written.push_back(f);
    }
  } else {
    return Error("from must be a layer index or a list of them");
  }
  const int i = layer->index;
  for (int64_t w : written) {
    // -1 stays: the running output. Other negatives count back from this row.
    const int64_t absolute = w < -1 ? i + w : w;
    if (w != -1 && (absolute < 0 || absolute >= i))
      return Error("from " + std::to_string(w) + " is not an earlier layer" +
                   (i == 0 ? " (layer 0 reads the image: from -1)" : " (0.." + std::to_string(i - 1) + " or -1)"));
    layer->from.push_back(static_cast<int>(absolute));
  }
  // Only now, as a flat list of integers: YAML aliases nested ten deep would
  // spell 10^10 numbers in a few hundred bytes.
  layer->from_text = PyRepr(from);
  return Status::OK();
}

Status RowParser::SingleInput(const LayerConfig& layer) const {
  if (layer.from.size() == 1 && !node_[0].IsSequence()) return Status::OK();
  return Error(layer.module + " takes one input: from must be a single layer index");
}

Status RowParser::MaxArgs(size_t n, const char* signature) const {
  if (args_.size() <= n) return Status::OK();
  return Error("too many args for " + std::string(signature));
}

Status RowParser::IntArg(size_t i, const char* name, int64_t* value) const {
  if (i >= args_.size()) return Status::OK();
  if (ReadInt(args_[i], value)) return Status::OK();
  return Error("args[" + std::to_string(i) + "] (" + name + ") must be an integer");
}

Status RowParser::BoolArg(size_t i, const char* name, bool* value) const {
  if (i >= args_.size()) return Status::OK();
  if (ReadBool(args_[i], value)) return Status::OK();
  return Error("args[" + std::to_string(i) + "] (" + name + ") must be True or False");
}

Status RowParser::DoubleArg(size_t i, const char* name, double* value) const {
  if (i >= args_.size()) return Status::OK();
  if (ReadDouble(args_[i], value)) return Status::OK();
  return Error("args[" + std::to_string(i) + "] (" + name + ") must be a number");
}

Status RowParser::InOutChannels(const LayerConfig& layer, int64_t* c1, int64_t* c2) const {
  FFR_RETURN_IF_ERROR(SingleInput(layer));
  *c1 = Channels(layer.from[0]);
  if (args_.size() == 0 || !ReadInt(args_[0], c2) || *c2 < 1)
    return Error("args[0] (output channels) must be an integer >= 1");
  const int64_t no = anchors_.na() * (config_.nc + 5);
  if (*c2 != no) {
    const double scaled = static_cast<double>(*c2) * config_.width_multiple;
    if (scaled > static_cast<double>(kMaxChannels))
      return Error("args[0] (output channels) times width_multiple is over " + std::to_string(kMaxChannels));
    *c2 = MakeDivisible(scaled, config_.channel_multiple);
  }
  return Status::OK();
}

void RowParser::ConvFamilyText(LayerConfig* layer, int64_t c1, int64_t c2, bool with_repeats) const {
  std::vector<std::string> items = {std::to_string(c1), std::to_string(c2)};
  if (with_repeats) items.push_back(std::to_string(layer->repeats));
  for (size_t i = 1; i < args_.size(); ++i) items.push_back(PyRepr(args_[i]));
  layer->args_text = JoinRepr(items);
  layer->out_channels = c2;
}

Status RowParser::ParseArgs(LayerConfig* layer, ConvArgs* a) {
  FFR_RETURN_IF_ERROR(InOutChannels(*layer, &a->c1, &a->c2));
  FFR_RETURN_IF_ERROR(MaxArgs(7, "Conv(c2, k, s, p, g, d, act)"));
  FFR_RETURN_IF_ERROR(IntArg(1, "k", &a->k));
  FFR_RETURN_IF_ERROR(IntArg(2, "s", &a->s));
  if (args_.size() > 3 && !IsNone(args_[3]) && (!ReadInt(args_[3], &a->p) || a->p < 0))
    return Error("args[3] (p) must be None or an integer >= 0");
  FFR_RETURN_IF_ERROR(IntArg(4, "g", &a->g));
  FFR_RETURN_IF_ERROR(IntArg(5, "d", &a->d));
  FFR_RETURN_IF_ERROR(BoolArg(6, "act", &a->act));
  if (a->k < 1 || a->s < 1 || a->g < 1 || a->d < 1 || a->c1 % a->g != 0 || a->c2 % a->g != 0)
    return Error("Conv needs k, s, g, d >= 1 and channels divisible by g");
  ConvFamilyText(layer, a->c1, a->c2, false);
  return Status::OK();
}

Status RowParser::ParseArgs(LayerConfig* layer, BottleneckArgs* a) {
  FFR_RETURN_IF_ERROR(InOutChannels(*layer, &a->c1, &a->c2));
  FFR_RETURN_IF_ERROR(MaxArgs(4, "Bottleneck(c2, shortcut, g, e)"));
  FFR_RETURN_IF_ERROR(BoolArg(1, "shortcut", &a->shortcut));
  FFR_RETURN_IF_ERROR(IntArg(2, "g", &a->g));
  FFR_RETURN_IF_ERROR(DoubleArg(3, "e", &a->e));
  if (!HiddenWidthOk(a->c2, a->g, a->e))
    return Error("Bottleneck needs g >= 1, e > 0 and int(c2*e) >= 1 divisible by g");
  ConvFamilyText(layer, a->c1, a->c2, false);
  return Status::OK();
}

Status RowParser::ParseArgs(LayerConfig* layer, C3Args* a) {
  FFR_RETURN_IF_ERROR(InOutChannels(*layer, &a->c1, &a->c2));
  a->n = layer->repeats;
  FFR_RETURN_IF_ERROR(MaxArgs(4, "C3(c2, shortcut, g, e)"));
  FFR_RETURN_IF_ERROR(BoolArg(1, "shortcut", &a->shortcut));
  FFR_RETURN_IF_ERROR(IntArg(2, "g", &a->g));
  FFR_RETURN_IF_ERROR(DoubleArg(3, "e", &a->e));
  if (!HiddenWidthOk(a->c2, a->g, a->e)) return Error("C3 needs g >= 1, e > 0 and int(c2*e) >= 1 divisible by g");
  layer->copies = 1;  // C3 takes n itself
  ConvFamilyText(layer, a->c1, a->c2, true);
  return Status::OK();
}

Status RowParser::ParseArgs(LayerConfig* layer, SPPFArgs* a) {
  FFR_RETURN_IF_ERROR(InOutChannels(*layer, &a->c1, &a->c2));
  FFR_RETURN_IF_ERROR(MaxArgs(2, "SPPF(c2, k)"));
  FFR_RETURN_IF_ERROR(IntArg(1, "k", &a->k));
  if (a->k < 1 || a->k % 2 == 0) return Error("SPPF needs an odd k");
  if (a->c1 < 2) return Error("SPPF needs at least 2 input channels");
  ConvFamilyText(layer, a->c1, a->c2, false);
  return Status::OK();
}

Status RowParser::ParseArgs(LayerConfig* layer, ConcatArgs* a) {
  FFR_RETURN_IF_ERROR(MaxArgs(1, "Concat(dimension)"));
  FFR_RETURN_IF_ERROR(IntArg(0, "dimension", &a->dim));
  if (a->dim != 1) return Error("Concat joins channels: dimension must be 1");
  layer->out_channels = 0;
  for (int f : layer->from) layer->out_channels += Channels(f);
  layer->args_text = PyRepr(args_);
  return Status::OK();
}

Status RowParser::ParseArgs(LayerConfig* layer, UpsampleArgs* a) {
  FFR_RETURN_IF_ERROR(SingleInput(*layer));
  FFR_RETURN_IF_ERROR(MaxArgs(3, "nn.Upsample(size, scale_factor, mode)"));
  if (args_.size() > 0 && !IsNone(args_[0])) return Error("nn.Upsample: only size None is supported");
  if (args_.size() < 2 || !ReadDouble(args_[1], &a->scale_factor) || a->scale_factor <= 0)
    return Error("args[1] (scale_factor) must be a positive number");
  if (args_.size() > 2 && args_[2].Scalar() != "nearest")
    return Status::NotSupported(prefix_ + "nn.Upsample: only mode 'nearest' is supported");
  layer->out_channels = Channels(layer->from[0]);
  layer->args_text = PyRepr(args_);
  return Status::OK();
}

Status RowParser::ParseArgs(LayerConfig* layer, DetectArgs* out) {
  DetectArgs& a = *out;
  if (args_.size() != 2) return Error("Detect takes [nc, anchors]");
  if (args_[0].IsScalar() && args_[0].Scalar() == "nc") {
    a.nc = config_.nc;
  } else if (!ReadInt(args_[0], &a.nc) || a.nc < 1 || a.nc > kMaxClasses) {
    return Error("args[0] must be nc or a class count from 1 to " + std::to_string(kMaxClasses));
  }
  YamlAnchors anchors;
  if (args_[1].IsScalar() && args_[1].Scalar() == "anchors") {
    anchors = anchors_;
  } else {
    FFR_RETURN_IF_ERROR(ParseAnchors(args_[1], prefix_ + "args[1]", &anchors));
  }
  if (anchors.levels.empty()) {  // the integer form: Detect gets placeholder anchors, as in parse_model
    std::vector<double> placeholder;
    for (int64_t v = 0; v < anchors.count * 2; ++v) placeholder.push_back(static_cast<double>(v));
    anchors.levels.assign(layer->from.size(), placeholder);
  }
  if (anchors.levels.size() != layer->from.size())
    return Error("Detect reads " + std::to_string(layer->from.size()) + " layers but has " +
                 std::to_string(anchors.levels.size()) + " anchor levels");
  a.anchors = anchors.levels;
  std::vector<std::string> ch_items;
  for (int f : layer->from) {
    a.ch.push_back(Channels(f));
    ch_items.push_back(std::to_string(a.ch.back()));
  }
  layer->out_channels = anchors.na() * (a.nc + 5);
  layer->args_text = JoinRepr({std::to_string(a.nc), AnchorsRepr(a.anchors), JoinRepr(ch_items)});
  return Status::OK();
}

// Fills in the parameter counts, or refuses a model over kMaxModelParameters
// before anything is allocated for it.
Status CheckModelSize(ModelConfig* config) {
  std::vector<double> rows;
  double total = 0;
  size_t largest = 0;
  for (const LayerConfig& layer : config->layers) {
    rows.push_back(static_cast<double>(layer.copies) * ParameterCount(layer.args));
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
  ((names += std::string(I ? ", " : "") + kModuleName<std::variant_alternative_t<I, LayerArgs>>), ...);
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
