// COCO instances JSON → SourceSplit, following COCO's own conventions:
// categories sorted by id give the contiguous class indices (YOLO's order),
// bbox [x, y, w, h] in pixels becomes a normalized centre box, crowd boxes are
// kept (COCOeval's ignore regions) and images are ordered by id.
#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "json_scanner.h"
#include "source_layouts.h"

namespace ffyolo::source_internal {

namespace {

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

// A deque: a vector grown to COCO's 860,000 annotations would hold up to twice
// their room while it moves them, and the scan is where a pack's memory peaks.
using Annotations = std::deque<CocoAnnotation>;

struct CocoCategory {
  int64_t id = 0;
  std::string name;
};

// What an entry's member holds, as far as the checks below look: the last of
// duplicate keys wins, as in a DOM. Arrays (only "bbox" is one) keep their size
// and first four values.
struct Field {
  enum Kind { kAbsent, kNumber, kString, kBool, kArray, kOther } kind = kAbsent;
  JsonScanner::Number number;
  std::string text;
  bool boolean = false;
  size_t size = 0;
  bool numbers_only = true;  // every array element among the first four is a number
  double values[4] = {0, 0, 0, 0};
};

bool ReadField(JsonScanner* json, Field* field) {
  switch (json->Peek()) {
    case JsonScanner::Type::kError: return false;
    case JsonScanner::Type::kNumber: field->kind = Field::kNumber; return json->ReadNumber(&field->number);
    case JsonScanner::Type::kString: field->kind = Field::kString; return json->ReadString(&field->text);
    case JsonScanner::Type::kTrue:
    case JsonScanner::Type::kFalse: field->kind = Field::kBool; return json->ReadBool(&field->boolean);
    case JsonScanner::Type::kArray:
      field->kind = Field::kArray;
      field->size = 0;
      field->numbers_only = true;
      if (!json->BeginArray()) return false;
      while (json->NextElement()) {
        const size_t k = field->size++;
        if (k < 4 && json->Peek() == JsonScanner::Type::kNumber) {
          JsonScanner::Number number;
          if (!json->ReadNumber(&number)) return false;
          field->values[k] = number.value;
        } else {
          if (k < 4) field->numbers_only = false;
          if (!json->SkipValue()) return false;
        }
      }
      return json->ok();
    default: field->kind = Field::kOther; return json->SkipValue();
  }
}

bool GetInt(const Field& field, int64_t* value) {
  if (field.kind != Field::kNumber) return false;
  if (field.number.is_integer) {
    *value = field.number.integer;
    return true;
  }
  const double d = field.number.value;
  if (d != std::floor(d) || std::fabs(d) > 9e15) return false;
  *value = static_cast<int64_t>(d);
  return true;
}

bool GetDouble(const Field& field, double* value) {
  if (field.kind != Field::kNumber) return false;
  *value = field.number.value;
  return std::isfinite(*value);
}

// Walks the instances JSON with JsonScanner and keeps the entries of "images",
// "annotations" and "categories" in the few fields below; every other value,
// the segmentation polygons above all, is only validated and skipped.
class CocoReader {
 public:
  explicit CocoReader(std::string file) : file_(std::move(file)) {}

