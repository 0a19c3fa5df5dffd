// COCO instances JSON → SourceSplit, following COCO's own conventions:
// categories sorted by id give the contiguous class indices (YOLO's order),
// bbox [x, y, w, h] in pixels becomes a normalized centre box, crowd boxes are
// kept (COCOeval's ignore regions) and images are ordered by id.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "source_layouts.h"

namespace ffyolo::source_internal {

namespace {

using json = nlohmann::json;

struct CocoImage {
  int64_t id = 0;
  std::string file_name;
  uint32_t width = 0, height = 0;
};

struct CocoAnnotation {
  int64_t id = -1;
  int64_t image_id = 0;
  int64_t category_id = 0;
  double bbox[4] = {0, 0, 0, 0};
  double area = 0;
  bool iscrowd = false;
};

struct CocoCategory {
  int64_t id = 0;
  std::string name;
};

bool GetInt(const json& object, const char* key, int64_t* value) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return false;
  if (it->is_number_float()) {
    const double d = it->get<double>();
    if (d != std::floor(d) || std::fabs(d) > 9e15) return false;
    *value = static_cast<int64_t>(d);
  } else {
    *value = it->get<int64_t>();
  }
  return true;
}

bool GetDouble(const json& object, const char* key, double* value) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return false;
  *value = it->get<double>();
  return std::isfinite(*value);
}

// Collects the entries of "images", "annotations" and "categories" as the
// parser finishes each one and drops them from the DOM, along with the
// segmentation polygons and the other top-level keys: train2017's 450 MB JSON
// never exists in memory, only the fields below do.
class CocoCollector {
 public:
  explicit CocoCollector(std::string file) : file_(std::move(file)) {}

