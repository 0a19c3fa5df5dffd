#include "ffyolo/source.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <tuple>

#include "ffr/env.h"
#include "ffyolo/manifest.h"
#include "ffyolo/output/path_overlap.h"
#include "ffyolo/yaml_parse.h"
#include "source_layouts.h"

namespace fs = std::filesystem;

namespace ffyolo {

namespace {

// COCO's 80 detection classes in YOLO order, and the COCO category id of each
// (utils/general.py::coco80_to_coco91_class).
const char* const kCoco80Names[] = {
    "person",        "bicycle",      "car",           "motorcycle",    "airplane",     "bus",
    "train",         "truck",        "boat",          "traffic light", "fire hydrant", "stop sign",
    "parking meter", "bench",        "bird",          "cat",           "dog",          "horse",
    "sheep",         "cow",          "elephant",      "bear",          "zebra",        "giraffe",
    "backpack",      "umbrella",     "handbag",       "tie",           "suitcase",     "frisbee",
    "skis",          "snowboard",    "sports ball",   "kite",          "baseball bat", "baseball glove",
    "skateboard",    "surfboard",    "tennis racket", "bottle",        "wine glass",   "cup",
    "fork",          "knife",        "spoon",         "bowl",          "banana",       "apple",
    "sandwich",      "orange",       "broccoli",      "carrot",        "hot dog",      "pizza",
    "donut",         "cake",         "chair",         "couch",         "potted plant", "bed",
    "dining table",  "toilet",       "tv",            "laptop",        "mouse",        "remote",
    "keyboard",      "cell phone",   "microwave",     "oven",          "toaster",      "sink",
    "refrigerator",  "book",         "clock",         "vase",          "scissors",     "teddy bear",
    "hair drier",    "toothbrush"};
const int kCoco80To91[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 13, 14, 15, 16, 17,
                           18, 19, 20, 21, 22, 23, 24, 25, 27, 28, 31, 32, 33, 34, 35, 36,
                           37, 38, 39, 40, 41, 42, 43, 44, 46, 47, 48, 49, 50, 51, 52, 53,
                           54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 67, 70, 72, 73,
                           74, 75, 76, 77, 78, 79, 80, 81, 82, 84, 85, 86, 87, 88, 89, 90};
static_assert(std::size(kCoco80Names) == 80 && std::size(kCoco80To91) == 80);

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool IsRegularFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// Sorted names of the entries of `dir` that satisfy `keep`; empty when `dir`
// cannot be listed.
template <typename Keep>
std::vector<std::string> ListDirectory(const std::string& dir, Keep keep) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (keep(*it)) names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Splits with an annotations/instances_<split>.json.
std::vector<std::string> CocoJsonSplits(const std::string& root) {
  static const std::string kPrefix = "instances_", kSuffix = ".json";
  std::vector<std::string> splits;
  for (const std::string& name : ListDirectory(root + "/annotations", [](const fs::directory_entry& e) {
         std::error_code ec;
         return e.is_regular_file(ec);
       })) {
    if (name.size() > kPrefix.size() + kSuffix.size() && name.compare(0, kPrefix.size(), kPrefix) == 0 &&
        name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
      splits.push_back(name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size()));
  }
  return splits;
}

// Sub-directories of images/; the layout counts as YOLO only when one of them
// has a labels/ counterpart (*any_labelled).
std::vector<std::string> YoloSplits(const std::string& root, bool* any_labelled) {
  std::vector<std::string> splits = ListDirectory(root + "/images", [](const fs::directory_entry& e) {
    std::error_code ec;
    return e.is_directory(ec);
  });
  *any_labelled = std::any_of(splits.begin(), splits.end(), [&](const std::string& split) {
    return IsDirectory(root + "/labels/" + split);
  });
  return splits;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined.empty() ? "none" : joined;
}

Status SelectSplits(const std::string& root, SourceLayout layout, const std::vector<std::string>& found,
                    const std::vector<std::string>& requested, std::vector<std::string>* selected) {
  if (requested.empty()) {
    *selected = found;
    return Status::OK();
  }
  selected->clear();
  for (const std::string& split : requested) {
    if (std::find(found.begin(), found.end(), split) == found.end()) {
      const std::string looked_for = layout == SourceLayout::kCocoJson
                                         ? "annotations/instances_" + split + ".json"
                                         : "images/" + split + "/";
      return Status::NotFound(root + ": split '" + split + "' not found (looked for " + looked_for +
                              "; found: " + JoinNames(found) + ")");
    }
    if (std::find(selected->begin(), selected->end(), split) == selected->end())
      selected->push_back(split);
  }
  std::sort(selected->begin(), selected->end());
  return Status::OK();
}

// The data YAML: the explicit one, else root/data.yaml, else the first
// root/*.yaml (by name) with a `names` key. "" when there is none.
Status FindDataYaml(const std::string& root, const std::string& explicit_path, std::string* path) {
  if (!explicit_path.empty()) {
    std::error_code ec;
    if (fs::exists(explicit_path, ec) && !IsRegularFile(explicit_path))
      return Status::InvalidArgument("data YAML " + explicit_path + " is not a regular file");
    if (!IsRegularFile(explicit_path)) return Status::NotFound("data YAML " + explicit_path + " does not exist");
    *path = explicit_path;
    return Status::OK();
  }
  path->clear();
  if (IsRegularFile(root + "/data.yaml")) {
    *path = root + "/data.yaml";
    return Status::OK();
  }
  for (const std::string& name : ListDirectory(root, [](const fs::directory_entry& e) {
         std::error_code ec;
         const std::string ext = e.path().extension().string();
         return (ext == ".yaml" || ext == ".yml") && e.is_regular_file(ec);
       })) {
    try {
      if (YAML::LoadFile(root + "/" + name)["names"]) {
        *path = root + "/" + name;
        return Status::OK();
      }
    } catch (const YAML::Exception&) {
      // Not a data YAML; keep looking.
    }
  }
  return Status::OK();
}

// What ffyolo takes from an Ultralytics data YAML.
struct DataYaml {
  std::string path;                 // its path: key, "" when absent
  std::vector<std::string> names;   // class index -> name
  std::vector<int> category_ids;    // empty unless given
  std::vector<std::string> train, val;  // the entries of train: and val:, as written
};

// Reads `names` (a list, or a map 0..n-1 -> name), `nc` (must agree), the
// optional `category_ids`, and train: and val: (a path or a list of paths).
Status ReadDataYaml(const std::string& path, DataYaml* yaml) {
  std::vector<std::string>* names = &yaml->names;
  std::vector<int>* category_ids = &yaml->category_ids;
  std::string text;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), path, &text));
  YAML::Node root;
  FFR_RETURN_IF_ERROR(ParseYaml(text, path, &root));
  try {
    if (!root.IsMap()) return Status::InvalidArgument(path + ": not a data YAML (a map with `names` or `nc`)");
    const YAML::Node names_node = root["names"];
    // A null entry would read as a class named "null".
    const auto name_of = [&](const YAML::Node& name, const std::string& key) -> std::string {
      if (!name.IsScalar()) throw YAML::Exception(name.Mark(), "`names` entry " + key + " is not a name");
      return name.as<std::string>();
    };
    if (!names_node && root["nc"]) {  // v7.0's check_dataset names them class0, class1, ...
      const size_t nc = root["nc"].as<size_t>();
      for (size_t k = 0; k < nc && k <= 65536; ++k) names->push_back("class" + std::to_string(k));
    } else if (names_node.IsSequence()) {
      for (size_t k = 0; k < names_node.size(); ++k) names->push_back(name_of(names_node[k], std::to_string(k)));
    } else if (names_node.IsMap()) {
      std::vector<std::pair<int, std::string>> entries;
      for (const auto& entry : names_node)
        entries.emplace_back(entry.first.as<int>(), name_of(entry.second, entry.first.as<std::string>()));
      std::sort(entries.begin(), entries.end());
      for (size_t k = 0; k < entries.size(); ++k) {
        if (entries[k].first != static_cast<int>(k))
          return Status::InvalidArgument(path + ": `names` keys must be 0.." + std::to_string(entries.size() - 1) +
                                         " (class " + std::to_string(k) + " is missing or repeated)");
        names->push_back(entries[k].second);
      }
    } else {
      return Status::InvalidArgument(path + ": no `names` list or map");
    }
    if (names->empty() || names->size() > 65536)
      return Status::InvalidArgument(path + ": `names` must have 1..65536 classes, has " +
                                     std::to_string(names->size()));
    if (root["nc"] && root["nc"].as<size_t>() != names->size())
      return Status::InvalidArgument(path + ": nc is " + root["nc"].as<std::string>() + " but `names` has " +
                                     std::to_string(names->size()) + " entries");
    if (const YAML::Node ids = root["category_ids"]) {
      *category_ids = ids.as<std::vector<int>>();
      if (category_ids->size() != names->size())
        return Status::InvalidArgument(path + ": category_ids has " + std::to_string(category_ids->size()) +
                                       " entries but `names` has " + std::to_string(names->size()));
      if (std::set<int>(category_ids->begin(), category_ids->end()).size() != category_ids->size())
        return Status::InvalidArgument(path + ": category_ids has repeated ids");
    }
    if (const YAML::Node dataset_path = root["path"]; dataset_path && dataset_path.IsScalar())
      yaml->path = dataset_path.as<std::string>();
    for (const auto& [key, entries] : {std::pair{"train", &yaml->train}, std::pair{"val", &yaml->val}}) {
      const YAML::Node node = root[key];
      if (node.IsScalar()) entries->push_back(node.as<std::string>());
      for (size_t k = 0; node.IsSequence() && k < node.size(); ++k) {
        if (!node[k].IsScalar())
          throw YAML::Exception(node[k].Mark(), std::string("`") + key + "` entry is not a path");
        entries->push_back(node[k].as<std::string>());
      }
      if (node && !node.IsNull() && !node.IsScalar() && !node.IsSequence())
        throw YAML::Exception(node.Mark(), std::string("`") + key + "` is neither a path nor a list of paths");
      // Given but empty, it names no images: Ultralytics stops there, and so does ffyolo.
      if (node && (entries->empty() || std::find(entries->begin(), entries->end(), "") != entries->end()))
        throw YAML::Exception(node.Mark(), std::string("`") + key + "` names no images");
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(path + ": cannot read data YAML: " + e.what());
  }
  return Status::OK();
}

