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
#include <string_view>

#include "ffr/status.h"

namespace ffyolo {

// Entries whose name `wants` accepts go to `check` with their bytes (inflated
// when compressed; at most kMaxCheckedEntryBytes) once their CRC has matched.
struct ZipEntryCheck {
  std::function<bool(const std::string& name)> wants;
  std::function<ffr::Status(const std::string& name, std::string_view bytes)> check;
};
inline constexpr uint64_t kMaxCheckedEntryBytes = uint64_t{64} << 20;

// OK when `data` is a whole zip archive whose every entry matches its CRC
// (and passes `checked`, when given); else Corruption naming `where` and the
// first bad entry, or what `checked->check` returned.
ffr::Status CheckZipIntegrity(const uint8_t* data, size_t size, const std::string& where,
                              const ZipEntryCheck* checked = nullptr);

}  // namespace ffyolo