  // The nlohmann::json parser callback.
  bool OnEvent(int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key) {
      const std::string& key = parsed.get_ref<const std::string&>();
      section_ = key == "images" ? kImages : key == "annotations" ? kAnnotations
               : key == "categories" ? kCategories : kOther;
      return section_ != kOther;
    }
    if (depth == 3 && event == json::parse_event_t::key && section_ == kAnnotations)
      return parsed.get_ref<const std::string&>() != "segmentation";
    if (depth != 2 || section_ == kOther) return true;
    const bool entry_end = event == json::parse_event_t::object_end || event == json::parse_event_t::value ||
                           event == json::parse_event_t::array_end;
    if (!entry_end) return true;
    const size_t index = count_[section_]++;
    if (!error.ok()) return false;
    if (!parsed.is_object()) {
      error = Entry(index, -1, "is not an object");
    } else if (section_ == kImages) {
      error = AddImage(parsed, index);
    } else if (section_ == kAnnotations) {
      error = AddAnnotation(parsed, index);
    } else {
      error = AddCategory(parsed, index);
    }
    return false;
  }

  std::vector<CocoImage> images;
  std::vector<CocoAnnotation> annotations;
  std::vector<CocoCategory> categories;
  Status error;  // the first malformed entry

 private:
  enum Section { kImages = 0, kAnnotations = 1, kCategories = 2, kOther = 3 };

  // "<file>: annotations[17] (id 42) <what>"
  Status Entry(size_t index, int64_t id, const std::string& what) const {
    static const char* const kNames[] = {"images", "annotations", "categories"};
    std::string where = file_ + ": " + kNames[section_] + "[" + std::to_string(index) + "]";
    if (id >= 0) where += " (id " + std::to_string(id) + ")";
    return Status::Corruption(where + " " + what);
  }

  Status AddImage(const json& entry, size_t index) {
    CocoImage image;
    if (!GetInt(entry, "id", &image.id)) return Entry(index, -1, "has no integer \"id\"");
    const auto name = entry.find("file_name");
    if (name == entry.end() || !name->is_string() || name->get_ref<const std::string&>().empty())
      return Entry(index, image.id, "has no \"file_name\"");
    image.file_name = name->get<std::string>();
    int64_t width = 0, height = 0;
    if (!GetInt(entry, "width", &width) || !GetInt(entry, "height", &height) || width <= 0 || height <= 0 ||
        width > UINT32_MAX || height > UINT32_MAX)
      return Entry(index, image.id, "has no positive integer \"width\" and \"height\"");
    image.width = static_cast<uint32_t>(width);
    image.height = static_cast<uint32_t>(height);
    images.push_back(std::move(image));
    return Status::OK();
  }

  Status AddAnnotation(const json& entry, size_t index) {
    CocoAnnotation ann;
    GetInt(entry, "id", &ann.id);
    if (!GetInt(entry, "image_id", &ann.image_id)) return Entry(index, ann.id, "has no integer \"image_id\"");
    if (!GetInt(entry, "category_id", &ann.category_id))
      return Entry(index, ann.id, "has no integer \"category_id\"");
    const auto bbox = entry.find("bbox");
    if (bbox == entry.end() || !bbox->is_array() || bbox->size() != 4)
      return Entry(index, ann.id, "has no \"bbox\" [x, y, w, h]");
    for (int k = 0; k < 4; ++k) {
      const json& v = (*bbox)[k];
      if (!v.is_number() || !std::isfinite(v.get<double>()))
        return Entry(index, ann.id, "has a non-numeric \"bbox\" value");
      ann.bbox[k] = v.get<double>();
    }
    // Exports without "area" get the box area, which is what COCOeval would
    // use for their area ranges anyway.
    if (entry.contains("area") && !GetDouble(entry, "area", &ann.area))
      return Entry(index, ann.id, "has a non-numeric \"area\"");
    if (!entry.contains("area")) ann.area = ann.bbox[2] * ann.bbox[3];
    if (const auto crowd = entry.find("iscrowd"); crowd != entry.end()) {
      if (crowd->is_boolean()) {
        ann.iscrowd = crowd->get<bool>();
      } else {
        int64_t value = 0;
        if (!GetInt(entry, "iscrowd", &value) || (value != 0 && value != 1))
          return Entry(index, ann.id, "has an \"iscrowd\" other than 0 or 1");
        ann.iscrowd = value == 1;
      }
    }
    annotations.push_back(ann);
    return Status::OK();
  }

  Status AddCategory(const json& entry, size_t index) {
    CocoCategory category;
    if (!GetInt(entry, "id", &category.id)) return Entry(index, -1, "has no integer \"id\"");
    const auto name = entry.find("name");
    if (name == entry.end() || !name->is_string()) return Entry(index, category.id, "has no \"name\"");
    category.name = name->get<std::string>();
    categories.push_back(std::move(category));
    return Status::OK();
  }

  const std::string file_;
  Section section_ = kOther;
  size_t count_[3] = {0, 0, 0};
};

Status ReadCocoJson(const std::string& file, CocoCollector* collector) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Status::IOError(file + ": cannot open");
  json root;
  try {
    root = json::parse(in, [collector](int depth, json::parse_event_t event, json& parsed) {
      return collector->OnEvent(depth, event, parsed);
    });
  } catch (const json::parse_error& e) {
    return Status::Corruption(file + ": malformed or truncated JSON at byte " + std::to_string(e.byte) + ": " +
                              e.what());
  } catch (const json::exception& e) {  // out_of_range: a number past double's range, such as 1e400
    return Status::Corruption(file + ": malformed JSON: " + e.what());
  }
  if (in.bad()) return Status::IOError(file + ": read error");
  FFR_RETURN_IF_ERROR(collector->error);
  if (!root.is_object()) return Status::Corruption(file + ": the top level is not a JSON object");
  for (const char* key : {"images", "annotations", "categories"}) {
    if (!root.contains(key)) return Status::Corruption(file + ": has no \"" + key + "\" array");
    if (!root[key].is_array()) return Status::Corruption(file + ": \"" + key + "\" is not an array");
  }
  return Status::OK();
}