// COCO ids of YOLO classes that the YAML does not map: COCO's own ids when the
// names are COCO's 80, else 1..nc.
std::vector<int> DefaultCategoryIds(const std::vector<std::string>& names) {
  std::vector<int> ids(names.size());
  const bool coco80 = names.size() == 80 && std::equal(names.begin(), names.end(), std::begin(kCoco80Names));
  for (size_t k = 0; k < names.size(); ++k) ids[k] = coco80 ? kCoco80To91[k] : static_cast<int>(k) + 1;
  return ids;
}

// A split folder the data YAML may name: a split of the source (scanned, or left out of this pack
// by --splits: `scanned` null), and where its images are, resolved.
struct SplitFolder {
  std::string name;
  fs::path folder;
  const SourceSplit* scanned;
};

// The splits one train:/val: entry of the data YAML names, resolved against the source root (as
// Ultralytics resolves them against the YAML's path:). A folder entry must be a split's image folder
// (images/<split>); a .txt lists images one a line (relative lines against the list's folder, as
// ./images/<split>/<file> in Ultralytics' lists) and names the splits they are in, each of which it
// must list whole: ffyolo trains on whole splits, and images the list left out are not the data the
// user meant. Anything outside the source's split folders is refused.
Status SplitsOfEntry(const std::string& root, const std::vector<SplitFolder>& folders, const std::string& where,
                     const std::string& entry, std::vector<std::string>* splits) {
  const auto resolve = [&](const std::string& path) {
    return ResolvedPath(fs::path(path).is_absolute() ? path : root + "/" + path);
  };
  const auto names = [&] {
    std::vector<std::string> all;
    for (const SplitFolder& f : folders) all.push_back(f.name);
    return JoinNames(all);
  };
  if (fs::path(entry).extension() != ".txt") {
    const fs::path folder = resolve(entry);
    for (const SplitFolder& f : folders)
      if (f.folder == folder) {
        splits->push_back(f.name);
        return Status::OK();
      }
    return Status::InvalidArgument(where + "'" + entry + "' is not the image folder of a split of " + root +
                                   " (images/<split>/; splits: " + names() + ")");
  }
  const fs::path list = resolve(entry);
  std::string text;
  const Status read = ffr::ReadFileToString(ffr::Env::Default(), list.string(), &text);
  if (!read.ok())
    return Status::InvalidArgument(where + "cannot read the image list '" + entry + "': " + read.message());
  std::map<const SplitFolder*, std::set<std::string>> listed;  // split -> files below its folder
  std::map<std::string, std::pair<const SplitFolder*, fs::path>> parents;  // a line's folder, resolved once
  size_t line_number = 0;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.empty()) continue;
    const fs::path path = fs::path(line).is_absolute() ? fs::path(line) : list.parent_path() / line;
    auto [at, fresh] = parents.emplace(path.parent_path().string(), std::pair<const SplitFolder*, fs::path>());
    if (fresh) {
      const fs::path parent = ResolvedPath(path.parent_path().string());
      for (const SplitFolder& f : folders)
        if (PathWithin(parent, f.folder)) at->second = {&f, parent.lexically_relative(f.folder)};
    }
    const auto& [split, below] = at->second;
    if (split == nullptr)
      return Status::InvalidArgument(list.string() + ": line " + std::to_string(line_number) + " (" + line +
                                     ") is not an image in the image folder of a split of " + root + " (splits: " +
                                     names() + ")");
    listed[split].insert((below == "." ? path.filename() : below / path.filename()).string());
  }
  if (listed.empty()) return Status::InvalidArgument(where + "the image list '" + entry + "' lists no images");
  for (const auto& [split, files] : listed) {
    splits->push_back(split->name);
    if (split->scanned == nullptr) continue;  // left out of this pack: its caller says so
    const SourceImages& images = split->scanned->images;
    std::set<std::string> have;
    for (size_t i = 0; i < images.size(); ++i) have.insert(std::string(images.file_name(i)));
    for (const std::string& file : files)
      if (!have.count(file))
        return Status::InvalidArgument(list.string() + ": lists " + images.image_dir() + "/" + file +
                                       ", which is not an image of split " + split->name);
    if (files.size() < have.size())
      return Status::InvalidArgument(list.string() + ": lists " + std::to_string(files.size()) + " of the " +
                                     std::to_string(have.size()) + " images of split " + split->name +
                                     "; ffyolo trains on whole splits: name the folder instead, or move the "
                                     "images to train on into a split folder of their own");
  }
  return Status::OK();
}

