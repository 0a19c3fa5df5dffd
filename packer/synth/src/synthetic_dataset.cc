#include "ffyolo/synthetic.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "ffr/env.h"
#include "ffyolo/output/own_folder.h"
#include "ffyolo/synthetic_classes.h"
#include "jpeg_encoder.h"
#include "synth_rng.h"

namespace ffyolo {

namespace fs = std::filesystem;
using ffr::Status;

namespace {

constexpr int kMinImageSide = 16;
constexpr int kMaxImageSide = 16384;
constexpr int kMaxObjectsPerImage = 1000;

// COCO train2017's image sizes as coco128 samples them (its 128 images, the first of train2017 by
// file name): {width, height, images}. 640x480 is the most common, 86% have a 640-pixel side, and
// the mean is 280,623 pixels per image.
struct CocoSize {
  int width, height, count;
};
constexpr CocoSize kCocoSizes[] = {
    {640, 480, 35}, {640, 427, 12}, {480, 640, 9}, {427, 640, 6}, {640, 426, 5}, {640, 428, 4}, {500, 375, 3},
    {640, 425, 3},  {640, 481, 2},  {333, 500, 1}, {359, 640, 1}, {360, 640, 1}, {375, 500, 1}, {381, 500, 1},
    {409, 500, 1},  {416, 640, 1},  {423, 640, 1}, {426, 640, 1}, {428, 640, 1}, {446, 640, 1}, {448, 336, 1},
    {460, 312, 1},  {473, 500, 1},  {481, 640, 1}, {500, 313, 1}, {500, 332, 1}, {500, 333, 1}, {500, 374, 1},
    {500, 495, 1},  {512, 640, 1},  {516, 640, 1}, {520, 640, 1}, {565, 640, 1}, {591, 640, 1}, {600, 500, 1},
    {600, 600, 1},  {612, 612, 1},  {638, 640, 1}, {640, 218, 1}, {640, 226, 1}, {640, 248, 1}, {640, 327, 1},
    {640, 360, 1},  {640, 389, 1},  {640, 406, 1}, {640, 407, 1}, {640, 416, 1}, {640, 424, 1}, {640, 446, 1},
    {640, 478, 1},  {640, 484, 1},  {640, 488, 1}, {640, 491, 1}, {640, 513, 1}, {640, 536, 1}, {640, 573, 1},
    {640, 580, 1},  {640, 611, 1}};

// A size drawn from kCocoSizes, each of the 128 images equally likely.
CocoSize DrawCocoSize(SynthRng* rng) {
  int total = 0;
  for (const CocoSize& size : kCocoSizes) total += size.count;
  int k = rng->UniformInt(0, total - 1);
  for (const CocoSize& size : kCocoSizes) {
    if (k < size.count) return size;
    k -= size.count;
  }
  return kCocoSizes[0];  // unreachable: k < total
}

struct Split {
  std::string name;
  int num_images;
  int64_t first_global_index;  // images of earlier splits, for dataset-wide image ids
};

struct ImageRecord {
  int64_t id = 0;
  std::string file_name;
  int width = 0;
  int height = 0;
  std::vector<SyntheticObject> objects;
};

Status ValidateSplitName(const std::string& name) {
  // A NUL ends the name the file system sees ("x\0y" writes into x).
  if (name.empty() || name.find_first_of(std::string("/\0", 2)) != std::string::npos || name == "." || name == ".." ||
      name == "annotations" || name == "images" || name == "labels") {
    return Status::InvalidArgument("split name '" + name +
                                   "' must be a plain folder name other than annotations, images, labels");
  }
  return Status::OK();
}

Status ValidateOptions(const SyntheticOptions& o) {
  auto bad = [](const std::string& what) { return Status::InvalidArgument("synthetic dataset: " + what); };
  if (o.output_dir.empty()) return bad("no output directory");
  if (o.train_images < 1) return bad("train_images must be at least 1");
  if (o.val_images < 0) return bad("val_images must not be negative");
  // Image ids are 2 * index + 1 and must stay within int32, like COCO's.
  if (static_cast<int64_t>(o.train_images) + o.val_images > (int64_t{1} << 30)) return bad("too many images");
  FFR_RETURN_IF_ERROR(ValidateSplitName(o.train_split));
  FFR_RETURN_IF_ERROR(ValidateSplitName(o.val_split));
  if (o.train_split == o.val_split) return bad("train and val splits share the name " + o.train_split);
  if (o.num_classes < 1 || o.num_classes > MaxSyntheticClasses()) {
    return bad("num_classes must be in [1, " + std::to_string(MaxSyntheticClasses()) + "], got " +
               std::to_string(o.num_classes));
  }
  auto side_ok = [](int side) { return side >= kMinImageSide && side <= kMaxImageSide; };
  if (o.coco_sizes) {
    if (o.width > 0 || o.height > 0) return bad("coco_sizes and a fixed image size exclude each other");
  } else if (o.width > 0 || o.height > 0) {
    if (!side_ok(o.width) || !side_ok(o.height)) {
      return bad("image size " + std::to_string(o.width) + "x" + std::to_string(o.height) + " is outside [" +
                 std::to_string(kMinImageSide) + ", " + std::to_string(kMaxImageSide) + "]");
    }
  } else if (!side_ok(o.min_size) || !side_ok(o.max_size) || o.min_size > o.max_size) {
    return bad("image size range [" + std::to_string(o.min_size) + ", " + std::to_string(o.max_size) +
               "] is empty or outside [" + std::to_string(kMinImageSide) + ", " + std::to_string(kMaxImageSide) +
               "]");
  }
  if (o.max_objects < 1 || o.max_objects > kMaxObjectsPerImage) return bad("max_objects must be in [1, 1000]");
  if (!(o.min_object_fraction > 0 && o.min_object_fraction <= o.max_object_fraction && o.max_object_fraction <= 1)) {
    return bad("object fractions need 0 < min <= max <= 1");
  }
  if (!(o.background_fraction >= 0 && o.background_fraction <= 1)) return bad("background_fraction must be in [0, 1]");
  if (o.jpeg_quality < 1 || o.jpeg_quality > 100) return bad("jpeg_quality must be in [1, 100]");
  if (o.num_threads < 0) return bad("num_threads must not be negative");
  return Status::OK();
}

std::vector<Split> SplitsOf(const SyntheticOptions& o) {
  std::vector<Split> splits = {{o.train_split, o.train_images, 0}};
  if (o.val_images > 0) splits.push_back({o.val_split, o.val_images, o.train_images});
  return splits;
}

fs::path ImageDir(const SyntheticOptions& o, const std::string& split) {
  return o.yolo_layout ? fs::path(o.output_dir) / "images" / split : fs::path(o.output_dir) / split;
}

fs::path LabelDir(const SyntheticOptions& o, const std::string& split) {
  return fs::path(o.output_dir) / "labels" / split;
}

fs::path JsonPath(const SyntheticOptions& o, const std::string& split) {
  return fs::path(o.output_dir) / "annotations" / ("instances_" + split + ".json");
}

// Writes to "<path>.tmp" and renames, so a killed run never leaves a truncated file under the final
// name. Not synced: a synthetic dataset is made again from its options, byte for byte, and a sync
// per image would make a COCO-sized one take minutes longer.
Status WriteFile(ffr::Env* env, const fs::path& path, const std::string& data) {
  const std::string tmp = path.string() + ".tmp";
  std::unique_ptr<ffr::WritableFile> file;
  FFR_RETURN_IF_ERROR(env->NewWritableFile(tmp, /*direct=*/false, &file));
  Status s = file->Append(data.data(), data.size());
  const Status closed = file->Close();
  if (s.ok()) s = closed;
  if (s.ok()) s = env->RenameFile(tmp, path.string());
  if (!s.ok()) env->RemoveFile(tmp);  // best effort: the error that matters is s
  return s;
}

// Image `index` of `split`: its id (odd, dataset-wide) and its files' stem.
int64_t ImageId(const Split& split, int index) { return 2 * (split.first_global_index + index) + 1; }

std::string FileStem(int64_t image_id) {
  char stem[32];
  std::snprintf(stem, sizeof(stem), "%012lld", static_cast<long long>(image_id));
  return stem;
}

// What a run wrote in its output folder, kept there: the options its file names follow from (the
// layout, the splits' names and sizes), so that --force replaces those files and no others. Written
// before the first image, so that a run that stopped midway is replaced as well.
constexpr char kRecordFile[] = ".yolo-synth";

std::string RecordOf(const SyntheticOptions& o) {
  return nlohmann::ordered_json{{"written_by", "yolo-synth"},
                                {"yolo_layout", o.yolo_layout},
                                {"train_split", o.train_split},
                                {"train_images", o.train_images},
                                {"val_split", o.val_split},
                                {"val_images", o.val_images}}
             .dump(2) +
         "\n";
}

// `record[key]` into *value when it is there and of T's type (an int: 0 or more).
template <typename T>
bool RecordField(const nlohmann::json& record, const char* key, T* value) {
  const auto it = record.find(key);
  if (it == record.end()) return false;
  if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) return false;
  } else if constexpr (std::is_same_v<T, int>) {
    if (!it->is_number_unsigned() || it->template get<uint64_t>() > INT_MAX) return false;
  } else if (!it->is_string()) {
    return false;
  }
  *value = it->template get<T>();
  return true;
}