// Categories sorted by id define the class indices; every split must agree.
Status SetClasses(const std::string& file, std::vector<CocoCategory> categories, SourceDataset* dataset,
                  std::unordered_map<int64_t, uint16_t>* class_of_category) {
  if (categories.empty() || categories.size() > 65536)
    return Status::Corruption(file + ": needs 1..65536 categories, has " + std::to_string(categories.size()));
  std::sort(categories.begin(), categories.end(),
            [](const CocoCategory& a, const CocoCategory& b) { return a.id < b.id; });
  std::vector<std::string> names;
  std::vector<int> ids;
  for (size_t k = 0; k < categories.size(); ++k) {
    if (k > 0 && categories[k].id == categories[k - 1].id)
      return Status::Corruption(file + ": category id " + std::to_string(categories[k].id) + " appears twice");
    if (categories[k].id < INT32_MIN || categories[k].id > INT32_MAX)
      return Status::Corruption(file + ": category id " + std::to_string(categories[k].id) + " is out of range");
    names.push_back(categories[k].name);
    ids.push_back(static_cast<int>(categories[k].id));
    (*class_of_category)[categories[k].id] = static_cast<uint16_t>(k);
  }
  if (dataset->category_ids.empty()) {
    dataset->class_names = std::move(names);
    dataset->category_ids = std::move(ids);
  } else if (ids != dataset->category_ids || names != dataset->class_names) {
    return Status::InvalidArgument(file + ": its categories differ from those of the splits read before it");
  }
  return Status::OK();
}

std::string ImageDirectory(const std::string& root, const std::string& split) {
  for (const std::string& dir : {root + "/" + split, root + "/images/" + split}) {
    std::error_code ec;
    if (std::filesystem::is_directory(dir, ec)) return dir;
  }
  return "";
}

// Annotations equal to an earlier one in all but their id: a merge or export gone
// wrong, most likely. Returns the id of the first such annotation in file order
// (-1 when none) and their number in *count. Sorts indices rather than keeping a
// set of keys: COCO's 860,000 annotations then cost 8 bytes each, not a tree node.
int64_t FindDuplicates(const std::vector<CocoAnnotation>& annotations, size_t* count) {
  const auto key = [&](size_t i) {
    const CocoAnnotation& a = annotations[i];
    return std::make_tuple(a.image_id, a.category_id, a.iscrowd, a.bbox[0], a.bbox[1], a.bbox[2], a.bbox[3]);
  };
  std::vector<size_t> order(annotations.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Equal keys end up adjacent, earliest first: every later one of a run is a duplicate.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto ka = key(a), kb = key(b);
    return ka != kb ? ka < kb : a < b;
  });
  *count = 0;
  size_t first = annotations.size();
  for (size_t k = 1; k < order.size(); ++k) {
    if (key(order[k]) != key(order[k - 1])) continue;
    ++*count;
    first = std::min(first, order[k]);
  }
  return first < annotations.size() ? annotations[first].id : -1;
}

}  // namespace

