// Dataset: a packed ffyolo dataset directory (NAME.ffr/) opened through its
// manifest: one reader and one label index per split.
//
//   NAME.ffr/dataset.yaml                 the manifest, written last
//   NAME.ffr/<split>/PART_00000.ffr ...   FFRecord v1 shards of records
//   NAME.ffr/<split>/labels.idx.zst       the split's label index
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ffr/reader.h"
#include "ffyolo/label_index.h"
#include "ffyolo/manifest.h"

namespace ffyolo {

// The names of the splits a canonical split name holds: "train2007+train2012" -> {train2007, train2012}.
std::vector<std::string> SplitNames(const std::string& split);

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

  // The split a tool reads, as the user gave it in *split: one name, or several joined by '+' or ','
  // (read as one split, in Ultralytics' order: by path, so by name); "" for the default: the data
  // YAML's train: (training) or val: recorded at pack time, else the only split, else the one whose
  // name starts with "train" or "val". NotFound when there is none; InvalidArgument, listing them,
  // when several could be: never a guess. On success *split is the canonical name
  // ("train2007+train2012") that OpenReader, LoadLabelIndex and pixel caches take.
  Status ResolveSplit(bool training, std::string* split) const;
  // Checks that `split` is one split of the dataset; the message lists the splits that are.
  Status CheckSplit(const std::string& split) const;

  // A reader over the split's shards, in manifest order (a set's: split after split). Each shard is
  // checked against the manifest (size, header CRC) without being read.
  Status OpenReader(const std::string& split, const ffr::ReaderOptions& options,
                    std::unique_ptr<ffr::Reader>* out) const;
  // The split's label index (a set's: one after another; image ids that collide across the splits
  // are numbered 1..n, see LabelIndex::NumberImagesInOrder, and *renumbered says so).
  Status LoadLabelIndex(const std::string& split, LabelIndex* out, bool* renumbered = nullptr) const;
  // Refuses a set whose image ids were renumbered, for uses that need each record's own id
  // (`what`: "--by-id", "extract", ...): InvalidArgument naming the set and what to do.
  Status CheckOwnImageIds(const std::string& split, const std::string& what) const;
  // Whether the split's images are decoded as viewed, their EXIF orientations applied (manifest.h's
  // exif_applied; a set's when every member's is; refused when they differ and some image turns), and
  // how many of its images carry an orientation other than 1 (as recorded; 0 when not).
  Status ExifApplied(const std::string& split, bool* applied, int64_t* oriented = nullptr) const;

 private:
  // The old rule for a default split (see ResolveSplit).
  Status GuessSplit(bool training, std::string* split) const;
  // The splits of a canonical split name, checked.
  Status Members(const std::string& split, std::vector<const SplitInfo*>* out) const;
  Status LoadOneLabelIndex(const SplitInfo& split, LabelIndex* out) const;

  std::string path_;
  Manifest manifest_;
  std::unique_ptr<ffr::FileLock> in_use_;  // null for a dataset without LOCK, or in a folder it cannot open
};

}  // namespace ffyolo