  Status Read() {
    std::unique_ptr<JsonScanner> json;
    FFR_RETURN_IF_ERROR(JsonScanner::Open(ffr::Env::Default(), file_, &json));
    bool present[3] = {false, false, false}, is_array[3] = {false, false, false};
    const JsonScanner::Type top = json->Peek();
    if (top == JsonScanner::Type::kObject) {
      json->BeginObject();
      std::string key;
      while (json->NextKey(&key)) {
        section_ = key == "images" ? kImages : key == "annotations" ? kAnnotations
                 : key == "categories" ? kCategories : kOther;
        if (section_ == kOther) {
          json->SkipValue();
          continue;
        }
        // A repeated key: entries of every copy are read, the last copy is the one checked to be an array
        // (what nlohmann::json's streaming parse did).
        present[section_] = true;
        const JsonScanner::Type type = json->Peek();
        is_array[section_] = type == JsonScanner::Type::kArray;
        if (type == JsonScanner::Type::kArray) {
          json->BeginArray();
          while (json->NextElement()) ReadEntry(json.get());
        } else if (type == JsonScanner::Type::kObject) {
          // Its members' values were taken as entries too: that reports a bad one before "is not an array".
          json->BeginObject();
          while (json->NextKey(nullptr)) ReadEntry(json.get());
        } else {
          json->SkipValue();
        }
      }
    } else {
      json->SkipValue();
    }
    json->Finish();
    FFR_RETURN_IF_ERROR(json->status());
    FFR_RETURN_IF_ERROR(error);
    if (top != JsonScanner::Type::kObject) return Status::Corruption(file_ + ": the top level is not a JSON object");
    static const char* const kNames[] = {"images", "annotations", "categories"};
    for (int k = 0; k < 3; ++k) {
      if (!present[k]) return Status::Corruption(file_ + ": has no \"" + kNames[k] + "\" array");
      if (!is_array[k]) return Status::Corruption(file_ + ": \"" + kNames[k] + "\" is not an array");
    }
    return Status::OK();
  }

  std::vector<CocoImage> images;
  Annotations annotations;
  std::vector<CocoCategory> categories;
  Status error;  // the first malformed entry

 private:
  enum Section { kImages = 0, kAnnotations = 1, kCategories = 2, kOther = 3 };
  // The members an entry of any section may need.
  enum Key { kId, kFileName, kWidth, kHeight, kImageId, kCategoryId, kBbox, kArea, kIsCrowd, kName, kKeys };

  static Key KeyOf(Section section, const std::string& key) {
    if (key == "id") return kId;
    switch (section) {
      case kImages:
        return key == "file_name" ? kFileName : key == "width" ? kWidth : key == "height" ? kHeight : kKeys;
      case kAnnotations:
        return key == "image_id" ? kImageId : key == "category_id" ? kCategoryId : key == "bbox" ? kBbox
             : key == "area" ? kArea : key == "iscrowd" ? kIsCrowd : kKeys;
      case kCategories: return key == "name" ? kName : kKeys;
      default: return kKeys;
    }
  }

  void ReadEntry(JsonScanner* json) {
    const size_t index = count_[section_]++;
    if (!error.ok()) {  // the first bad entry is the one reported; the rest is only validated
      json->SkipValue();
      return;
    }
    const JsonScanner::Type type = json->Peek();
    if (type != JsonScanner::Type::kObject) {
      if (type != JsonScanner::Type::kError) error = Entry(index, -1, "is not an object");
      json->SkipValue();
      return;
    }
    for (Field& field : fields_) field.kind = Field::kAbsent;
    json->BeginObject();
    while (json->NextKey(&key_)) {
      const Key key = KeyOf(section_, key_);
      if (key == kKeys) {
        json->SkipValue();
      } else if (!ReadField(json, &fields_[key])) {
        return;
      }
    }
    if (!json->ok()) return;
    error = section_ == kImages ? AddImage(index) : section_ == kAnnotations ? AddAnnotation(index)
                                                                             : AddCategory(index);
  }

  // "<file>: annotations[17] (id 42) <what>"
  Status Entry(size_t index, int64_t id, const std::string& what) const {
    static const char* const kNames[] = {"images", "annotations", "categories"};
    std::string where = file_ + ": " + kNames[section_] + "[" + std::to_string(index) + "]";
    if (id >= 0) where += " (id " + std::to_string(id) + ")";
    return Status::Corruption(where + " " + what);
  }