Status ScanCocoJsonSplit(const std::string& root, const std::string& split, SourceDataset* dataset,
                         SourceSplit* out) {
  const std::string file = root + "/annotations/instances_" + split + ".json";
  const std::string image_dir = ImageDirectory(root, split);
  if (image_dir.empty())
    return Status::NotFound(file + ": no image directory for split " + split + " (looked for " + root + "/" +
                            split + "/ and " + root + "/images/" + split + "/)");
  CocoCollector collector(file);
  FFR_RETURN_IF_ERROR(ReadCocoJson(file, &collector));
  std::unordered_map<int64_t, uint16_t> class_of_category;
  FFR_RETURN_IF_ERROR(SetClasses(file, std::move(collector.categories), dataset, &class_of_category));

  std::vector<CocoImage>& images = collector.images;
  std::sort(images.begin(), images.end(), [](const CocoImage& a, const CocoImage& b) { return a.id < b.id; });
  out->name = split;
  out->listing = file;
  out->images.resize(images.size());
  std::unordered_map<int64_t, size_t> position_of_image;
  for (size_t i = 0; i < images.size(); ++i) {
    if (i > 0 && images[i].id == images[i - 1].id)
      return Status::Corruption(file + ": image id " + std::to_string(images[i].id) + " appears twice");
    position_of_image[images[i].id] = i;
    SourceImage& image = out->images[i];
    image.path = image_dir + "/" + images[i].file_name;
    image.info.width = images[i].width;
    image.info.height = images[i].height;
    image.info.image_id = images[i].id;
    image.info.file_name = std::move(images[i].file_name);
  }

  size_t duplicates = 0;
  const int64_t first_duplicate_id = FindDuplicates(collector.annotations, &duplicates);
  // Each image's boxes get their exact room first: vectors grown one push at a time
  // would keep up to twice the space, for every image of the split, all through the pack.
  std::vector<uint32_t> boxes_of(images.size(), 0);
  for (const CocoAnnotation& ann : collector.annotations) {
    const auto it = position_of_image.find(ann.image_id);
    if (it != position_of_image.end()) ++boxes_of[it->second];
  }
  for (size_t i = 0; i < images.size(); ++i) {
    out->images[i].eval_boxes.reserve(boxes_of[i]);
    out->images[i].info.boxes.reserve(boxes_of[i]);
  }
  size_t empty_boxes = 0;
  int64_t first_empty_id = -1;
  for (const CocoAnnotation& ann : collector.annotations) {
    const std::string ann_name = "annotation id " + std::to_string(ann.id);
    const auto image_it = position_of_image.find(ann.image_id);
    if (image_it == position_of_image.end()) {
      out->orphan_labels.push_back(file + ": " + ann_name + " (image_id " + std::to_string(ann.image_id) +
                                   " is not in \"images\")");
      continue;
    }
    SourceImage& image = out->images[image_it->second];
    const auto class_it = class_of_category.find(ann.category_id);
    if (class_it == class_of_category.end()) {
      if (image.problem.ok())
        image.problem = Status::Corruption(file + ": " + ann_name + " (image " + image.info.file_name +
                                           "): unknown category_id " + std::to_string(ann.category_id));
      continue;
    }
    const double x = ann.bbox[0], y = ann.bbox[1], w = ann.bbox[2], h = ann.bbox[3];
    image.eval_boxes.push_back({class_it->second, ann.iscrowd, x, y, w, h, ann.area});
    // JSON2YOLO drops these too; they are not objects anyone can detect (but
    // pycocotools counts them, so their EvalBoxes stay).
    if (w <= 0 || h <= 0) {
      if (empty_boxes++ == 0) first_empty_id = ann.id;
      continue;
    }
    const double width = image.info.width, height = image.info.height;
    const double values[] = {(x + w / 2) / width, (y + h / 2) / height, w / width, h / height, ann.area};
    // The record stores floats: a bbox or area past float's range would be an infinite box.
    if (!std::all_of(std::begin(values), std::end(values),
                     [](double v) { return std::fabs(v) <= std::numeric_limits<float>::max(); })) {
      if (image.problem.ok())
        image.problem = Status::Corruption(file + ": " + ann_name + " (image " + image.info.file_name +
                                           "): bbox or area out of range");
      continue;
    }
    Box box;
    box.class_index = class_it->second;
    box.iscrowd = ann.iscrowd;
    box.cx = static_cast<float>(values[0]);
    box.cy = static_cast<float>(values[1]);
    box.w = static_cast<float>(values[2]);
    box.h = static_cast<float>(values[3]);
    box.area = static_cast<float>(values[4]);
    image.info.boxes.push_back(box);
  }
  for (SourceImage& image : out->images)
    if (!image.problem.ok()) image.info.boxes.clear(), image.eval_boxes.clear();
  out->has_eval_boxes = true;
  if (empty_boxes > 0)
    dataset->warnings.push_back(file + ": " + std::to_string(empty_boxes) +
                                " annotations have a bbox without width or height (the first: id " +
                                std::to_string(first_empty_id) + "); not trained on, but evaluated as COCO does");
  if (duplicates > 0)
    dataset->warnings.push_back(file + ": " + std::to_string(duplicates) +
                                " annotations repeat an earlier one of the same image, category and bbox (the "
                                "first: id " +
                                std::to_string(first_duplicate_id) + "); packed as given, so those objects count twice");
  if (!out->orphan_labels.empty())
    dataset->warnings.push_back(file + ": " + std::to_string(out->orphan_labels.size()) +
                                " annotations refer to images not in \"images\"; ignored");
  return Status::OK();
}

}  // namespace ffyolo::source_internal
