// Source scanning: the packer's view of a COCO-style dataset on disk before it
// is packed. ScanSource reads the annotations (COCO instances JSON or
// Ultralytics YOLO label files) and lists every image with its boxes, holding
// only metadata: the packer then reads, checks and stores one image at a time.
#pragma once

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ffyolo/label_index.h"
#include "ffyolo/record.h"

namespace ffyolo {

enum class SourceLayout {
  kAuto,      // COCO JSON when annotations/instances_<split>.json exists, else YOLO txt
  kCocoJson,  // annotations/instances_<split>.json; images in <split>/ or images/<split>/
  kYoloTxt,   // images/<split>/..., labels/<split>/<stem>.txt, names from a data YAML
};

// "auto", "coco-json" or "yolo-txt".
const char* SourceLayoutName(SourceLayout layout);

struct ScanOptions {
  SourceLayout layout = SourceLayout::kAuto;
  std::vector<std::string> splits;  // empty: every split found
  std::string data_yaml;            // YOLO names; default root/data.yaml, else root/*.yaml
};

// One image of the source and what its annotations say about it.
struct SourceImage {
  std::string path;        // root + "/" + the image's path below the root
  std::string label_path;  // the YOLO .txt ("" for COCO JSON or when there is none)
  // Boxes, image_id and file_name. width/height come from the JSON; they are 0
  // for YOLO sources, where only the image itself knows its size.
  RecordInfo info;
  // YOLO sources carry no COCO area: the packer calls SetAreaFromBoxes (see
  // image_check.h) once the size is known.
  bool area_from_box = false;
  // COCO JSON sources: the image's annotations as the JSON gives them, for
  // the label index (see EvalBox); empty for YOLO sources.
  std::vector<EvalBox> eval_boxes;
  // A label problem of this image (bad line, unknown class, ...); the packer
  // fails or skips the image on it. info.boxes and eval_boxes are empty when set.
  Status problem;
};

// The images of one split, held as columns and handed out one SourceImage at a
// time. A pack holds every image's metadata from the scan to its end, beside
// the label index it builds; kept as a SourceImage each, the strings and
// vectors cost three times the boxes in them (docs/bench.md, "Packing memory").
class SourceImages {
 public:
  class Iterator;

  SourceImages() = default;
  // kCocoJson: the EvalBoxes are given (SetEvalBoxes) and the training boxes
  // derived from them; kYoloTxt: the training boxes are given, with label files
  // <label_dir>/<file stem>.txt. Image i is <image_dir>/<its file name>.
  SourceImages(SourceLayout layout, std::string image_dir, std::string label_dir);

  size_t size() const { return image_ids_.size(); }
  bool empty() const { return image_ids_.empty(); }
  // Image i, assembled from the columns (a copy).
  SourceImage operator[](size_t i) const;
  Iterator begin() const;
  Iterator end() const;

  // The folders the images and the YOLO label files are read from ("" when there is none).
  const std::string& image_dir() const { return image_dir_; }
  const std::string& label_dir() const { return label_dir_; }
  int64_t image_id(size_t i) const { return image_ids_[i]; }
  std::string_view file_name(size_t i) const;
  std::string path(size_t i) const { return image_dir_ + "/" + std::string(file_name(i)); }
  // The size the JSON gives (0 for YOLO sources).
  uint32_t width(size_t i) const { return widths_[i]; }
  uint32_t height(size_t i) const { return heights_[i]; }
  // Whether every image has its EvalBoxes (COCO JSON sources).
  bool has_eval_boxes() const { return layout_ == SourceLayout::kCocoJson; }
  // The boxes of all images, EvalBoxes for COCO JSON: a bound on their training boxes.
  size_t total_boxes() const { return begin_.back(); }

  // Building, in image order. Room for `images` images whose file names take
  // `name_bytes` in all, with `boxes` YOLO boxes, so that the columns are not
  // left with spare room.
  void Reserve(size_t images, size_t name_bytes, size_t boxes = 0);
  // Appends an image; `boxes` and `labelled` (it has a label file) only for
  // YOLO sources.
  void Add(int64_t image_id, std::string_view file_name, uint32_t width, uint32_t height,
           const std::vector<Box>& boxes = {}, bool labelled = false);
  // COCO JSON: image i's EvalBoxes are boxes[begin[i], begin[i + 1]).
  void SetEvalBoxes(std::vector<uint64_t> begin, std::vector<EvalBox> boxes);
  // Hands the EvalBoxes over, as SetEvalBoxes took them (those of images with
  // a problem included), to a label index: the images have none left.
  void TakeEvalBoxes(std::vector<uint64_t>* begin, std::vector<EvalBox>* boxes);
  // A problem of image i (see SourceImage::problem); the first one set stays.
  void SetProblem(size_t i, Status problem) { problems_.emplace(i, std::move(problem)); }

 private:
  SourceLayout layout_ = SourceLayout::kCocoJson;
  std::string image_dir_, label_dir_;
  std::vector<int64_t> image_ids_;
  std::vector<uint32_t> widths_, heights_;
  std::string names_;               // the file names, one after another
  std::vector<uint64_t> name_end_;  // where each ends in names_
  std::vector<uint64_t> begin_{0};  // where each image's boxes (YOLO) or EvalBoxes (COCO) begin
  std::vector<Box> boxes_;
  std::vector<EvalBox> eval_boxes_;
  std::vector<bool> labelled_;
  std::unordered_map<size_t, Status> problems_;  // few: a map, not a column
};

// Reads SourceImages in order, one copy at a time.
class SourceImages::Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = SourceImage;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = SourceImage;

  Iterator(const SourceImages* images, size_t i) : images_(images), i_(i) {}
  SourceImage operator*() const { return (*images_)[i_]; }
  Iterator& operator++() { return ++i_, *this; }
  bool operator!=(const Iterator& o) const { return i_ != o.i_; }
  bool operator==(const Iterator& o) const { return i_ == o.i_; }

 private:
  const SourceImages* images_;
  size_t i_;
};

inline SourceImages::Iterator SourceImages::begin() const { return Iterator(this, 0); }
inline SourceImages::Iterator SourceImages::end() const { return Iterator(this, size()); }

struct SourceSplit {
  std::string name;     // e.g. "train2017"
  std::string listing;  // what lists the images: the COCO JSON, or images/<split> for YOLO
  SourceImages images;  // COCO JSON: by image id; YOLO: by file name
  // Annotations without an image: YOLO label files whose image is missing, or
  // COCO annotations whose image_id is not in "images". Never an error.
  std::vector<std::string> orphan_labels;
};

struct SourceDataset {
  SourceLayout layout = SourceLayout::kAuto;  // the layout actually read
  std::string root;
  std::vector<std::string> class_names;  // class index -> name
  std::vector<int> category_ids;         // class index -> COCO category id
  std::vector<SourceSplit> splits;       // sorted by name
  // The data YAML's train: and val: as the splits they name (see Manifest::train); empty when it
  // names none, or names a split this scan leaves out (a warning says so).
  std::vector<std::string> train_splits, val_splits;
  std::vector<std::string> warnings;     // things worth telling the user; not errors
};

// Scans the dataset under `root`. Fails when no layout is found (the message
// says what was looked for), when a requested split is absent, or when an
// annotation file is unreadable, malformed or lacks required fields; problems
// confined to one image are reported in its SourceImage::problem instead.
Status ScanSource(const std::string& root, const ScanOptions& options, SourceDataset* out);

}  // namespace ffyolo
