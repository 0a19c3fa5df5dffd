// What a module's argument parser (ParseArgs in modules/<module>.cc) reads a
// backbone or head row with: the row's arguments and the typed readers whose
// messages name the file, line, section, row and layer, shared by every
// module so that they all word their errors alike. Torch-free.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ffr/status.h"
#include "ffyolo/model_config.h"

namespace ffyolo {

// Bounds far beyond any real model, so that the arithmetic on what a YAML
// says (scaled widths, Concat sums, Detect's na * (nc + 5), repeats, anchor
// placeholders) stays exact in int64 and small in memory: a YAML past them is
// refused. 65536 classes is also what a record's class index can hold.
inline constexpr int64_t kMaxClasses = 65536;
inline constexpr int64_t kMaxChannels = int64_t{1} << 20;
inline constexpr double kMaxRepeats = 1024;
inline constexpr int64_t kMaxAnchors = 1024;

bool IsNone(const YAML::Node& node);
bool ReadInt(const YAML::Node& node, int64_t* value);
bool ReadDouble(const YAML::Node& node, double* value);
// Python's repr of a value as yaml.safe_load and parse_model's eval() leave it.
std::string PyRepr(const YAML::Node& node);
std::string JoinRepr(const std::vector<std::string>& items);

// The YAML's `anchors`: pixel (w, h) pairs per level, or just the number of
// anchors per level (placeholders for AutoAnchor to replace).
struct YamlAnchors {
  std::vector<std::vector<double>> levels;
  int64_t count = 0;  // the integer form
  int64_t na() const { return levels.empty() ? count : static_cast<int64_t>(levels[0].size() / 2); }
};

// `context` starts the error message.
ffr::Status ParseAnchors(const YAML::Node& node, const std::string& context, YamlAnchors* out);
// Anchor levels as Python prints them: whole numbers as ints.
std::string AnchorsRepr(const std::vector<std::vector<double>>& levels);

// One row of the backbone or head while it is resolved.
class RowParser {
 public:
  RowParser(const std::string& where, const char* section, size_t row, const YAML::Node& node,
            const ModelConfig& config, const YamlAnchors& anchors);

  // The row into *layer: from, number, the module (its ParseArgs) and its arguments.
  ffr::Status Parse(LayerConfig* layer);

  // For the modules' ParseArgs: the row's args list, the model so far, the YAML's anchors.
  const YAML::Node& args() const { return args_; }
  const ModelConfig& config() const { return config_; }
  const YamlAnchors& anchors() const { return anchors_; }
  // "<file>:<line>: backbone row 3 (layer 3) [...]: " + what.
  std::string Message(const std::string& what) const { return prefix_ + what; }
  ffr::Status Error(const std::string& what) const { return ffr::Status::InvalidArgument(Message(what)); }
  // The output channels of `from` entry f.
  int64_t Channels(int f) const;
  ffr::Status SingleInput(const LayerConfig& layer) const;
  ffr::Status MaxArgs(size_t n, const char* signature) const;
  // args[i] into *value when the row has it (else *value keeps its default).
  ffr::Status IntArg(size_t i, const char* name, int64_t* value) const;
  ffr::Status BoolArg(size_t i, const char* name, bool* value) const;
  ffr::Status DoubleArg(size_t i, const char* name, double* value) const;
  // c1, c2 of the Conv family: args[0] scaled by the width multiple unless it is the output width.
  ffr::Status InOutChannels(const LayerConfig& layer, int64_t* c1, int64_t* c2) const;
  // The Conv family's args_text and out_channels: c1, c2 and the rest of the row's arguments.
  void ConvFamilyText(LayerConfig* layer, int64_t c1, int64_t c2, bool with_repeats) const;

 private:
  ffr::Status ParseFrom(LayerConfig* layer);
  // The module named in the row, found among LayerArgs' alternatives from the I-th on.
  template <size_t I = 0>
  ffr::Status ParseModule(LayerConfig* layer);

  const YAML::Node node_;
  const ModelConfig& config_;
  const YamlAnchors& anchors_;
  YAML::Node args_;
  std::string prefix_;
};

}  // namespace ffyolo
