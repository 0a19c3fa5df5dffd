#include "ffyolo/augmentation.h"

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

}  // namespace ffyolo
