#include "ffyolo/hyp.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include "ffr/env.h"
#include "ffyolo/yaml_parse.h"

namespace ffyolo {

namespace {

std::string FormatBound(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

struct HypKey {
  const char* name;
  double Hyp::*field;
  double min, max;   // the values that make sense
  bool min_allowed;  // false: min itself is out (a learning rate of 0 trains nothing)
};

constexpr double kAny = HUGE_VAL;

// Every key of an Ultralytics v7.0 hyp file, in its order.
constexpr HypKey kKeys[] = {
    {"lr0", &Hyp::lr0, 0, kAny, false},
    {"lrf", &Hyp::lrf, 0, kAny, false},
    {"momentum", &Hyp::momentum, 0, 1, true},
    {"weight_decay", &Hyp::weight_decay, 0, kAny, true},
    {"warmup_epochs", &Hyp::warmup_epochs, 0, kAny, true},
    {"warmup_momentum", &Hyp::warmup_momentum, 0, 1, true},
    {"warmup_bias_lr", &Hyp::warmup_bias_lr, 0, kAny, true},
    {"box", &Hyp::box, 0, kAny, true},
    {"cls", &Hyp::cls, 0, kAny, true},
    {"cls_pw", &Hyp::cls_pw, 0, kAny, false},
    {"obj", &Hyp::obj, 0, kAny, true},
    {"obj_pw", &Hyp::obj_pw, 0, kAny, false},
    {"iou_t", &Hyp::iou_t, 0, 1, true},
    {"anchor_t", &Hyp::anchor_t, 0, kAny, false},
    {"fl_gamma", &Hyp::fl_gamma, 0, kAny, true},
    {"hsv_h", &Hyp::hsv_h, 0, 1, true},
    {"hsv_s", &Hyp::hsv_s, 0, 1, true},
    {"hsv_v", &Hyp::hsv_v, 0, 1, true},
    {"degrees", &Hyp::degrees, 0, 180, true},
    {"translate", &Hyp::translate, 0, 1, true},
    {"scale", &Hyp::scale, 0, 1, true},
    {"shear", &Hyp::shear, 0, 90, true},
    {"perspective", &Hyp::perspective, 0, 0.01, true},
    {"flipud", &Hyp::flipud, 0, 1, true},
    {"fliplr", &Hyp::fliplr, 0, 1, true},
    {"mosaic", &Hyp::mosaic, 0, 1, true},
    {"mixup", &Hyp::mixup, 0, 1, true},
    {"copy_paste", &Hyp::copy_paste, 0, 1, true},
};

// "must be > 0", "must be in [0, 1]".
std::string Range(const HypKey& key) {
  if (key.max == kAny) return std::string("must be ") + (key.min_allowed ? ">= " : "> ") + FormatBound(key.min);
  return "must be in " + std::string(key.min_allowed ? "[" : "(") + FormatBound(key.min) + ", " +
         FormatBound(key.max) + "]";
}

const HypKey* FindKey(const std::string& name) {
  for (const HypKey& key : kKeys)
    if (name == key.name) return &key;
  return nullptr;
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

ffr::Status Hyp::Load(const std::string& path, Hyp* out, std::vector<std::string>* defaulted) {
  std::string text;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), path, &text));
  return Parse(text, path, out, defaulted);
}

ffr::Status Hyp::Parse(const std::string& yaml, const std::string& where, Hyp* out,
                       std::vector<std::string>* defaulted) {
  YAML::Node root;
  FFR_RETURN_IF_ERROR(ParseYaml(yaml, where, &root));
  if (!root.IsMap()) return ffr::Status::InvalidArgument(where + ": expected a mapping of hyperparameter: value");
  Hyp hyp;
  for (const auto& kv : root) {
    const std::string name = kv.first.Scalar();
    if (name == "anchors")
      return ffr::Status::NotSupported(YamlLocation(where, kv.first) +
                                       ": custom anchors in hyp are not supported; put them in the model YAML");
    const HypKey* key = FindKey(name);
    if (key == nullptr)
      return ffr::Status::InvalidArgument(YamlLocation(where, kv.first) + ": unknown hyperparameter '" + name + "'");
    double value = 0;
    if (!kv.second.IsScalar() || !YAML::convert<double>::decode(kv.second, value) || !std::isfinite(value))
      return ffr::Status::InvalidArgument(YamlLocation(where, kv.second) + ": " + name + " must be a finite number, not '" +
                                          YAML::Dump(kv.second) + "'");
    if (value < key->min || (value == key->min && !key->min_allowed) || value > key->max)
      return ffr::Status::InvalidArgument(YamlLocation(where, kv.second) + ": " + name + " " + Range(*key) + ", not " +
                                          FormatBound(value));
    hyp.*(key->field) = value;
  }
  if (defaulted != nullptr) {
    defaulted->clear();
    for (const HypKey& key : kKeys)
      if (!root[key.name]) defaulted->push_back(key.name);
  }
  *out = hyp;
  return ffr::Status::OK();
}

std::vector<std::pair<std::string, double>> Hyp::Values() const {
  std::vector<std::pair<std::string, double>> values;
  for (const HypKey& key : kKeys) values.emplace_back(key.name, this->*(key.field));
  return values;
}

std::string Hyp::ToYaml() const {
  std::string yaml;
  for (const auto& [name, value] : Values()) yaml += name + ": " + FormatNumber(value) + "\n";
  return yaml;
}

}  // namespace ffyolo
