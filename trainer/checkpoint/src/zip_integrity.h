// Zip integrity: checks every entry of a zip archive against the CRC-32 its
// central directory records. LibTorch archives (checkpoints) are zip files
// whose writer records those CRCs but whose reader never checks them (it is
// built with miniz's CRC checks off), so flipped bytes in a checkpoint would
// load as weights; this is the check it skips. Handles stored and deflated
// entries and zip64 sizes and offsets; every offset is bounds-checked, so any
// bytes may be passed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ffr/status.h"

namespace ffyolo {

// An entry of an archive that passed the check.
struct ZipEntry {
  std::string name;
  uint64_t size = 0;     // its bytes, inflated
  std::string contents;  // only when `keep` chose it: its bytes, inflated
};
inline constexpr uint64_t kMaxKeptEntryBytes = uint64_t{64} << 20;

// OK when `data` is a whole zip archive whose every entry matches its CRC;
// else Corruption naming `where` and the first bad entry. With `entries`,
// lists every entry in archive order, with the contents of those `keep`
// accepts (one of those over kMaxKeptEntryBytes is refused).
ffr::Status CheckZipIntegrity(const uint8_t* data, size_t size, const std::string& where,
                              std::vector<ZipEntry>* entries = nullptr,
                              const std::function<bool(const std::string& name)>& keep = {});

}  // namespace ffyolo