  Status AddImage(size_t index) {
    CocoImage image;
    if (!GetInt(fields_[kId], &image.id)) return Entry(index, -1, "has no integer \"id\"");
    const Field& name = fields_[kFileName];
    if (name.kind != Field::kString || name.text.empty()) return Entry(index, image.id, "has no \"file_name\"");
    image.file_name = name.text;
    int64_t width = 0, height = 0;
    if (!GetInt(fields_[kWidth], &width) || !GetInt(fields_[kHeight], &height) || width <= 0 || height <= 0 ||
        width > UINT32_MAX || height > UINT32_MAX)
      return Entry(index, image.id, "has no positive integer \"width\" and \"height\"");
    image.width = static_cast<uint32_t>(width);
    image.height = static_cast<uint32_t>(height);
    images.push_back(std::move(image));
    return Status::OK();
  }

  Status AddAnnotation(size_t index) {
    CocoAnnotation ann;
    GetInt(fields_[kId], &ann.id);
    if (!GetInt(fields_[kImageId], &ann.image_id)) return Entry(index, ann.id, "has no integer \"image_id\"");
    if (!GetInt(fields_[kCategoryId], &ann.category_id))
      return Entry(index, ann.id, "has no integer \"category_id\"");
    const Field& bbox = fields_[kBbox];
    if (bbox.kind != Field::kArray || bbox.size != 4) return Entry(index, ann.id, "has no \"bbox\" [x, y, w, h]");
    if (!bbox.numbers_only) return Entry(index, ann.id, "has a non-numeric \"bbox\" value");
    std::copy(std::begin(bbox.values), std::end(bbox.values), ann.bbox);
    // Exports without "area" get the box area, which is what COCOeval would
    // use for their area ranges anyway.
    const Field& area = fields_[kArea];
    if (area.kind != Field::kAbsent && !GetDouble(area, &ann.area))
      return Entry(index, ann.id, "has a non-numeric \"area\"");
    if (area.kind == Field::kAbsent) ann.area = ann.bbox[2] * ann.bbox[3];
    const Field& crowd = fields_[kIsCrowd];
    if (crowd.kind == Field::kBool) {
      ann.iscrowd = crowd.boolean;
    } else if (crowd.kind != Field::kAbsent) {
      int64_t value = 0;
      if (!GetInt(crowd, &value) || (value != 0 && value != 1))
        return Entry(index, ann.id, "has an \"iscrowd\" other than 0 or 1");
      ann.iscrowd = value == 1;
    }
    annotations.push_back(ann);
    return Status::OK();
  }

  Status AddCategory(size_t index) {
    CocoCategory category;
    if (!GetInt(fields_[kId], &category.id)) return Entry(index, -1, "has no integer \"id\"");
    const Field& name = fields_[kName];
    if (name.kind != Field::kString) return Entry(index, category.id, "has no \"name\"");
    category.name = name.text;
    categories.push_back(std::move(category));
    return Status::OK();
  }

  const std::string file_;
  Section section_ = kOther;
  size_t count_[3] = {0, 0, 0};
  Field fields_[kKeys];
  std::string key_;
};

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

// Items whose key equals an earlier item's: their number; the first of them in
// index order goes to *first, the earlier item it repeats to *earlier. Sorts
// indices rather than keeping a set of keys: COCO's 860,000 annotations then
// cost 8 bytes each, not a tree node.
template <class Key>
size_t FindRepeats(size_t n, const Key& key, size_t* first, size_t* earlier) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  // Equal keys end up adjacent, earliest first: every later one of a run repeats the run's first.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto &ka = key(a), &kb = key(b);  // a reference to a file name, or a tuple kept alive
    return ka != kb ? ka < kb : a < b;
  });
  size_t count = 0, run = 0;
  *first = n;
  for (size_t k = 1; k < order.size(); ++k) {
    if (key(order[k]) != key(order[k - 1])) {
      run = k;
      continue;
    }
    ++count;
    if (order[k] < *first) *first = order[k], *earlier = order[run];
  }
  return count;
}

