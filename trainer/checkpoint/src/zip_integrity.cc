#include "zip_integrity.h"

#include <zlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ffr/format.h"

namespace ffyolo {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr size_t kEndOfDirectorySize = 22, kLocatorSize = 20, kDirectoryEntrySize = 46, kLocalHeaderSize = 30;

// Little-endian reads that fail instead of reading past the end.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool Has(uint64_t at, uint64_t n) const { return at <= size_ && n <= size_ - at; }
  uint64_t Get(uint64_t at, int n) const {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | data_[at + i];
    return v;
  }
  const uint8_t* At(uint64_t at) const { return data_ + at; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
};

// CRC-32 of a raw deflate stream's output, which goes to *kept too when given;
// false when it does not inflate to `size` bytes.
bool InflatedCrc(const uint8_t* in, uint64_t in_size, uint64_t size, uint32_t* crc, std::string* kept) {
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return false;
  std::vector<uint8_t> out(64 << 10);
  z.next_in = const_cast<uint8_t*>(in);
  z.avail_in = static_cast<uInt>(std::min<uint64_t>(in_size, UINT32_MAX));
  uint32_t c = 0;
  uint64_t produced = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = out.data();
    z.avail_out = static_cast<uInt>(out.size());
    rc = inflate(&z, Z_NO_FLUSH);
    const size_t n = out.size() - z.avail_out;
    c = ffr::Crc32Extend(c, out.data(), n);
    produced += n;
    if (kept != nullptr && produced <= size) kept->append(reinterpret_cast<const char*>(out.data()), n);
    if (rc == Z_OK && n == 0 && z.avail_in == 0) break;  // truncated input
  }
  inflateEnd(&z);
  *crc = c;
  return rc == Z_STREAM_END && produced == size;
}

}  // namespace

ffr::Status CheckZipIntegrity(const uint8_t* data, size_t size, const std::string& where,
                              std::vector<ZipEntry>* entries, const std::function<bool(const std::string&)>& keep) {
  const Bytes b(data, size);
  const auto bad = [&](const std::string& what) { return ffr::Status::Corruption(where + ": " + what); };
  // The end-of-central-directory record: the last signature within its size plus a comment.
  if (size < kEndOfDirectorySize) return bad("too short for a zip archive (truncated?)");
  uint64_t eocd = size - kEndOfDirectorySize;
  const uint64_t lowest = eocd > 0xffff ? eocd - 0xffff : 0;
  while (b.Get(eocd, 4) != kEndOfDirectory) {
    if (eocd == lowest) return bad("no zip end-of-directory record (truncated?)");
    --eocd;
  }
  uint64_t count = b.Get(eocd + 10, 2), directory_size = b.Get(eocd + 12, 4), directory = b.Get(eocd + 16, 4);
  if (count == 0xffff || directory_size == 0xffffffff || directory == 0xffffffff) {
    if (eocd < kLocatorSize || b.Get(eocd - kLocatorSize, 4) != kZip64Locator) return bad("no zip64 locator");
    const uint64_t record = b.Get(eocd - kLocatorSize + 8, 8);
    if (!b.Has(record, 56) || b.Get(record, 4) != kZip64EndOfDirectory) return bad("bad zip64 end-of-directory record");
    count = b.Get(record + 32, 8);
    directory_size = b.Get(record + 40, 8);
    directory = b.Get(record + 48, 8);
  }
  if (!b.Has(directory, directory_size)) return bad("the zip directory lies outside the file (truncated?)");
  uint64_t at = directory;
  if (entries != nullptr) entries->clear();
  for (uint64_t e = 0; e < count; ++e) {
    if (!b.Has(at, kDirectoryEntrySize) || b.Get(at, 4) != kDirectoryEntry)
      return bad("zip directory entry " + std::to_string(e) + " is damaged");
    const uint64_t method = b.Get(at + 10, 2);
    const uint32_t crc = static_cast<uint32_t>(b.Get(at + 16, 4));
    uint64_t packed = b.Get(at + 20, 4), unpacked = b.Get(at + 24, 4), local = b.Get(at + 42, 4);
    const uint64_t name_size = b.Get(at + 28, 2), extra_size = b.Get(at + 30, 2), comment_size = b.Get(at + 32, 2);
    const uint64_t next = at + kDirectoryEntrySize + name_size + extra_size + comment_size;
    if (!b.Has(at, next - at)) return bad("zip directory entry " + std::to_string(e) + " is damaged");
    const std::string name(reinterpret_cast<const char*>(b.At(at + kDirectoryEntrySize)), name_size);
    // Zip64: the 32-bit fields that overflowed come, in this order, from the 0x0001 extra field.
    for (uint64_t x = at + kDirectoryEntrySize + name_size, end = x + extra_size; x + 4 <= end;) {
      const uint64_t id = b.Get(x, 2), n = b.Get(x + 2, 2);
      if (x + 4 + n > end) break;
      uint64_t field = x + 4;
      for (uint64_t* v : {&unpacked, &packed, &local}) {
        if (*v != 0xffffffff || field + 8 > x + 4 + n || id != 1) continue;
        *v = b.Get(field, 8);
        field += 8;
      }
      x += 4 + n;
    }
    if (!b.Has(local, kLocalHeaderSize) || b.Get(local, 4) != kLocalHeader)
      return bad("'" + name + "': damaged zip entry header");
    const uint64_t start = local + kLocalHeaderSize + b.Get(local + 26, 2) + b.Get(local + 28, 2);
    if (!b.Has(start, packed)) return bad("'" + name + "' lies past the end of the file (truncated?)");
    const bool kept = entries != nullptr && keep && keep(name);
    if (kept && unpacked > kMaxKeptEntryBytes) return bad("'" + name + "' is too large");
    uint32_t actual = 0;
    std::string contents;
    if (method == 0) {
      if (packed != unpacked) return bad("'" + name + "': stored entry with two sizes");
      actual = ffr::Crc32(b.At(start), packed);
      if (kept) contents.assign(reinterpret_cast<const char*>(b.At(start)), packed);
    } else if (method == 8) {
      if (!InflatedCrc(b.At(start), packed, unpacked, &actual, kept ? &contents : nullptr))
        return bad("'" + name + "': compressed data is damaged");
    } else {
      return bad("'" + name + "': zip compression method " + std::to_string(method) + " is not one LibTorch writes");
    }
    if (actual != crc) return bad("'" + name + "' is damaged (CRC-32 mismatch)");
    if (entries != nullptr) entries->push_back({name, unpacked, std::move(contents)});
    at = next;
  }
  return ffr::Status::OK();
}

}  // namespace ffyolo
