#include "ffr/format.h"

#include <zlib.h>

#include <algorithm>

#ifdef FFR_HAVE_ISAL
#include <isa-l/crc.h>
#endif

#include "ffr/endian.h"

namespace ffr {

uint32_t Crc32Extend(uint32_t crc, const void* data, size_t n) {
#ifdef FFR_HAVE_ISAL
  // ISA-L's PCLMUL/AVX-512 CRC of the same polynomial and conventions as zlib's crc32, several times faster.
  return crc32_gzip_refl(crc, static_cast<const unsigned char*>(data), n);
#endif
  constexpr size_t kChunk = size_t{1} << 30;  // zlib takes a uInt length
  const Bytef* p = static_cast<const Bytef*>(data);
  while (n > 0) {
    const size_t len = std::min(n, kChunk);
    crc = static_cast<uint32_t>(::crc32(crc, p, static_cast<uInt>(len)));
    p += len;
    n -= len;
  }
  return crc;
}

uint32_t Crc32(const void* data, size_t n) { return Crc32Extend(0, data, n); }

std::string EncodeShardHeader(const std::vector<uint32_t>& crcs, const std::vector<uint64_t>& offsets) {
  const int64_t n = static_cast<int64_t>(crcs.size());
  std::string out;
  out.reserve(ShardHeader::EncodedSize(n));
  PutFixed32(&out, 0);
  PutFixed64(&out, static_cast<uint64_t>(n));
  for (uint32_t c : crcs) PutFixed32(&out, c);
  for (uint64_t o : offsets) PutFixed64(&out, o);
  const uint32_t meta = Crc32(out.data() + 4, out.size() - 4);
  EncodeFixed32(reinterpret_cast<uint8_t*>(out.data()), meta);
  return out;
}

Status ParseShardHeader(const std::string& path, const uint8_t* header, size_t header_size, uint64_t file_size,
                        bool verify_meta_crc, ShardHeader* out) {
  if (file_size < kShardPrefixSize || header_size < kShardPrefixSize)
    return Status::Corruption(path + ": " + std::to_string(file_size) +
                              " bytes is shorter than the 12-byte FFRecord header");
  const uint32_t meta_crc = DecodeFixed32(header);
  const uint64_t n = DecodeFixed64(header + 4);
  if (n == 0 && meta_crc == 0 && file_size > kShardPrefixSize)
    return Status::Corruption(path + ": header is empty but the file holds " + std::to_string(file_size) +
                              " bytes (a writer that did not finish)");
  if (n > (file_size - kShardPrefixSize) / kShardEntrySize)
    return Status::Corruption(path + ": header says " + std::to_string(n) + " samples, more than a " +
                              std::to_string(file_size) + "-byte file can index");
  const uint64_t header_end = ShardHeader::EncodedSize(static_cast<int64_t>(n));
  if (header_size < header_end)
    return Status::InvalidArgument(path + ": header buffer too small");
  if (verify_meta_crc && meta_crc != 0) {
    const uint32_t actual = Crc32(header + 4, header_end - 4);
    if (actual != meta_crc)
      return Status::Corruption(path + ": header checksum mismatch (stored " + std::to_string(meta_crc) +
                                ", computed " + std::to_string(actual) + ")");
  }
  ShardHeader h;
  h.meta_crc = meta_crc;
  h.crcs.resize(n);
  h.offsets.resize(n + 1);
  const uint8_t* crcs = header + kShardPrefixSize;
  const uint8_t* offsets = crcs + 4 * n;
  for (uint64_t i = 0; i < n; ++i) {
    h.crcs[i] = DecodeFixed32(crcs + 4 * i);
    h.offsets[i] = DecodeFixed64(offsets + 8 * i);
  }
  h.offsets[n] = file_size;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t lo = i == 0 ? header_end : h.offsets[i - 1];
    if (h.offsets[i] < lo || h.offsets[i] > file_size)
      return Status::Corruption(path + ": sample " + std::to_string(i) + " offset " + std::to_string(h.offsets[i]) +
                                " is out of range [" + std::to_string(lo) + ", " + std::to_string(file_size) + "]");
  }
  *out = std::move(h);
  return Status::OK();
}

}  // namespace ffr
