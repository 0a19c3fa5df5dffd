#include "ffyolo/augmentation.h"

#include <cstdio>

namespace ffyolo {

const char* AugmentationName(Augmentation a) { return a == Augmentation::kYolov5 ? "yolov5" : "ultralytics8"; }

ffr::Status ParseAugmentation(const std::string& name, Augmentation* out) {
  for (Augmentation a : {Augmentation::kYolov5, Augmentation::kUltralytics8}) {
    if (name == AugmentationName(a)) {
      *out = a;
      return ffr::Status::OK();
    }
  }
  return ffr::Status::InvalidArgument("augmentation '" + name + "': expected yolov5 or ultralytics8");
}

namespace {

constexpr std::pair<const char*, double Ultralytics8Hyp::*> kUltralytics8Keys[] = {
    {"cutmix", &Ultralytics8Hyp::cutmix}, {"bgr", &Ultralytics8Hyp::bgr}};

}  // namespace

std::vector<std::pair<std::string, double>> Ultralytics8Hyp::Values() const {
  std::vector<std::pair<std::string, double>> values;
  for (const auto& [name, field] : kUltralytics8Keys) values.emplace_back(name, this->*field);
  return values;
}

bool Ultralytics8Hyp::Set(const std::string& name, double value) {
  for (const auto& [key, field] : kUltralytics8Keys) {
    if (name == key) {
      this->*field = value;
      return true;
    }
  }
  return false;
}

ffr::Status Ultralytics8Hyp::Check(Augmentation mode) const {
  for (const auto& [name, value] : Values()) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    if (!(value >= 0 && value <= 1))
      return ffr::Status::InvalidArgument(name + " " + text + ": a probability, in [0, 1]");
    if (value != 0 && mode != Augmentation::kUltralytics8)
      return ffr::Status::InvalidArgument(name + " " + text + ": Ultralytics 8's, built in the ultralytics8 "
                                          "augmentation only");
  }
  return ffr::Status::OK();
}

}  // namespace ffyolo