// The options of the run whose record `o`'s output folder holds, as far as its files go.
Status ReadRecord(const SyntheticOptions& o, SyntheticOptions* earlier) {
  const std::string path = o.output_dir + "/" + kRecordFile;
  std::string text;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(o.env, path, &text));
  *earlier = o;
  const nlohmann::json record = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !RecordField(record, "yolo_layout", &earlier->yolo_layout) ||
      !RecordField(record, "train_split", &earlier->train_split) ||
      !RecordField(record, "train_images", &earlier->train_images) ||
      !RecordField(record, "val_split", &earlier->val_split) || !RecordField(record, "val_images", &earlier->val_images) ||
      !ValidateOptions(*earlier).ok())
    return Status::Corruption(path + ": not the record yolo-synth keeps of what it wrote here, so its files cannot "
                              "be told from the others; remove the folder, or choose another");
  return Status::OK();
}

// Whether `name`, in the image (`extension` ".jpg") or label (".txt") folder of `split`, is a file the
// run wrote there or its temporary: FileStem(ImageId(split, i)) + extension for an image i of the split.
bool WrittenName(const Split& split, std::string name, const std::string& extension) {
  constexpr size_t kStem = 12;  // FileStem's digits; ids stay below 2^31
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) name.resize(name.size() - 4);
  if (name.size() != kStem + extension.size() || name.compare(kStem, std::string::npos, extension) != 0) return false;
  int64_t id = 0;
  for (size_t k = 0; k < kStem; ++k) {
    if (name[k] < '0' || name[k] > '9') return false;
    id = id * 10 + (name[k] - '0');
  }
  const int64_t index = (id - 1) / 2 - split.first_global_index;
  return id % 2 == 1 && index >= 0 && index < split.num_images;
}

