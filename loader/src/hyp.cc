#include "ffyolo/hyp.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>

#include "ffr/env.h"

namespace ffyolo {

namespace {

struct HypKey {
  const char* name;
  double Hyp::*field;
};

// Every key of an Ultralytics v7.0 hyp file, in its order.
constexpr HypKey kKeys[] = {
    {"lr0", &Hyp::lr0},
    {"lrf", &Hyp::lrf},
    {"momentum", &Hyp::momentum},
    {"weight_decay", &Hyp::weight_decay},
    {"warmup_epochs", &Hyp::warmup_epochs},
    {"warmup_momentum", &Hyp::warmup_momentum},
    {"warmup_bias_lr", &Hyp::warmup_bias_lr},
    {"box", &Hyp::box},
    {"cls", &Hyp::cls},
    {"cls_pw", &Hyp::cls_pw},
    {"obj", &Hyp::obj},
    {"obj_pw", &Hyp::obj_pw},
    {"iou_t", &Hyp::iou_t},
    {"anchor_t", &Hyp::anchor_t},
    {"fl_gamma", &Hyp::fl_gamma},
    {"hsv_h", &Hyp::hsv_h},
    {"hsv_s", &Hyp::hsv_s},
    {"hsv_v", &Hyp::hsv_v},
    {"degrees", &Hyp::degrees},
    {"translate", &Hyp::translate},
    {"scale", &Hyp::scale},
    {"shear", &Hyp::shear},
    {"perspective", &Hyp::perspective},
    {"flipud", &Hyp::flipud},
    {"fliplr", &Hyp::fliplr},
    {"mosaic", &Hyp::mosaic},
    {"mixup", &Hyp::mixup},
    {"copy_paste", &Hyp::copy_paste},
};

const HypKey* FindKey(const std::string& name) {
  for (const HypKey& key : kKeys)
    if (name == key.name) return &key;
  return nullptr;
}

// "path:line" for messages, so that an editor jumps to the offending key.
std::string Location(const std::string& where, const YAML::Node& node) {
  return where + ":" + std::to_string(node.Mark().line + 1);
}

// Shortest decimal that reads back as the same double, never in exponent form
// (PyYAML reads 5e-04 as a string) and with a ".0" on whole numbers, as
// Ultralytics' files write them (3.0, not 3).
std::string FormatNumber(double value) {
  char text[400];  // the longest fixed-notation double
  const auto result = std::to_chars(text, text + sizeof(text), value, std::chars_format::fixed);
  std::string s(text, result.ptr);
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

}  // namespace

ffr::Status Hyp::Load(const std::string& path, Hyp* out) {
  std::string text;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), path, &text));
  return Parse(text, path, out);
}

ffr::Status Hyp::Parse(const std::string& yaml, const std::string& where, Hyp* out) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    return ffr::Status::InvalidArgument(where + ": not valid YAML: " + e.what());
  }
  if (!root.IsMap()) return ffr::Status::InvalidArgument(where + ": expected a mapping of hyperparameter: value");
  Hyp hyp;
  for (const auto& kv : root) {
    const std::string name = kv.first.Scalar();
    if (name == "anchors")
      return ffr::Status::NotSupported(Location(where, kv.first) +
                                       ": custom anchors in hyp are not supported; put them in the model YAML");
    const HypKey* key = FindKey(name);
    if (key == nullptr)
      return ffr::Status::InvalidArgument(Location(where, kv.first) + ": unknown hyperparameter '" + name + "'");
    double value = 0;
    if (!kv.second.IsScalar() || !YAML::convert<double>::decode(kv.second, value) || !std::isfinite(value))
      return ffr::Status::InvalidArgument(Location(where, kv.second) + ": " + name + " must be a finite number, not '" +
                                          YAML::Dump(kv.second) + "'");
    hyp.*(key->field) = value;
  }
  *out = hyp;
  return ffr::Status::OK();
}

std::string Hyp::ToYaml() const {
  std::string yaml;
  for (const HypKey& key : kKeys) yaml += std::string(key.name) + ": " + FormatNumber(this->*(key.field)) + "\n";
  return yaml;
}

}  // namespace ffyolo
