// A packed coco128 for the yolo-ffr tests, and ways to damage copies of it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "ffr/format.h"
#include "ffyolo/label_index.h"
#include "testing/test_env.h"

namespace ffyolo::testing {

inline constexpr char kCocoSplit[] = "train2017";

// Packs ../shared/data/coco128 (official JSON) into <dir>/coco128.ffr with 3
// shards and returns that path; "" (with a gtest failure) when packing fails.
std::string PackCoco128(const std::string& dir);

// A fixture packing coco128 once per test suite. Tests skip when ../shared is
// absent and fail when packing failed.
class PackedCoco128Test : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  void SetUp() override;

  // The packed dataset; tests must not change it (damage a CopyTree copy).
  static const std::string& packed() { return packed_; }

 private:
  static ScratchDir* scratch_;
  static std::string packed_;
};

// Copies a dataset directory tree.
void CopyTree(const std::string& from, const std::string& to);

// The decoded header of a shard file, without checking it.
ffr::ShardHeader ReadShardHeader(const std::string& shard);

// Inverts every bit of the byte at `offset`.
void FlipByte(const std::string& path, uint64_t offset);

// Replaces the last two bytes of sample `local`'s record (a JPEG's
// end-of-image marker) with zeros and rewrites the sample's CRC, the
// header and the manifest to match: damage that only an image check can see.
void BreakImageEnd(const std::string& shard, int64_t local);

// Applies `edit` to the bytes of sample `local` of `shard` (its length kept), then mends the sample's CRC, the
// shard header and the manifest's record of it: damage that only a check of the record or image itself sees.
void EditSample(const std::string& shard, int64_t local, const std::function<void(std::string* sample)>& edit);

// Records `shard`'s header CRC (DATA/<split>/PART_xxxxx.ffr) in DATA's manifest, as a pack of a
// source holding the damage would have.
void RecordShardHeaderInManifest(const std::string& shard);

// Rewrites <split_dir>/labels.idx.zst with `edit` applied to sample
// `sample`'s metadata and EvalBoxes (empty when the index has none), and
// records its CRC in the dataset's manifest.
void EditLabelIndex(const std::string& split_dir, size_t sample,
                    const std::function<void(RecordInfo*, std::vector<EvalBox>*)>& edit);

// EditLabelIndex moving box 0 of sample `sample` to the right by `dx` (normalized).
void ShiftIndexedBox(const std::string& split_dir, size_t sample, float dx);

}  // namespace ffyolo::testing
