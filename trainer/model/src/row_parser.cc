#include "ffyolo/row_parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>
#include <variant>

#include "ffyolo/yaml_parse.h"

namespace ffyolo {

namespace {

using ffr::Status;

bool ReadBool(const YAML::Node& node, bool* value) {
  return node.IsScalar() && YAML::convert<bool>::decode(node, *value);
}

// utils/general.py::make_divisible.
int64_t MakeDivisible(double x, int64_t divisor) {
  return static_cast<int64_t>(std::ceil(x / static_cast<double>(divisor))) * divisor;
}

// parse_model's depth gain, max(round(n * gd), 1) for n > 1; std::nearbyint
// rounds half to even like Python's round().
int DepthGain(int64_t n, double gd) {
  if (n <= 1) return static_cast<int>(n);
  return std::max(static_cast<int>(std::nearbyint(static_cast<double>(n) * gd)), 1);
}

}  // namespace

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

RowParser::RowParser(const std::string& where, const char* section, size_t row, const YAML::Node& node,
                     const ModelConfig& config, const YamlAnchors& anchors)
    : node_(node), config_(config), anchors_(anchors) {
  YAML::Emitter text;
  text.SetSeqFormat(YAML::Flow);
  text << node;
  prefix_ = YamlLocation(where, node) + ": " + section + " row " + std::to_string(row) + " (layer " +
            std::to_string(config.layers.size()) + ") " + text.c_str() + ": ";
}

int64_t RowParser::Channels(int f) const {
  if (f == -1) return config_.layers.empty() ? config_.ch : config_.layers.back().out_channels;
  return config_.layers[static_cast<size_t>(f)].out_channels;
}

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
    if (layer->module != Args::kName) return ParseModule<I + 1>(layer);
    Args args;
    FFR_RETURN_IF_ERROR(ParseArgs(*this, layer, &args));  // modules/<module>.h
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

}  // namespace ffyolo