// Annotations equal to an earlier one in all but their id: a merge or export gone
// wrong, most likely. Returns the id of the first such annotation in file order
// (-1 when none) and their number in *count.
int64_t FindDuplicates(const Annotations& annotations, size_t* count) {
  size_t first = 0, earlier = 0;
  *count = FindRepeats(annotations.size(), [&](size_t i) {
    const CocoAnnotation& a = annotations[i];
    return std::make_tuple(a.image_id, a.category_id, a.iscrowd, a.bbox[0], a.bbox[1], a.bbox[2], a.bbox[3]);
  }, &first, &earlier);
  return *count > 0 ? annotations[first].id : -1;
}

// Images naming the file of an earlier one: the same pixels packed as two samples
// (each with its own id and boxes), most likely a merge gone wrong. Returns their
// number; *example describes the first one in image (id) order.
size_t FindRepeatedFileNames(const std::vector<CocoImage>& images, std::string* example) {
  size_t first = 0, earlier = 0;
  const size_t count = FindRepeats(
      images.size(), [&](size_t i) -> const std::string& { return images[i].file_name; }, &first, &earlier);
  if (count > 0)
    *example = "'" + images[first].file_name + "', image ids " + std::to_string(images[earlier].id) + " and " +
               std::to_string(images[first].id);
  return count;
}

// pycocotools indexes annotations by id: of two with one id it scores the
// later one twice and never the first, so evaluation could not match it.
Status CheckAnnotationIds(const std::string& file, const Annotations& annotations) {
  std::vector<int64_t> ids;
  ids.reserve(annotations.size());
  for (const CocoAnnotation& a : annotations)
    if (a.id >= 0) ids.push_back(a.id);
  std::sort(ids.begin(), ids.end());
  const auto repeated = std::adjacent_find(ids.begin(), ids.end());
  if (repeated == ids.end()) return Status::OK();
  return Status::Corruption(file + ": annotation id " + std::to_string(*repeated) +
                            " appears twice (pycocotools would score only one of them)");
}

}  // namespace

