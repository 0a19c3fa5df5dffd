#include "ffyolo/dataset.h"

#include "ffr/env.h"

namespace ffyolo {

Status Dataset::Open(const std::string& path, std::unique_ptr<Dataset>* out) {
  ffr::Env* env = ffr::Env::Default();
  std::string root = path;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  const std::string manifest_path = root + "/" + kManifestFile;
  if (!env->IsDirectory(root)) return Status::NotFound(root + ": no such dataset directory");
  if (!env->FileExists(manifest_path))
    return Status::NotFound(root + ": no " + std::string(kManifestFile) +
                            " (not a packed dataset, or a pack that did not finish)");
  std::string text;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(env, manifest_path, &text));
  std::unique_ptr<Dataset> d(new Dataset());
  d->path_ = root;
  FFR_RETURN_IF_ERROR(Manifest::FromYaml(text, manifest_path, &d->manifest_));
  *out = std::move(d);
  return Status::OK();
}

Status Dataset::DefaultSplit(bool training, std::string* split) const {
  const auto& splits = manifest_.splits;
  if (splits.empty()) return Status::NotFound(path_ + ": dataset has no split");
  if (splits.size() == 1) {
    *split = splits[0].name;
    return Status::OK();
  }
  const std::string prefix = training ? "train" : "val";
  for (const SplitInfo& s : splits) {
    if (s.name.compare(0, prefix.size(), prefix) == 0) {
      *split = s.name;
      return Status::OK();
    }
  }
  return Status::NotFound(path_ + ": no split starting with '" + prefix + "'; name one with --split");
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
  std::vector<std::string> shards;
  for (const ShardInfo& s : info->shards) shards.push_back(split_dir(split) + "/" + s.file);
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
