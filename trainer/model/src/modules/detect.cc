#include "ffyolo/modules/detect.h"

#include <string>

#include "ffyolo/model_config.h"
#include "ffyolo/row_parser.h"

namespace ffyolo {

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, DetectArgs* out) {
  DetectArgs& a = *out;
  const YAML::Node& args = row.args();
  if (args.size() != 2) return row.Error("Detect takes [nc, anchors]");
  if (args[0].IsScalar() && args[0].Scalar() == "nc") {
    a.nc = row.config().nc;
  } else if (!ReadInt(args[0], &a.nc) || a.nc < 1 || a.nc > kMaxClasses) {
    return row.Error("args[0] must be nc or a class count from 1 to " + std::to_string(kMaxClasses));
  }
  YamlAnchors anchors;
  if (args[1].IsScalar() && args[1].Scalar() == "anchors") {
    anchors = row.anchors();
  } else {
    FFR_RETURN_IF_ERROR(ParseAnchors(args[1], row.Message("args[1]"), &anchors));
  }
  if (anchors.levels.empty()) {  // the integer form: Detect gets placeholder anchors, as in parse_model
    std::vector<double> placeholder;
    for (int64_t v = 0; v < anchors.count * 2; ++v) placeholder.push_back(static_cast<double>(v));
    anchors.levels.assign(layer->from.size(), placeholder);
  }
  if (anchors.levels.size() != layer->from.size())
    return row.Error("Detect reads " + std::to_string(layer->from.size()) + " layers but has " +
                     std::to_string(anchors.levels.size()) + " anchor levels");
  a.anchors = anchors.levels;
  std::vector<std::string> ch_items;
  for (int f : layer->from) {
    a.ch.push_back(row.Channels(f));
    ch_items.push_back(std::to_string(a.ch.back()));
  }
  layer->out_channels = anchors.na() * (a.nc + 5);
  layer->args_text = JoinRepr({std::to_string(a.nc), AnchorsRepr(a.anchors), JoinRepr(ch_items)});
  return ffr::Status::OK();
}

double Parameters(const DetectArgs& a) {
  const double outputs = static_cast<double>(a.anchors.at(0).size() / 2) * static_cast<double>(a.nc + 5);
  double count = 0;
  for (int64_t c : a.ch) count += (static_cast<double>(c) + 1) * outputs;  // weight and bias
  return count;
}

}  // namespace ffyolo
