#include "ffyolo/coco_json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "ffr/env.h"

namespace ffyolo {
namespace {

using nlohmann::json;

ffr::Status ReadJson(const std::string& path, json* out) {
  std::string text;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), path, &text));  // a regular file only
  try {
    *out = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number past double's range (1e400)
    return ffr::Status::Corruption(path + ": not valid JSON: " + e.what());
  }
  return ffr::Status::OK();
}

// "<file>: annotations[12] (id 345)": where an entry's problem is reported.
std::string EntryName(const std::string& path, const char* list, size_t index, const json& entry) {
  std::string name = path + ": " + list + "[" + std::to_string(index) + "]";
  auto id = entry.find("id");
  if (id != entry.end() && id->is_number_integer()) name += " (id " + std::to_string(id->get<int64_t>()) + ")";
  return name;
}

ffr::Status Field(const std::string& where, const json& entry, const char* key, const json** out) {
  auto it = entry.find(key);
  if (it == entry.end()) return ffr::Status::Corruption(where + ": missing \"" + key + "\"");
  *out = &*it;
  return ffr::Status::OK();
}

ffr::Status Invalid(const std::string& where, const char* key, const json& value, const char* expected) {
  return ffr::Status::Corruption(where + ": \"" + key + "\" is " + value.dump() + ", expected " + expected);
}

// Ids are integers; an integral float such as 42.0 is accepted, as Python accepts it.
ffr::Status GetId(const std::string& where, const json& entry, const char* key, int64_t* out) {
  const json* value;
  FFR_RETURN_IF_ERROR(Field(where, entry, key, &value));
  if (value->is_number_integer()) {
    *out = value->get<int64_t>();
    return ffr::Status::OK();
  }
  if (value->is_number_float()) {
    const double d = value->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) {
      *out = static_cast<int64_t>(d);
      return ffr::Status::OK();
    }
  }
  return Invalid(where, key, *value, "an integer");
}

ffr::Status GetNumber(const std::string& where, const json& entry, const char* key, double* out) {
  const json* value;
  FFR_RETURN_IF_ERROR(Field(where, entry, key, &value));
  if (!value->is_number()) return Invalid(where, key, *value, "a number");
  *out = value->get<double>();
  return ffr::Status::OK();
}

ffr::Status GetBox(const std::string& where, const json& entry, std::array<double, 4>* out) {
  const json* value;
  FFR_RETURN_IF_ERROR(Field(where, entry, "bbox", &value));
  if (!value->is_array() || value->size() != 4) return Invalid(where, "bbox", *value, "[x, y, w, h]");
  for (size_t i = 0; i < 4; ++i) {
    if (!(*value)[i].is_number()) return Invalid(where, "bbox", *value, "[x, y, w, h] numbers");
    (*out)[i] = (*value)[i].get<double>();
  }
  return ffr::Status::OK();
}

ffr::Status GetList(const std::string& path, const json& root, const char* key, const json** out) {
  auto it = root.find(key);
  if (it == root.end()) return ffr::Status::Corruption(path + ": missing \"" + key + "\" list");
  if (!it->is_array()) return ffr::Status::Corruption(path + ": \"" + key + "\" is not a list");
  *out = &*it;
  return ffr::Status::OK();
}

}  // namespace

ffr::Status LoadCocoGroundTruth(const std::string& instances_json_path, CocoGroundTruth* out) {
  const std::string& path = instances_json_path;
  json root;
  FFR_RETURN_IF_ERROR(ReadJson(path, &root));
  if (!root.is_object()) return ffr::Status::Corruption(path + ": not a COCO instances file (no top-level object)");
  const json* images;
  const json* annotations;
  FFR_RETURN_IF_ERROR(GetList(path, root, "images", &images));
  FFR_RETURN_IF_ERROR(GetList(path, root, "annotations", &annotations));

  CocoGroundTruth gt;
  gt.image_ids.reserve(images->size());
  for (size_t i = 0; i < images->size(); ++i) {
    const json& image = (*images)[i];
    const std::string where = path + ": images[" + std::to_string(i) + "]";
    if (!image.is_object()) return ffr::Status::Corruption(where + ": not an object");
    int64_t id;
    FFR_RETURN_IF_ERROR(GetId(where, image, "id", &id));
    gt.image_ids.push_back(id);
  }
  gt.annotations.reserve(annotations->size());
  for (size_t i = 0; i < annotations->size(); ++i) {
    const json& entry = (*annotations)[i];
    if (!entry.is_object()) {
      return ffr::Status::Corruption(path + ": annotations[" + std::to_string(i) + "]: not an object");
    }
    const std::string where = EntryName(path, "annotations", i, entry);
    CocoAnnotation ann;
    FFR_RETURN_IF_ERROR(GetId(where, entry, "image_id", &ann.image_id));
    FFR_RETURN_IF_ERROR(GetId(where, entry, "category_id", &ann.category_id));
    FFR_RETURN_IF_ERROR(GetBox(where, entry, &ann.bbox));
    FFR_RETURN_IF_ERROR(GetNumber(where, entry, "area", &ann.area));
    auto crowd = entry.find("iscrowd");
    if (crowd != entry.end()) {
      if (crowd->is_boolean()) {
        ann.iscrowd = crowd->get<bool>();
      } else if (crowd->is_number_integer() && (crowd->get<int64_t>() == 0 || crowd->get<int64_t>() == 1)) {
        ann.iscrowd = crowd->get<int64_t>() == 1;
      } else {
        return Invalid(where, "iscrowd", *crowd, "0 or 1");
      }
    }
    gt.annotations.push_back(ann);
  }
  *out = std::move(gt);
  return ffr::Status::OK();
}

ffr::Status LoadCocoDetections(const std::string& results_json_path, std::vector<CocoDetection>* out) {
  const std::string& path = results_json_path;
  json root;
  FFR_RETURN_IF_ERROR(ReadJson(path, &root));
  if (!root.is_array()) {
    return ffr::Status::Corruption(path + ": not a COCO results file (expected a list of detections)");
  }
  std::vector<CocoDetection> dets;
  dets.reserve(root.size());
  for (size_t i = 0; i < root.size(); ++i) {
    const json& entry = root[i];
    const std::string where = path + ": detection " + std::to_string(i);
    if (!entry.is_object()) return ffr::Status::Corruption(where + ": not an object");
    CocoDetection det;
    FFR_RETURN_IF_ERROR(GetId(where, entry, "image_id", &det.image_id));
    FFR_RETURN_IF_ERROR(GetId(where, entry, "category_id", &det.category_id));
    FFR_RETURN_IF_ERROR(GetBox(where, entry, &det.bbox));
    FFR_RETURN_IF_ERROR(GetNumber(where, entry, "score", &det.score));
    dets.push_back(det);
  }
  *out = std::move(dets);
  return ffr::Status::OK();
}

}  // namespace ffyolo