// Removes the files the run `o` describes wrote (and their temporaries), then the folders it made that
// are left empty: another file in them is someone else's, and stays. The folders' entries are matched
// against the run's names (not the names listed), so the work is what the folders hold, whatever
// sizes the record gives. yolo-synth makes no links: a folder of the run's that is one is someone
// else's, and refused before anything is removed, as the files through it are not the run's.
Status RemoveWritten(const SyntheticOptions& o) {
  const fs::path out(o.output_dir);
  std::vector<fs::path> files, folders;
  struct SplitFolder {
    fs::path folder;
    Split split;
    const char* extension;  // of the files the run wrote there
  };
  std::vector<SplitFolder> split_folders;
  for (const Split& split : SplitsOf(o)) {
    files.push_back(JsonPath(o, split.name));
    split_folders.push_back({ImageDir(o, split.name), split, ".jpg"});
    if (o.yolo_layout) split_folders.push_back({LabelDir(o, split.name), split, ".txt"});
    folders.push_back(ImageDir(o, split.name));
    if (o.yolo_layout) folders.push_back(LabelDir(o, split.name));
  }
  if (o.yolo_layout) {
    files.push_back(out / "data.yaml");
    folders.insert(folders.end(), {out / "images", out / "labels"});
  }
  folders.push_back(out / "annotations");
  for (const fs::path& folder : folders) {
    std::error_code ec;
    if (fs::is_symlink(folder, ec))
      return Status::AlreadyExists(folder.string() + ": a link, which yolo-synth never makes, so what it leads to is "
                                   "not yolo-synth's to replace; remove the link, or choose another folder");
  }
  for (const SplitFolder& f : split_folders) {
    if (!o.env->IsDirectory(f.folder.string())) continue;
    std::vector<std::string> names;
    FFR_RETURN_IF_ERROR(o.env->GetChildren(f.folder.string(), &names));
    for (const std::string& name : names)
      if (WrittenName(f.split, name, f.extension)) files.push_back(f.folder / name);
  }
  for (const fs::path& file : files)
    for (const std::string& path : {file.string(), file.string() + ".tmp"})
      FFR_RETURN_IF_ERROR(o.env->RemoveFile(path));
  for (const fs::path& folder : folders) {
    std::vector<std::string> left;
    if (!o.env->IsDirectory(folder.string())) continue;
    FFR_RETURN_IF_ERROR(o.env->GetChildren(folder.string(), &left));
    if (left.empty()) FFR_RETURN_IF_ERROR(o.env->RemoveTree(folder.string()));
  }
  return Status::OK();
}