// Source splits of the data YAML's train: and val: (DataYaml entries), given the folders of the
// splits on disk.
Status ReadSplitLists(const std::string& yaml_path, const DataYaml& yaml, const std::vector<SplitFolder>& folders,
                      SourceDataset* out) {
  // Ultralytics resolves the entries against path:; ffyolo against the source it packs. An absolute
  // path: naming another folder (a tree copied or moved since, or the YAML of another tree) is said,
  // as the entries are read as this source's folders (a relative path: is relative to the YOLOv5
  // checkout, which ffyolo cannot know).
  if (fs::path(yaml.path).is_absolute() && (!yaml.train.empty() || !yaml.val.empty()) &&
      ResolvedPath(yaml.path) != ResolvedPath(out->root))
    out->warnings.push_back(yaml_path + ": path: " + yaml.path + " is not the source " + out->root +
                            ": its train:/val: are read as the source's folders, not that tree's");
  for (const auto& [key, entries, splits] :
       {std::tuple{"train", &yaml.train, &out->train_splits}, std::tuple{"val", &yaml.val, &out->val_splits}}) {
    const std::string where = yaml_path + ": " + key + ": ";
    if (entries->empty()) continue;
    for (const std::string& entry : *entries)
      FFR_RETURN_IF_ERROR(SplitsOfEntry(out->root, folders, where, entry, splits));
    std::vector<std::string> sorted = *splits;
    std::sort(sorted.begin(), sorted.end());
    if (const auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
      return Status::InvalidArgument(where + "names split " + *twice + " twice");
    std::vector<std::string> left;
    for (const std::string& name : *splits)
      if (std::none_of(out->splits.begin(), out->splits.end(), [&](const SourceSplit& s) { return s.name == name; }))
        left.push_back(name);
    if (!left.empty()) {
      out->warnings.push_back(where + "names splits this pack leaves out (" + JoinNames(left) +
                              "): not recorded; name the splits to use when training (--train-split, --val-split)");
      splits->clear();
    }
  }
  return Status::OK();
}

// The folders of the splits on disk: each scanned split's image folder, and for those of `on_disk`
// this pack leaves out, <image root>/<split> for each of `image_roots` (where the layout may keep them).
std::vector<SplitFolder> SplitFolders(const SourceDataset& source, const std::vector<std::string>& on_disk,
                                      const std::vector<std::string>& image_roots) {
  std::vector<SplitFolder> folders;
  for (const SourceSplit& split : source.splits)
    folders.push_back({split.name, ResolvedPath(split.images.image_dir()), &split});
  for (const std::string& name : on_disk)
    if (std::none_of(source.splits.begin(), source.splits.end(), [&](const SourceSplit& s) { return s.name == name; }))
      for (const std::string& image_root : image_roots)
        folders.push_back({name, ResolvedPath(image_root + "/" + name), nullptr});
  return folders;
}

Status ScanYoloTxt(const std::string& root, const std::vector<std::string>& on_disk,
                   const std::vector<std::string>& splits, const ScanOptions& options, SourceDataset* out) {
  std::string yaml_path;
  FFR_RETURN_IF_ERROR(FindDataYaml(root, options.data_yaml, &yaml_path));
  DataYaml yaml;
  if (!yaml_path.empty()) FFR_RETURN_IF_ERROR(ReadDataYaml(yaml_path, &yaml));
  out->class_names = yaml.names;
  out->category_ids = yaml.category_ids;

  int max_class = -1;
  for (const std::string& name : splits) {
    SourceSplit split;
    int split_max_class = -1;
    FFR_RETURN_IF_ERROR(source_internal::ScanYoloTxtSplit(root, name, out->class_names.size(), &out->warnings,
                                                          &split, &split_max_class));
    max_class = std::max(max_class, split_max_class);
    out->splits.push_back(std::move(split));
  }

  if (yaml_path.empty()) {
    for (int k = 0; k <= max_class; ++k) out->class_names.push_back(std::to_string(k));
    out->warnings.push_back(root + ": no data YAML with `names` (looked for data.yaml and *.yaml): " +
                            std::to_string(out->class_names.size()) +
                            " classes inferred from the labels, named by index, category ids 1..nc");
  }
  if (out->category_ids.empty()) out->category_ids = DefaultCategoryIds(out->class_names);
  if (!yaml_path.empty())
    FFR_RETURN_IF_ERROR(ReadSplitLists(yaml_path, yaml, SplitFolders(*out, on_disk, {root + "/images"}), out));
  return Status::OK();
}

// A data YAML beside a COCO JSON tree (yolo-synth --yolo writes both; Ultralytics users pass theirs
// with --data): its train:/val: are recorded as for YOLO sources. The classes come from the JSON, so
// a YAML naming others is refused when given with --data (the user meant them) and only warned about
// when found; a YAML found, not given, that names no split of the tree is warned about too.
Status ReadCocoDataYaml(const ScanOptions& options, const std::vector<std::string>& on_disk, SourceDataset* out) {
  std::string yaml_path;
  FFR_RETURN_IF_ERROR(FindDataYaml(out->root, options.data_yaml, &yaml_path));
  if (yaml_path.empty()) return Status::OK();
  const bool given = !options.data_yaml.empty();
  DataYaml yaml;
  Status s = ReadDataYaml(yaml_path, &yaml);
  if (s.ok() && yaml.names != out->class_names)
    s = Status::InvalidArgument(yaml_path + ": its " + std::to_string(yaml.names.size()) +
                                " class names are not the COCO JSON's " + std::to_string(out->class_names.size()) +
                                " (" + JoinNames(out->class_names).substr(0, 200) +
                                "), which are packed; pack the YOLO labels with --layout yolo to use the YAML's");
  if (s.ok())  // a COCO split's images are in <split>/ or images/<split>/
    s = ReadSplitLists(yaml_path, yaml, SplitFolders(*out, on_disk, {out->root, out->root + "/images"}), out);
  if (s.ok() || given) return s;
  out->train_splits.clear();
  out->val_splits.clear();
  out->warnings.push_back(s.message() + " (the YAML was found, not given: its lists are not recorded)");
  return Status::OK();
}

}  // namespace

