// checkpoint_fuzz's input: a checkpoint's zip entries back to back, each
// [1-byte name length][name][4-byte little-endian data length][data] (a
// length past the end takes what is left; tests/fuzz/checkpoint_entries.py
// writes one from a checkpoint), and the zip archive made of them, every entry
// stored with its correct CRC-32, so that it passes CheckZipIntegrity. Shared
// with the unit tests that replay the inputs the fuzzer found.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ffr/format.h"

namespace checkpoint_input {

using Entry = std::pair<std::string, std::string>;  // name, data

inline std::vector<Entry> Entries(const uint8_t* data, size_t size) {
  std::vector<Entry> entries;
  size_t at = 0;
  const auto take = [&](size_t n) {
    n = std::min(n, size - at);
    std::string s(reinterpret_cast<const char*>(data + at), n);
    at += n;
    return s;
  };
  while (at < size) {
    const size_t name_size = data[at++];
    std::string name = take(name_size);
    const std::string length = take(4);
    uint64_t n = 0;
    for (size_t i = length.size(); i-- > 0;) n = (n << 8) | static_cast<uint8_t>(length[i]);
    entries.emplace_back(std::move(name), take(n));
  }
  return entries;
}

inline void Put(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A zip archive of stored entries, as LibTorch writes them (no zip64: the
// input is far below 4 GiB).
inline std::string Zip(const std::vector<Entry>& entries) {
  std::string zip, directory;
  for (const auto& [name, data] : entries) {
    const uint32_t crc = ffr::Crc32(data.data(), data.size());
    const uint64_t local = zip.size();
    Put(&zip, 0x04034b50, 4);
    Put(&zip, 20, 2);  // version needed
    Put(&zip, 0, 2);   // flags
    Put(&zip, 0, 2);   // stored
    Put(&zip, 0, 4);   // time, date
    Put(&zip, crc, 4);
    Put(&zip, data.size(), 4);
    Put(&zip, data.size(), 4);
    Put(&zip, name.size(), 2);
    Put(&zip, 0, 2);  // extra
    zip += name;
    zip += data;
    Put(&directory, 0x02014b50, 4);
    Put(&directory, 20, 2);  // made by
    Put(&directory, 20, 2);  // needed
    Put(&directory, 0, 2);
    Put(&directory, 0, 2);
    Put(&directory, 0, 4);
    Put(&directory, crc, 4);
    Put(&directory, data.size(), 4);
    Put(&directory, data.size(), 4);
    Put(&directory, name.size(), 2);
    Put(&directory, 0, 2);  // extra
    Put(&directory, 0, 2);  // comment
    Put(&directory, 0, 2);  // disk
    Put(&directory, 0, 2);  // internal attributes
    Put(&directory, 0, 4);  // external attributes
    Put(&directory, local, 4);
    directory += name;
  }
  const uint64_t at = zip.size();
  zip += directory;
  Put(&zip, 0x06054b50, 4);
  Put(&zip, 0, 4);  // disks
  Put(&zip, entries.size(), 2);
  Put(&zip, entries.size(), 2);
  Put(&zip, directory.size(), 4);
  Put(&zip, at, 4);
  Put(&zip, 0, 2);  // comment
  return zip;
}

}  // namespace checkpoint_input
