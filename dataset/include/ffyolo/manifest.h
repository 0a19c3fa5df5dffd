// Manifest: the dataset.yaml at the root of a packed dataset. It is written
// last, so its presence means the dataset is complete.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ffr/status.h"

namespace ffyolo {

using ffr::Status;

inline constexpr int kManifestVersion = 1;
inline constexpr char kManifestFile[] = "dataset.yaml";
// Held exclusively by a pack writing the dataset, shared by the processes reading it (Dataset).
inline constexpr char kDatasetLockFile[] = "LOCK";
inline constexpr char kLabelIndexFile[] = "labels.idx.zst";

struct ShardInfo {
  std::string file;  // relative to the split directory, e.g. "PART_00000.ffr"
  int64_t samples = 0;
  uint64_t bytes = 0;
};

struct SplitInfo {
  std::string name;
  int64_t samples = 0;
  int64_t boxes = 0;        // every stored box, crowd ones included
  int64_t crowd_boxes = 0;  // iscrowd=1: COCO ignore regions
  int64_t background = 0;   // images without boxes
  int64_t skipped = 0;      // source images left out by --skip-bad
  uint64_t bytes = 0;
  std::vector<ShardInfo> shards;
  std::string label_index = kLabelIndexFile;
};

struct Manifest {
  int version = kManifestVersion;
  std::string created;  // ISO 8601 UTC
  std::string source;   // the source root
  std::string source_layout;
  std::vector<std::string> names;  // class index -> name
  std::vector<int> category_ids;   // class index -> COCO category id
  std::vector<SplitInfo> splits;
  std::map<std::string, std::string> options;  // how it was packed

  const SplitInfo* FindSplit(const std::string& name) const;
  std::string ToYaml() const;
  // `where` names the file in error messages.
  static Status FromYaml(const std::string& text, const std::string& where, Manifest* out);
};

}  // namespace ffyolo