// Refuses a folder of someone else's files, --force or not, and one of an earlier run unless forced;
// forced, removes what that run wrote (its record says what), so that no stale image survives and no
// old JSON describes a half-written new run, and leaves every other file alone. Then records this run.
Status PrepareOutputDir(const SyntheticOptions& o) {
  const auto own = [](const std::string& name) { return name == kRecordFile; };
  std::vector<std::string> entries;
  FFR_RETURN_IF_ERROR(CheckOwnFolder(o.env, o.output_dir, own, "a synthetic dataset yolo-synth wrote", &entries));
  if (!entries.empty()) {
    if (!o.force)
      return Status::AlreadyExists(o.output_dir + ": holds a synthetic dataset an earlier yolo-synth wrote; --force "
                                                  "replaces what it wrote there");
    SyntheticOptions earlier;
    FFR_RETURN_IF_ERROR(ReadRecord(o, &earlier));
    FFR_RETURN_IF_ERROR(RemoveWritten(earlier));
  }
  FFR_RETURN_IF_ERROR(o.env->CreateDirs(o.output_dir));
  FFR_RETURN_IF_ERROR(WriteFile(o.env, fs::path(o.output_dir) / kRecordFile, RecordOf(o)));
  std::vector<fs::path> dirs = {fs::path(o.output_dir) / "annotations"};
  for (const Split& split : SplitsOf(o)) {
    dirs.push_back(ImageDir(o, split.name));
    if (o.yolo_layout) dirs.push_back(LabelDir(o, split.name));
  }
  for (const fs::path& dir : dirs) FFR_RETURN_IF_ERROR(o.env->CreateDirs(dir.string()));
  return Status::OK();
}

bool IsBackgroundImage(int index, double fraction) {
  return std::floor((index + 1) * fraction) > std::floor(index * fraction);
}

// "cls cx cy w h" rows normalised by the image size, with '%g' like Ultralytics' JSON2YOLO.
std::string YoloLabels(const ImageRecord& image) {
  std::string rows;
  for (const SyntheticObject& object : image.objects) {
    char row[128];
    std::snprintf(row, sizeof(row), "%d %g %g %g %g\n", object.class_index,
                  (object.x + object.width / 2.0) / image.width, (object.y + object.height / 2.0) / image.height,
                  static_cast<double>(object.width) / image.width, static_cast<double>(object.height) / image.height);
    rows += row;
  }
  return rows;
}

