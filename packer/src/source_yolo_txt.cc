// Ultralytics YOLO labels → SourceSplit, with Ultralytics' rules
// (utils/dataloaders.py: img2label_paths, verify_image_label): the images are
// the files with an image extension under images/<split>/, sorted; each has
// labels/<split>/<stem>.txt, missing or empty for a background image.
#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <iterator>
#include <thread>
#include <unordered_set>

#include "ffyolo/image_check.h"
#include "source_layouts.h"

namespace fs = std::filesystem;

namespace ffyolo::source_internal {

namespace {

bool HasImageExtension(const fs::path& path) {
  std::string ext = path.extension().string();
  if (ext.empty()) return false;
  ext.erase(0, 1);  // the dot
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::find(kImageFormats.begin(), kImageFormats.end(), ext) != kImageFormats.end();
}

// Paths of the entries below `dir` but folders, relative to it, that satisfy `keep`; sorted. An
// absent directory has none. A FIFO, a device or a dangling link named like an image or a label is
// listed too, so that it is reported where it is read, not dropped without a word.
template <typename Keep>
Status ListFilesRecursively(const std::string& dir, Keep keep, std::vector<std::string>* files) {
  files->clear();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::OK();
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_directory(type_ec) && keep(it->path()))
      files->push_back(it->path().lexically_relative(dir).string());
  }
  if (ec) return Status::IOError(dir + ": cannot list: " + ec.message());
  std::sort(files->begin(), files->end());
  return Status::OK();
}

std::string WithoutExtension(const std::string& relative) {
  return fs::path(relative).replace_extension().string();
}

// What one label file says.
struct LabelResult {
  std::vector<Box> boxes;
  Status problem;
  size_t duplicates = 0;
  int max_class = -1;
};

// A number as Ultralytics reads it (np.float32 of the token).
bool ParseFloat(std::string_view token, float* value) {
  if (!token.empty() && token.front() == '+') token.remove_prefix(1);
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), *value);
  return ec == std::errc() && end == token.data() + token.size();
}

// A token as an error message shows it: a NUL would end the message where it
// is printed, and other unprintable bytes would not be seen, so both are escaped.
std::string Shown(std::string_view token) {
  std::string shown;
  for (const char c : token) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte == 0) {
      shown += "\\0";
    } else if (byte < 0x20 || byte >= 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      shown += escaped;
    } else {
      shown += c;
    }
  }
  return shown;
}

// Checks one row and turns it into a box; "" when fine, else what is wrong.
std::string ParseRow(const std::vector<std::string_view>& fields, size_t num_classes, Box* box, int* cls) {
  const size_t n = fields.size();
  const bool polygon = n >= 7 && n % 2 == 1;
  if (n != 5 && !polygon)
    return "expected 5 fields (class cx cy w h) or a polygon (class x1 y1 x2 y2 x3 y3 ...), got " +
           std::to_string(n);
  std::vector<float> values(n);
  for (size_t k = 0; k < n; ++k) {
    if (!ParseFloat(fields[k], &values[k])) return "'" + Shown(fields[k]) + "' is not a number";
    if (!std::isfinite(values[k])) return "'" + Shown(fields[k]) + "' is not finite";
    if (values[k] < 0) return "negative value " + Shown(fields[k]);
    if (k > 0 && values[k] > 1)
      return "coordinate " + Shown(fields[k]) + " > 1 (labels must be normalized to [0, 1])";
  }
  if (values[0] != std::floor(values[0])) return "class " + Shown(fields[0]) + " is not an integer";
  if ((num_classes > 0 && values[0] >= num_classes) || values[0] > 65535)
    return "class " + Shown(fields[0]) + " is out of range (nc=" + std::to_string(num_classes) + ")";
  *cls = static_cast<int>(values[0]);
  box->class_index = static_cast<uint16_t>(*cls);
  box->iscrowd = false;
  box->area = 0;
  if (!polygon) {
    box->cx = values[1], box->cy = values[2], box->w = values[3], box->h = values[4];
    return "";
  }
  // segments2boxes: the polygon's bounding box.
  float x1 = values[1], x2 = values[1], y1 = values[2], y2 = values[2];
  for (size_t k = 3; k < n; k += 2) {
    x1 = std::min(x1, values[k]), x2 = std::max(x2, values[k]);
    y1 = std::min(y1, values[k + 1]), y2 = std::max(y2, values[k + 1]);
  }
  box->cx = (x1 + x2) / 2, box->cy = (y1 + y2) / 2, box->w = x2 - x1, box->h = y2 - y1;
  return "";
}

LabelResult ParseLabelFile(const std::string& path, size_t num_classes) {
  LabelResult result;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {  // opening a FIFO would block
    result.problem = Status::InvalidArgument(path + ": the label file is not a regular file" +
                                             (fs::is_symlink(path, ec) ? " (a link to nothing)" : ""));
    return result;
  }
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.is_open() || in.bad()) {
    result.problem = Status::IOError(path + ": cannot read label file");
    return result;
  }
  std::set<std::array<float, 5>> seen;
  std::vector<std::string_view> fields;
  size_t line_number = 0;
  // Windows editors start UTF-8 files with a byte-order mark; it is no part of the first number.
  static constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
  const size_t text_start = std::string_view(text).substr(0, kUtf8Bom.size()) == kUtf8Bom ? kUtf8Bom.size() : 0;
  for (size_t line_start = text_start; line_start < text.size();) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = text.size();
    ++line_number;
    fields.clear();
    for (size_t pos = line_start; pos < line_end;) {
      while (pos < line_end && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
      const size_t start = pos;
      while (pos < line_end && !std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
      if (pos > start) fields.emplace_back(text.data() + start, pos - start);
    }
    line_start = line_end + 1;
    if (fields.empty()) continue;
    Box box;
    int cls = 0;
    const std::string what = ParseRow(fields, num_classes, &box, &cls);
    if (!what.empty()) {
      result.problem = Status::Corruption(path + ":" + std::to_string(line_number) + ": " + what);
      result.boxes.clear();
      return result;
    }
    if (!seen.insert({static_cast<float>(cls), box.cx, box.cy, box.w, box.h}).second) {
      ++result.duplicates;
      continue;
    }
    result.max_class = std::max(result.max_class, cls);
    result.boxes.push_back(box);
  }
  return result;
}

