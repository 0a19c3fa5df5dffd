#include "ffyolo/dataset.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "ffr/env.h"
#include "ffr/format.h"

namespace ffyolo {

Status Dataset::Open(const std::string& path, std::unique_ptr<Dataset>* out) {
  ffr::Env* env = ffr::Env::Default();
  std::string root = path;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  const std::string manifest_path = root + "/" + kManifestFile;
  if (!env->IsDirectory(root)) {
    if (!env->FileExists(root)) return Status::NotFound(root + ": no such dataset directory");
    const std::string extension = std::filesystem::path(root).extension().string();
    if (extension == ".yaml" || extension == ".yml")
      return Status::InvalidArgument(root + ": a YAML file, where a packed dataset is expected: pack the tree "
                                            "it describes first (yolo-pack ROOT --data " + root +
                                     " -o DATA.ffr) and pass that folder");
    return Status::InvalidArgument(root + ": a file, where a packed dataset (a folder made by yolo-pack) is "
                                          "expected");
  }
  if (!env->FileExists(manifest_path))
    return Status::NotFound(root + ": no " + std::string(kManifestFile) +
                            " (not a packed dataset, or a pack that did not finish)");
  std::unique_ptr<Dataset> d(new Dataset());
  // A LOCK that cannot be opened (no permission, no flock on the file system) is read without.
  bool packing = false;
  const Status locked = env->TryLockFileShared(root + "/" + kDatasetLockFile, &d->in_use_, &packing);
  if (locked.ok() && packing)
    return Status::Aborted(root + ": a pack is writing this dataset (it holds " + kDatasetLockFile +
                           "); try again when it is done");
  std::string text;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(env, manifest_path, &text));
  d->path_ = root;
  FFR_RETURN_IF_ERROR(Manifest::FromYaml(text, manifest_path, &d->manifest_));
  *out = std::move(d);
  return Status::OK();
}

std::string Dataset::ManifestCrc() const {
  const std::string text = manifest_.ToYaml();
  char hex[16];
  std::snprintf(hex, sizeof(hex), "%08" PRIx32, ffr::Crc32(text.data(), text.size()));
  return hex;
}

Status Dataset::DefaultSplit(bool training, std::string* split) const {
  const auto& splits = manifest_.splits;
  if (splits.empty()) return Status::NotFound(path_ + ": dataset has no split");
  if (splits.size() == 1) {
    *split = splits[0].name;
    return Status::OK();
  }
  const std::string prefix = training ? "train" : "val";
  std::vector<std::string> candidates;
  std::string all;
  for (const SplitInfo& s : splits) {
    if (s.name.compare(0, prefix.size(), prefix) == 0) candidates.push_back(s.name);
    all += (all.empty() ? "" : ", ") + s.name;
  }
  if (candidates.size() == 1) {
    *split = candidates[0];
    return Status::OK();
  }
  const std::string flags = training ? "--split; yolo-train: --train-split" : "--split; yolo-train: --val-split";
  if (candidates.empty())
    return Status::NotFound(path_ + ": no split starting with '" + prefix + "' (splits: " + all + "); name one (" +
                            flags + ")");
  std::string listed;
  for (const std::string& c : candidates) listed += (listed.empty() ? "" : ", ") + c;
  return Status::InvalidArgument(path_ + ": " + std::to_string(candidates.size()) + " splits could be the " +
                                 (training ? "training" : "validation") + " split (" + listed + "); name the one to use (" +
                                 flags + ")");
}

Status Dataset::CheckSplit(const std::string& split) const {
  if (manifest_.FindSplit(split) != nullptr) return Status::OK();
  std::string have;
  for (const SplitInfo& s : manifest_.splits) have += (have.empty() ? "" : ", ") + s.name;
  return Status::NotFound(path_ + ": no split '" + split + "' (splits: " + have + ")");
}

Status Dataset::OpenReader(const std::string& split, const ffr::ReaderOptions& options,
                           std::unique_ptr<ffr::Reader>* out) const {
  FFR_RETURN_IF_ERROR(CheckSplit(split));
  const SplitInfo* info = manifest_.FindSplit(split);
  // A shard swapped for another pack's (with as many samples) would be read as this one's: its size,
  // which the manifest records, tells it apart without reading it (yolo-ffr verify reads them all).
  ffr::Env* env = options.env != nullptr ? options.env : ffr::Env::Default();
  std::vector<std::string> shards;
  for (const ShardInfo& s : info->shards) {
    shards.push_back(split_dir(split) + "/" + s.file);
    uint64_t size = 0;
    if (s.bytes > 0 && env->GetFileSize(shards.back(), &size).ok() && size != s.bytes)
      return Status::Corruption(shards.back() + ": " + std::to_string(size) + " bytes, the manifest lists " +
                                std::to_string(s.bytes) + ": a damaged shard, or another pack's");
  }
  FFR_RETURN_IF_ERROR(ffr::Reader::Open(shards, options, out));
  if ((*out)->size() != info->samples)
    return Status::Corruption(split_dir(split) + ": shards hold " + std::to_string((*out)->size()) +
                              " samples, the manifest says " + std::to_string(info->samples));
  return Status::OK();
}

Status Dataset::LoadLabelIndex(const std::string& split, LabelIndex* out) const {
  FFR_RETURN_IF_ERROR(CheckSplit(split));
  const SplitInfo* info = manifest_.FindSplit(split);
  FFR_RETURN_IF_ERROR(LabelIndex::ReadFile(split_dir(split) + "/" + info->label_index, out));
  const std::string where = split_dir(split) + "/" + info->label_index;
  if (static_cast<int64_t>(out->size()) != info->samples)
    return Status::Corruption(where + ": " + std::to_string(out->size()) + " samples, the manifest says " +
                              std::to_string(info->samples));
  // Everything downstream indexes the class names with these.
  const size_t nc = manifest_.names.size();
  for (size_t i = 0; i < out->size(); ++i) {
    bool in_range = true;
    for (size_t k = 0; k < out->box_count(i); ++k) in_range &= out->boxes(i)[k].class_index < nc;
    for (size_t k = 0; out->has_eval_boxes() && k < out->eval_box_count(i); ++k)
      in_range &= out->eval_boxes(i)[k].class_index < nc;
    if (!in_range)
      return Status::Corruption(where + ": sample " + std::to_string(i) + " (" + out->file_name(i) +
                                ") has a class index beyond the manifest's " + std::to_string(nc) + " names");
  }
  return Status::OK();
}

}  // namespace ffyolo