Status ScanCocoJsonSplit(const std::string& root, const std::string& split, SourceDataset* dataset,
                         SourceSplit* out) {
  const std::string file = root + "/annotations/instances_" + split + ".json";
  const std::string image_dir = ImageDirectory(root, split);
  if (image_dir.empty())
    return Status::NotFound(file + ": no image directory for split " + split + " (looked for " + root + "/" +
                            split + "/ and " + root + "/images/" + split + "/)");
  CocoReader coco(file);
  FFR_RETURN_IF_ERROR(coco.Read());
  std::unordered_map<int64_t, uint16_t> class_of_category;
  FFR_RETURN_IF_ERROR(SetClasses(file, std::move(coco.categories), dataset, &class_of_category));

  std::vector<CocoImage>& images = coco.images;
  std::sort(images.begin(), images.end(), [](const CocoImage& a, const CocoImage& b) { return a.id < b.id; });
  out->name = split;
  out->listing = file;
  out->images = SourceImages(SourceLayout::kCocoJson, image_dir, "");
  SourceImages& table = out->images;
  size_t name_bytes = 0;
  for (const CocoImage& image : images) name_bytes += image.file_name.size();
  table.Reserve(images.size(), name_bytes);
  FFR_RETURN_IF_ERROR(CheckAnnotationIds(file, coco.annotations));
  std::unordered_map<int64_t, size_t> position_of_image;
  for (size_t i = 0; i < images.size(); ++i) {
    if (i > 0 && images[i].id == images[i - 1].id)
      return Status::Corruption(file + ": image id " + std::to_string(images[i].id) + " appears twice");
    position_of_image[images[i].id] = i;
    table.Add(images[i].id, images[i].file_name, images[i].width, images[i].height);
    // A stranger's JSON must not make the packer read (and store) files outside the image folder.
    const std::filesystem::path name(images[i].file_name);
    if (name.is_absolute() || std::find(name.begin(), name.end(), "..") != name.end())
      table.SetProblem(i, Status::Corruption(file + ": image id " + std::to_string(images[i].id) + ": file_name '" +
                                             images[i].file_name + "' leads outside " + image_dir));
  }

  std::string repeated_file;
  if (const size_t repeats = FindRepeatedFileNames(images, &repeated_file); repeats > 0)
    dataset->warnings.push_back(file + ": " + std::to_string(repeats) +
                                " images name the file of an earlier image (the first: " + repeated_file +
                                "); each is packed as a sample of its own");
  size_t duplicates = 0;
  const int64_t first_duplicate_id = FindDuplicates(coco.annotations, &duplicates);

  // Each annotation of a known image and category becomes an EvalBox of its
  // image, in the JSON's order: counted per image first, then put in place.
  constexpr size_t kNotStored = static_cast<size_t>(-1);
  const auto eval_box = [](const CocoAnnotation& a, uint16_t class_index) {
    return EvalBox{class_index, a.iscrowd, a.bbox[0], a.bbox[1], a.bbox[2], a.bbox[3], a.area};
  };
  std::vector<size_t> image_of(coco.annotations.size(), kNotStored);
  std::vector<uint16_t> class_of(coco.annotations.size(), 0);
  std::vector<uint64_t> begin(images.size() + 1, 0);
  size_t empty_boxes = 0;
  int64_t first_empty_id = -1;
  for (size_t k = 0; k < coco.annotations.size(); ++k) {
    const CocoAnnotation& ann = coco.annotations[k];
    const auto ann_name = [&] { return "annotation id " + std::to_string(ann.id); };
    const auto image_it = position_of_image.find(ann.image_id);
    if (image_it == position_of_image.end()) {
      out->orphan_labels.push_back(file + ": " + ann_name() + " (image_id " + std::to_string(ann.image_id) +
                                   " is not in \"images\")");
      continue;
    }
    const size_t i = image_it->second;
    const auto class_it = class_of_category.find(ann.category_id);
    if (class_it == class_of_category.end()) {
      table.SetProblem(i, Status::Corruption(file + ": " + ann_name() + " (image " + images[i].file_name +
                                             "): unknown category_id " + std::to_string(ann.category_id)));
      continue;
    }
    image_of[k] = i;
    class_of[k] = class_it->second;
    ++begin[i + 1];
    const EvalBox eval = eval_box(ann, class_it->second);
    // Not trained on (see SourceImages), but pycocotools counts them.
    if (eval.w <= 0 || eval.h <= 0) {
      if (empty_boxes++ == 0) first_empty_id = ann.id;
      continue;
    }
    Box box;
    if (!CocoTrainingBox(eval, images[i].width, images[i].height, &box))
      table.SetProblem(i, Status::Corruption(file + ": " + ann_name() + " (image " + images[i].file_name +
                                             "): bbox or area out of range"));
  }
  for (size_t i = 0; i < images.size(); ++i) begin[i + 1] += begin[i];
  std::vector<EvalBox> eval_boxes(begin.back());
  std::vector<uint64_t> next(begin.begin(), begin.end() - 1);
  for (size_t k = 0; k < coco.annotations.size(); ++k) {
    if (image_of[k] != kNotStored) eval_boxes[next[image_of[k]]++] = eval_box(coco.annotations[k], class_of[k]);
  }
  table.SetEvalBoxes(std::move(begin), std::move(eval_boxes));
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

bool CocoTrainingBox(const EvalBox& annotation, uint32_t width, uint32_t height, Box* out) {
  const double x = annotation.x, y = annotation.y, w = annotation.w, h = annotation.h;
  const double values[] = {(x + w / 2) / width, (y + h / 2) / height, w / width, h / height, annotation.area};
  if (!std::all_of(std::begin(values), std::end(values),
                   [](double v) { return std::fabs(v) <= std::numeric_limits<float>::max(); }))
    return false;
  out->class_index = annotation.class_index;
  out->iscrowd = annotation.iscrowd;
  out->cx = static_cast<float>(values[0]);
  out->cy = static_cast<float>(values[1]);
  out->w = static_cast<float>(values[2]);
  out->h = static_cast<float>(values[3]);
  out->area = static_cast<float>(values[4]);
  return true;
}

}  // namespace ffyolo::source_internal
