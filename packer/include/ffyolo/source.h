// Source scanning: the packer's view of a COCO-style dataset on disk before it
// is packed. ScanSource reads the annotations (COCO instances JSON or
// Ultralytics YOLO label files) and lists every image with its boxes, holding
// only metadata: the packer then reads, checks and stores one image at a time.
#pragma once

#include <string>
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

struct SourceSplit {
  std::string name;  // e.g. "train2017"
  std::string listing;  // what lists the images: the COCO JSON, or images/<split> for YOLO
  std::vector<SourceImage> images;  // COCO JSON: by image id; YOLO: by file name
  bool has_eval_boxes = false;      // COCO JSON: every image's eval_boxes are given
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
  std::vector<std::string> warnings;     // things worth telling the user; not errors
};

// Scans the dataset under `root`. Fails when no layout is found (the message
// says what was looked for), when a requested split is absent, or when an
// annotation file is unreadable, malformed or lacks required fields; problems
// confined to one image are reported in its SourceImage::problem instead.
Status ScanSource(const std::string& root, const ScanOptions& options, SourceDataset* out);

}  // namespace ffyolo