Status GenerateImage(const SyntheticOptions& o, const Split& split, int index, JpegEncoder* encoder,
                     ImageRecord* record, int64_t* bytes) {
  const SyntheticSceneSpec spec = SyntheticSceneSpecFor(o, split.name, index);
  SyntheticScene scene = RenderSyntheticScene(spec);
  record->id = ImageId(split, index);
  const std::string stem = FileStem(record->id);
  record->file_name = stem + ".jpg";
  record->width = spec.width;
  record->height = spec.height;
  record->objects = std::move(scene.objects);

  std::string jpeg;
  FFR_RETURN_IF_ERROR(encoder->Encode(scene.rgb, o.jpeg_quality, o.subsampling,
                                      split.name + " image " + std::to_string(index) + " (" + record->file_name + ")",
                                      &jpeg));
  FFR_RETURN_IF_ERROR(WriteFile(o.env, ImageDir(o, split.name) / record->file_name, jpeg));
  *bytes = static_cast<int64_t>(jpeg.size());
  if (o.yolo_layout) {
    const std::string labels = YoloLabels(*record);
    FFR_RETURN_IF_ERROR(WriteFile(o.env, LabelDir(o, split.name) / (stem + ".txt"), labels));
    *bytes += static_cast<int64_t>(labels.size());
  }
  return Status::OK();
}

// Renders, encodes and writes the images of one split on a few threads; each image is
// a function of its index only, so the thread count never changes the output.
Status GenerateImages(const SyntheticOptions& o, const Split& split, std::vector<ImageRecord>* records,
                      int64_t* bytes) {
  records->assign(split.num_images, ImageRecord{});
  std::vector<int64_t> image_bytes(split.num_images, 0);
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mu;
  Status first_error;
  auto work = [&] {
    JpegEncoder encoder;
    for (int i = next++; i < split.num_images && !failed; i = next++) {
      Status s = GenerateImage(o, split, i, &encoder, &(*records)[i], &image_bytes[i]);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (first_error.ok()) first_error = s;
        failed = true;
      }
    }
  };
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int num_threads = std::min(o.num_threads > 0 ? o.num_threads : hardware, split.num_images);
  std::vector<std::thread> threads;
  for (int t = 1; t < num_threads; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  FFR_RETURN_IF_ERROR(first_error);
  for (int64_t b : image_bytes) *bytes += b;
  return Status::OK();
}

nlohmann::ordered_json CocoJson(const SyntheticOptions& o, const std::vector<ImageRecord>& records,
                                int64_t* next_annotation_id) {
  using Json = nlohmann::ordered_json;
  Json j;
  // Fixed values only: the output must not depend on the clock.
  j["info"] = {{"description", "ffyolo synthetic shapes, seed " + std::to_string(o.seed)},
               {"url", ""},
               {"version", "1.0"},
               {"year", 2017},
               {"contributor", "ffyolo yolo-synth"},
               {"date_created", "1970/01/01"}};
  j["licenses"] = Json::array(
      {{{"url", "https://creativecommons.org/publicdomain/zero/1.0/"}, {"id", 1}, {"name", "CC0 1.0 Universal"}}});
  Json& images = j["images"] = Json::array();
  Json& annotations = j["annotations"] = Json::array();
  for (const ImageRecord& image : records) {
    images.push_back({{"license", 1},
                      {"file_name", image.file_name},
                      {"height", image.height},
                      {"width", image.width},
                      {"id", image.id}});
    for (const SyntheticObject& object : image.objects) {
      // Numbers as doubles, like COCO's, so readers see the types they expect.
      annotations.push_back({{"segmentation", object.polygons},
                             {"area", static_cast<double>(object.area)},
                             {"iscrowd", 0},
                             {"image_id", image.id},
                             {"bbox", {static_cast<double>(object.x), static_cast<double>(object.y),
                                       static_cast<double>(object.width), static_cast<double>(object.height)}},
                             {"category_id", GetSyntheticClass(object.class_index).category_id},
                             {"id", (*next_annotation_id)++}});
    }
  }
  Json& categories = j["categories"] = Json::array();
  for (int c = 0; c < o.num_classes; ++c) {
    const SyntheticClass& cls = GetSyntheticClass(c);
    categories.push_back({{"supercategory", cls.shape_name}, {"id", cls.category_id}, {"name", cls.name}});
  }
  return j;
}