const char* SourceLayoutName(SourceLayout layout) {
  switch (layout) {
    case SourceLayout::kAuto: return "auto";
    case SourceLayout::kCocoJson: return "coco-json";
    case SourceLayout::kYoloTxt: return "yolo-txt";
  }
  return "unknown";
}

Status ScanSource(const std::string& root_arg, const ScanOptions& options, SourceDataset* out) {
  *out = SourceDataset();
  std::string root = root_arg;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  std::error_code ec;
  const fs::file_status root_status = fs::status(root, ec);
  if (!fs::is_directory(root_status)) {
    if (fs::exists(root_status)) return Status::InvalidArgument("dataset root " + root + " is not a directory");
    if (ec && ec != std::errc::no_such_file_or_directory)  // a loop of links, a name too long, no permission
      return Status::InvalidArgument("dataset root " + root + ": " + ec.message());
    return Status::NotFound("dataset root " + root + " does not exist");
  }

  const std::vector<std::string> coco_splits = CocoJsonSplits(root);
  bool yolo_labelled = false;
  const std::vector<std::string> yolo_splits = YoloSplits(root, &yolo_labelled);
  const std::string kCocoLooked = "annotations/instances_<split>.json (COCO JSON)";
  const std::string kYoloLooked = "images/<split>/ with labels/<split>/ (YOLO txt)";

  SourceLayout layout = options.layout;
  if (layout == SourceLayout::kAuto) {
    // Ultralytics' COCO tree: YOLO labels for every split, a JSON for val2017 only (for pycocotools).
    // Either layout leaves something out: the user chooses.
    std::vector<std::string> without_json;
    for (const std::string& split : yolo_splits)
      if (IsDirectory(root + "/labels/" + split) &&
          std::find(coco_splits.begin(), coco_splits.end(), split) == coco_splits.end())
        without_json.push_back(split);
    if (!coco_splits.empty() && !without_json.empty())
      return Status::InvalidArgument(
          root + ": both layouts are here: COCO JSON for " + JoinNames(coco_splits) + ", YOLO labels for " +
          JoinNames(without_json) + " too; choose one: --layout yolo packs every labelled split as Ultralytics "
          "trains on it, --layout coco packs only " + JoinNames(coco_splits) + " with the JSON's annotations");
    if (!coco_splits.empty()) {
      layout = SourceLayout::kCocoJson;
    } else if (yolo_labelled) {
      layout = SourceLayout::kYoloTxt;
    } else {
      return Status::NotFound(root + ": no dataset found: looked for " + kCocoLooked + " and " + kYoloLooked);
    }
  } else if (layout == SourceLayout::kCocoJson && coco_splits.empty()) {
    return Status::NotFound(root + ": no COCO JSON dataset: looked for " + kCocoLooked);
  } else if (layout == SourceLayout::kYoloTxt && !yolo_labelled) {
    return Status::NotFound(root + ": no YOLO txt dataset: looked for " + kYoloLooked);
  }

  out->layout = layout;
  out->root = root;
  std::vector<std::string> splits;
  FFR_RETURN_IF_ERROR(SelectSplits(root, layout, layout == SourceLayout::kCocoJson ? coco_splits : yolo_splits,
                                   options.splits, &splits));
  for (const std::string& name : splits)
    if (const Status named = CheckSplitName(name); !named.ok())
      return Status::InvalidArgument(root + ": " + named.message() + "; rename that folder");
  if (layout == SourceLayout::kYoloTxt) return ScanYoloTxt(root, yolo_splits, splits, options, out);

  for (const std::string& name : splits) {
    SourceSplit split;
    FFR_RETURN_IF_ERROR(source_internal::ScanCocoJsonSplit(root, name, out, &split));
    out->splits.push_back(std::move(split));
  }
  return ReadCocoDataYaml(options, coco_splits, out);
}

}  // namespace ffyolo