// Runs ParseLabelFile over `paths` on a few threads; results[i] is for paths[i].
std::vector<LabelResult> ParseLabelFiles(const std::vector<std::string>& paths, size_t num_classes) {
  std::vector<LabelResult> results(paths.size());
  constexpr size_t kChunk = 64;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t begin; (begin = next.fetch_add(kChunk)) < paths.size();)
      for (size_t i = begin; i < std::min(paths.size(), begin + kChunk); ++i)
        if (!paths[i].empty()) results[i] = ParseLabelFile(paths[i], num_classes);
  };
  const size_t threads =
      std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), 8, paths.size() / kChunk + 1});
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  return results;
}

// Ultralytics' COCO convention: the image id is the file stem when every stem
// is a distinct integer ("000000000009.jpg" -> 9). Otherwise every image gets
// its 1-based position, so that ids never collide.
bool AssignImageIds(const std::vector<std::string>& image_files, std::vector<int64_t>* ids) {
  ids->clear();
  std::unordered_set<int64_t> seen;
  for (const std::string& file : image_files) {
    const std::string stem = fs::path(file).stem().string();
    if (stem.empty() || stem.size() > 18 ||
        !std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; }))
      break;
    ids->push_back(std::stoll(stem));
    if (!seen.insert(ids->back()).second) break;
  }
  if (seen.size() == image_files.size()) return true;
  ids->resize(image_files.size());
  for (size_t i = 0; i < ids->size(); ++i) (*ids)[i] = static_cast<int64_t>(i) + 1;
  return false;
}

}  // namespace

Status ScanYoloTxtSplit(const std::string& root, const std::string& split, size_t num_classes,
                        std::vector<std::string>* warnings, SourceSplit* out, int* max_class) {
  const std::string image_dir = root + "/images/" + split;
  const std::string label_dir = root + "/labels/" + split;
  std::vector<std::string> image_files, label_files;
  FFR_RETURN_IF_ERROR(ListFilesRecursively(image_dir, HasImageExtension, &image_files));
  FFR_RETURN_IF_ERROR(ListFilesRecursively(
      label_dir, [](const fs::path& p) { return p.extension() == ".txt"; }, &label_files));
  std::error_code ec;
  const bool has_label_dir = fs::is_directory(label_dir, ec);
  if (!has_label_dir)
    warnings->push_back(image_dir + ": no " + label_dir + "; every image is a background image");

  std::unordered_set<std::string> label_stems;
  for (const std::string& label : label_files) label_stems.insert(WithoutExtension(label));
  std::unordered_set<std::string> labelled_stems;
  std::vector<std::string> label_paths(image_files.size());
  out->name = split;
  out->listing = image_dir;
  for (size_t i = 0; i < image_files.size(); ++i) {
    const std::string stem = WithoutExtension(image_files[i]);
    if (label_stems.count(stem)) {
      label_paths[i] = YoloLabelPath(label_dir, image_files[i]);
      labelled_stems.insert(stem);
    }
  }
  for (const std::string& label : label_files)
    if (!labelled_stems.count(WithoutExtension(label))) out->orphan_labels.push_back(label_dir + "/" + label);

  std::vector<LabelResult> results = ParseLabelFiles(label_paths, num_classes);
  std::vector<int64_t> ids;
  const bool ids_from_stems = AssignImageIds(image_files, &ids);
  size_t name_bytes = 0, boxes = 0;
  for (size_t i = 0; i < image_files.size(); ++i) name_bytes += image_files[i].size(), boxes += results[i].boxes.size();
  out->images = SourceImages(SourceLayout::kYoloTxt, image_dir, label_dir);
  out->images.Reserve(image_files.size(), name_bytes, boxes);
  *max_class = -1;
  for (size_t i = 0; i < results.size(); ++i) {
    out->images.Add(ids[i], image_files[i], 0, 0, results[i].boxes, !label_paths[i].empty());
    if (!results[i].problem.ok()) out->images.SetProblem(i, std::move(results[i].problem));
    *max_class = std::max(*max_class, results[i].max_class);
    if (results[i].duplicates > 0)
      warnings->push_back(label_paths[i] + ": " + std::to_string(results[i].duplicates) +
                          " duplicate rows removed");
  }
  if (!ids_from_stems)
    warnings->push_back(image_dir + ": file stems are not distinct integers; image ids are positions 1.." +
                        std::to_string(image_files.size()));
  const size_t unlabelled = std::count(label_paths.begin(), label_paths.end(), std::string());
  if (unlabelled > 0 && has_label_dir)
    warnings->push_back(image_dir + ": " + std::to_string(unlabelled) + " of " +
                        std::to_string(image_files.size()) + " images have no label file (background images)");
  if (!out->orphan_labels.empty())
    warnings->push_back(label_dir + ": " + std::to_string(out->orphan_labels.size()) +
                        " label files have no image; ignored");
  return Status::OK();
}

std::string YoloLabelPath(const std::string& label_dir, const std::string& image_file) {
  return label_dir + "/" + WithoutExtension(image_file) + ".txt";
}

}  // namespace ffyolo::source_internal