std::string YamlQuoted(const std::string& s) {
  std::string quoted = "'";
  for (char c : s) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

std::string DataYaml(const SyntheticOptions& o, const std::vector<Split>& splits) {
  fs::path root = fs::absolute(o.output_dir).lexically_normal();
  if (root.filename().empty()) root = root.parent_path();
  std::string yaml = "# Synthetic shapes by yolo-synth, seed " + std::to_string(o.seed) +
                     ". Class i has the COCO category id category_ids[i].\n";
  yaml += "path: " + YamlQuoted(root.string()) + "\n";
  yaml += "train: " + YamlQuoted("images/" + splits.front().name) + "\n";
  yaml += "val: " + YamlQuoted("images/" + splits.back().name) + "\n";
  yaml += "nc: " + std::to_string(o.num_classes) + "\nnames:\n";
  std::string ids;
  for (int c = 0; c < o.num_classes; ++c) {
    yaml += "  " + std::to_string(c) + ": " + GetSyntheticClass(c).name + "\n";
    ids += (c ? ", " : "") + std::to_string(GetSyntheticClass(c).category_id);
  }
  return yaml + "category_ids: [" + ids + "]\n";
}

}  // namespace

SyntheticSceneSpec SyntheticSceneSpecFor(const SyntheticOptions& o, const std::string& split, int index) {
  SynthRng rng(SynthRng::Mix(SynthRng::Mix(o.seed ^ SynthRng::HashString(split)) + static_cast<uint64_t>(index)));
  SyntheticSceneSpec spec;
  if (o.coco_sizes) {
    const CocoSize size = DrawCocoSize(&rng);
    spec.width = size.width;
    spec.height = size.height;
  } else {
    const bool fixed = o.width > 0 && o.height > 0;
    spec.width = fixed ? o.width : rng.UniformInt(o.min_size, o.max_size);
    spec.height = fixed ? o.height : rng.UniformInt(o.min_size, o.max_size);
  }
  spec.num_classes = o.num_classes;
  spec.max_objects = o.max_objects;
  spec.background_only = IsBackgroundImage(index, o.background_fraction);
  spec.min_object_fraction = o.min_object_fraction;
  spec.max_object_fraction = o.max_object_fraction;
  spec.seed = rng.Next();
  return spec;
}

Status GenerateSyntheticCoco(const SyntheticOptions& options, SyntheticSummary* summary) {
  *summary = SyntheticSummary{};
  SyntheticOptions o = options;
  if (o.env == nullptr) o.env = ffr::Env::Default();
  FFR_RETURN_IF_ERROR(ValidateOptions(o));
  FFR_RETURN_IF_ERROR(PrepareOutputDir(o));
  const std::vector<Split> splits = SplitsOf(o);

  std::vector<std::vector<ImageRecord>> records(splits.size());
  for (size_t s = 0; s < splits.size(); ++s) {
    FFR_RETURN_IF_ERROR(GenerateImages(o, splits[s], &records[s], &summary->bytes));
    for (const ImageRecord& image : records[s]) {
      ++summary->images;
      summary->objects += static_cast<int64_t>(image.objects.size());
      if (image.objects.empty()) ++summary->background_images;
    }
  }
  if (o.yolo_layout) {
    const std::string yaml = DataYaml(o, splits);
    FFR_RETURN_IF_ERROR(WriteFile(o.env, fs::path(o.output_dir) / "data.yaml", yaml));
    summary->bytes += static_cast<int64_t>(yaml.size());
  }
  // The JSON files come last: their presence marks a complete dataset.
  int64_t next_annotation_id = 1;
  for (size_t s = 0; s < splits.size(); ++s) {
    const std::string json = CocoJson(o, records[s], &next_annotation_id).dump();
    FFR_RETURN_IF_ERROR(WriteFile(o.env, JsonPath(o, splits[s].name), json));
    summary->bytes += static_cast<int64_t>(json.size());
  }
  return Status::OK();
}

}  // namespace ffyolo
