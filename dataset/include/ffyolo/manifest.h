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
  // The shard header's CRC (docs/format.md), which covers every sample's CRC: the identity the shard
  // and the manifest share. 0 when not recorded (manifests written before it was).
  uint32_t meta_crc = 0;

  // Whether the file at `path` is this shard, from its size (before it is opened) and from its
  // header's CRC (once a reader has it): a damaged shard, or another pack's, is refused.
  Status CheckSize(const std::string& path, uint64_t file_size) const;
  Status CheckHeader(const std::string& path, uint32_t file_meta_crc) const;
};

struct SplitInfo {
  std::string name;
  int64_t samples = 0;
  int64_t boxes = 0;        // every stored box, crowd ones included
  int64_t crowd_boxes = 0;  // iscrowd=1: COCO ignore regions
  int64_t background = 0;   // images without boxes
  int64_t skipped = 0;      // source images left out by --skip-bad
  // Images whose EXIF orientation is not 1 (exif.h); -1: not recorded (packed before).
  int64_t exif_oriented = -1;
  // Whether images are trained and shown as viewed (their EXIF orientation applied; the label index
  // gives viewed sizes). False for splits packed before: their images as stored, their orientation unused.
  bool exif_applied = false;
  uint64_t bytes = 0;
  std::vector<ShardInfo> shards;
  std::string label_index = kLabelIndexFile;
  // CRC-32 of the label index file: the identity it and the manifest share. 0 when not recorded.
  uint32_t label_index_crc = 0;

  // Whether the label index at `path`, whose bytes have CRC-32 `file_crc`, is this split's.
  Status CheckLabelIndex(const std::string& path, uint32_t file_crc) const;
};

// Joins the names of a set of splits read as one ("train2007+train2012"): no split name holds it.
inline constexpr char kSplitSeparator = '+';
// A split is a folder of the dataset, named by the source's folder: refused when it could not be
// one, or holds a character that joins split names ('+', ',').
Status CheckSplitName(const std::string& name);

struct Manifest {
  int version = kManifestVersion;
  std::string created;  // ISO 8601 UTC
  std::string source;   // the source root
  std::string source_layout;
  std::vector<std::string> names;  // class index -> name
  std::vector<int> category_ids;   // class index -> COCO category id
  std::vector<SplitInfo> splits;
  // The splits the source's data YAML trains and validates on (its train: and val:, lists and .txt
  // image lists read as the split folders they name), recorded at pack time; empty when it named none.
  std::vector<std::string> train, val;
  std::map<std::string, std::string> options;  // how it was packed

  const SplitInfo* FindSplit(const std::string& name) const;
  std::string ToYaml() const;
  // `where` names the file in error messages.
  static Status FromYaml(const std::string& text, const std::string& where, Manifest* out);
};

// "train: a, b; val: c (the data YAML's, recorded at pack time)\n", for the lists the manifest
// records (Manifest::train, val); "" when it records none.
std::string FormatRecordedSplits(const Manifest& manifest);

}  // namespace ffyolo
