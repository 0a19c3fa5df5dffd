// The FFRecord v1 shard layout (HFAiLab/ffrecord, byte-compatible):
//
//   u32 meta_crc | i64 N | u32 crc[N] | i64 offset[N] | sample 0 | ... | sample N-1
//
// little-endian, zlib CRC-32, offsets absolute, the last sample ends at the end
// of the file. meta_crc covers bytes [4, 12 + 12N). See docs/format.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ffr/status.h"

namespace ffr {

inline constexpr uint64_t kShardPrefixSize = 12;  // meta_crc + N
inline constexpr uint64_t kShardEntrySize = 12;   // crc + offset per sample

// zlib's CRC-32 (seed 0, as FFRecord calls it), chunked so that any length works.
uint32_t Crc32(const void* data, size_t n);
uint32_t Crc32Extend(uint32_t crc, const void* data, size_t n);

// The decoded header of one shard.
struct ShardHeader {
  uint32_t meta_crc = 0;
  std::vector<uint32_t> crcs;
  std::vector<uint64_t> offsets;  // N+1 entries: the last is the file size

  int64_t count() const { return static_cast<int64_t>(crcs.size()); }
  uint64_t sample_size(int64_t i) const { return offsets[i + 1] - offsets[i]; }
  static uint64_t EncodedSize(int64_t n) { return kShardPrefixSize + kShardEntrySize * static_cast<uint64_t>(n); }
};

// Encodes the header bytes [0, 12 + 12N) with a correct meta CRC. `offsets` has N entries.
std::string EncodeShardHeader(const std::vector<uint32_t>& crcs, const std::vector<uint64_t>& offsets);

// Parses and checks the header of a shard of `file_size` bytes whose first
// bytes are `prefix` (at least 12 bytes; the whole header when `verify` reads
// the arrays). `path` names the shard in errors. Rejects: a size smaller than
// the header, offsets out of order or past the end, a meta CRC mismatch (when
// verify_meta_crc), and an unfinished file (N = 0 but more than 12 bytes).
Status ParseShardHeader(const std::string& path, const uint8_t* header, size_t header_size, uint64_t file_size,
                        bool verify_meta_crc, ShardHeader* out);

}  // namespace ffr
