#include "ffyolo/dataset.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <unordered_set>
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
    const size_t slash = root.rfind('/');
    const std::string name = slash == std::string::npos ? root : root.substr(slash + 1);
    const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : root.substr(0, slash);
    const size_t dot = name.rfind('.');
    const std::string extension = dot == std::string::npos || dot == 0 ? "" : name.substr(dot);
    std::string text;
    if (name == kManifestFile && ffr::ReadFileToString(env, root, &text).ok() &&
        text.find("format: ffyolo-dataset") != std::string::npos)
      return Status::InvalidArgument(root + ": the manifest of a packed dataset; pass its folder, " + folder);
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

namespace {

std::string Join(const std::vector<std::string>& names, const std::string& separator) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : separator) + name;
  return joined;
}

// Ultralytics sorts a data YAML's images by path: images/<split>/<file>, so by split name and '/'.
void SortAsUltralytics(std::vector<std::string>* names) {
  std::sort(names->begin(), names->end(), [](const std::string& a, const std::string& b) { return a + "/" < b + "/"; });
}

}  // namespace

std::vector<std::string> SplitNames(const std::string& split) {
  std::vector<std::string> names;
  for (size_t begin = 0;;) {
    const size_t end = split.find(kSplitSeparator, begin);
    names.push_back(split.substr(begin, end - begin));
    if (end == std::string::npos) return names;
    begin = end + 1;
  }
}

Status Dataset::ResolveSplit(bool training, std::string* split) const {
  std::vector<std::string> names;
  if (split->empty()) {
    const std::vector<std::string>& recorded = training ? manifest_.train : manifest_.val;
    if (!recorded.empty()) {
      names = recorded;
    } else {
      names.emplace_back();
      FFR_RETURN_IF_ERROR(GuessSplit(training, &names[0]));
    }
  } else {
    std::string given = *split;
    std::replace(given.begin(), given.end(), ',', kSplitSeparator);
    names = SplitNames(given);
  }
  for (const std::string& name : names) FFR_RETURN_IF_ERROR(CheckSplit(name));
  SortAsUltralytics(&names);
  if (std::adjacent_find(names.begin(), names.end()) != names.end())
    return Status::InvalidArgument(path_ + ": '" + *split + "' names a split twice");
  *split = Join(names, std::string(1, kSplitSeparator));
  return Status::OK();
}

Status Dataset::GuessSplit(bool training, std::string* split) const {
  const auto& splits = manifest_.splits;
  if (splits.empty()) return Status::NotFound(path_ + ": dataset has no split");
  if (splits.size() == 1) {
    *split = splits[0].name;
    return Status::OK();
  }
  const std::string prefix = training ? "train" : "val";
  std::vector<std::string> candidates, all;
  for (const SplitInfo& s : splits) {
    if (s.name.compare(0, prefix.size(), prefix) == 0) candidates.push_back(s.name);
    all.push_back(s.name);
  }
  if (candidates.size() == 1) {
    *split = candidates[0];
    return Status::OK();
  }
  const std::string flags = training ? "--split; yolo-train: --train-split" : "--split; yolo-train: --val-split";
  if (candidates.empty())
    return Status::NotFound(path_ + ": no split starting with '" + prefix + "' (splits: " + Join(all, ", ") +
                            "); name one (" + flags + ")");
  return Status::InvalidArgument(path_ + ": " + std::to_string(candidates.size()) + " splits could be the " +
                                 (training ? "training" : "validation") + " split (" + Join(candidates, ", ") +
                                 "); name the one to use, or several joined by '+' (" + flags + ")");
}

Status Dataset::CheckSplit(const std::string& split) const {
  if (manifest_.FindSplit(split) != nullptr) return Status::OK();
  std::vector<std::string> have;
  for (const SplitInfo& s : manifest_.splits) have.push_back(s.name);
  return Status::NotFound(path_ + ": no split '" + split + "' (splits: " + Join(have, ", ") + ")");
}

Status Dataset::Members(const std::string& split, std::vector<const SplitInfo*>* out) const {
  out->clear();
  for (const std::string& name : SplitNames(split)) {
    FFR_RETURN_IF_ERROR(CheckSplit(name));
    out->push_back(manifest_.FindSplit(name));
  }
  return Status::OK();
}

