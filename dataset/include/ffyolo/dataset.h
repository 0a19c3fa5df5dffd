// Dataset: a packed ffyolo dataset directory (NAME.ffr/) opened through its
// manifest: one reader and one label index per split.
//
//   NAME.ffr/dataset.yaml                 the manifest, written last
//   NAME.ffr/<split>/PART_00000.ffr ...   FFRecord v1 shards of records
//   NAME.ffr/<split>/labels.idx.zst       the split's label index
#pragma once

#include <memory>
#include <string>

#include "ffr/reader.h"
#include "ffyolo/label_index.h"
#include "ffyolo/manifest.h"

namespace ffyolo {

class Dataset {
 public:
  // Fails with a clear message when `path` is not a complete packed dataset, or while a pack is
  // writing it. The Dataset holds the dataset's LOCK shared for its life, so that a pack into it
  // (yolo-pack --force) waits until no process reads it.
  static Status Open(const std::string& path, std::unique_ptr<Dataset>* out);

  const std::string& path() const { return path_; }
  const Manifest& manifest() const { return manifest_; }
  size_t num_classes() const { return manifest_.names.size(); }
  std::string split_dir(const std::string& split) const { return path_ + "/" + split; }
  // The dataset's identity: the CRC-32 of its manifest as ffyolo writes it, 8 hex digits. A copy or a
  // move keeps it; a pack (even of the same source: the manifest says when) gives another.
  std::string ManifestCrc() const;

  // The split a tool uses when the user names none: the only split, else the one
  // whose name starts with "train" (training) or "val" (validation). NotFound when
  // none does; InvalidArgument, listing them, when several do: never a guess.
  Status DefaultSplit(bool training, std::string* split) const;
  // Checks that `split` exists; the message lists the splits that do.
  Status CheckSplit(const std::string& split) const;

  // A reader over the split's shards, in manifest order.
  Status OpenReader(const std::string& split, const ffr::ReaderOptions& options,
                    std::unique_ptr<ffr::Reader>* out) const;
  Status LoadLabelIndex(const std::string& split, LabelIndex* out) const;

 private:
  std::string path_;
  Manifest manifest_;
  std::unique_ptr<ffr::FileLock> in_use_;  // null for a dataset without LOCK, or in a folder it cannot open
};

}  // namespace ffyolo