Status Dataset::OpenReader(const std::string& split, const ffr::ReaderOptions& options,
                           std::unique_ptr<ffr::Reader>* out) const {
  std::vector<const SplitInfo*> members;
  FFR_RETURN_IF_ERROR(Members(split, &members));
  // A shard swapped for another pack's (with as many samples) would be read as this one's: its size and
  // its header's CRC, which the manifest records, tell it apart without reading it (verify reads them all).
  ffr::Env* env = options.env != nullptr ? options.env : ffr::Env::Default();
  std::vector<std::string> paths;
  std::vector<const ShardInfo*> shards;
  int64_t samples = 0;
  for (const SplitInfo* member : members) {
    samples += member->samples;
    for (const ShardInfo& s : member->shards) {
      paths.push_back(split_dir(member->name) + "/" + s.file);
      shards.push_back(&s);
      uint64_t size = 0;
      if (env->GetFileSize(paths.back(), &size).ok()) FFR_RETURN_IF_ERROR(s.CheckSize(paths.back(), size));
    }
  }
  FFR_RETURN_IF_ERROR(ffr::Reader::Open(paths, options, out));
  if ((*out)->size() != samples)
    return Status::Corruption(split_dir(split) + ": shards hold " + std::to_string((*out)->size()) +
                              " samples, the manifest says " + std::to_string(samples));
  for (size_t k = 0; k < paths.size(); ++k)
    FFR_RETURN_IF_ERROR(shards[k]->CheckHeader(paths[k], (*out)->shard_meta_crc(k)));
  return Status::OK();
}

Status Dataset::LoadLabelIndex(const std::string& split, LabelIndex* out, bool* renumbered) const {
  std::vector<const SplitInfo*> members;
  FFR_RETURN_IF_ERROR(Members(split, &members));
  FFR_RETURN_IF_ERROR(LoadOneLabelIndex(*members[0], out));
  if (renumbered != nullptr) *renumbered = false;
  if (members.size() == 1) return Status::OK();
  std::unordered_set<int64_t> ids;
  bool ids_collide = false;
  for (size_t i = 0; i < out->size(); ++i) ids_collide |= !ids.insert(out->image_id(i)).second;
  for (size_t m = 1; m < members.size(); ++m) {
    LabelIndex next;
    FFR_RETURN_IF_ERROR(LoadOneLabelIndex(*members[m], &next));
    for (size_t i = 0; i < next.size(); ++i) ids_collide |= !ids.insert(next.image_id(i)).second;
    out->Append(next);
  }
  if (ids_collide) out->NumberImagesInOrder();
  if (renumbered != nullptr) *renumbered = ids_collide;
  return Status::OK();
}

Status Dataset::ExifApplied(const std::string& split, bool* applied, int64_t* oriented) const {
  std::vector<const SplitInfo*> members;
  FFR_RETURN_IF_ERROR(Members(split, &members));
  if (oriented) {
    *oriented = 0;
    for (const SplitInfo* s : members) *oriented += std::max<int64_t>(s->exif_oriented, 0);
  }
  const auto applies = [](const SplitInfo* s) { return s->exif_applied; };
  *applied = std::all_of(members.begin(), members.end(), applies);
  const bool turned = std::any_of(members.begin(), members.end(), [](const SplitInfo* s) { return s->exif_oriented > 0; });
  if (!*applied && turned && std::any_of(members.begin(), members.end(), applies))
    return Status::InvalidArgument(path_ + ": the splits of " + split + " disagree on EXIF orientations (some " +
                                   "packed applying them, some with --exif ignore or before yolo-pack applied " +
                                   "them): re-pack them alike to read them together");
  return Status::OK();
}

Status Dataset::CheckOwnImageIds(const std::string& split, const std::string& what) const {
  if (split.find(kSplitSeparator) == std::string::npos) return Status::OK();
  LabelIndex index;
  bool renumbered = false;
  FFR_RETURN_IF_ERROR(LoadLabelIndex(split, &index, &renumbered));
  if (!renumbered) return Status::OK();
  return Status::InvalidArgument(what + ": the image ids of " + split + " repeat across its splits, so the set " +
                                 "numbers its images 1.." + std::to_string(index.size()) +
                                 " (yolo-ffr ls lists them) and its records' own ids would not match; name one "
                                 "split (--split)");
}

Status Dataset::LoadOneLabelIndex(const SplitInfo& info, LabelIndex* out) const {
  const std::string where = split_dir(info.name) + "/" + info.label_index;
  uint32_t crc = 0;
  FFR_RETURN_IF_ERROR(LabelIndex::ReadFile(where, out, &crc));
  FFR_RETURN_IF_ERROR(info.CheckLabelIndex(where, crc));
  if (static_cast<int64_t>(out->size()) != info.samples)
    return Status::Corruption(where + ": " + std::to_string(out->size()) + " samples, the manifest says " +
                              std::to_string(info.samples));
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
