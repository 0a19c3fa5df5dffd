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
#include <string>

#include "ffr/status.h"

namespace ffyolo {

// OK when `data` is a whole zip archive whose every entry matches its CRC;
// else Corruption naming `where` and the first bad entry.
ffr::Status CheckZipIntegrity(const uint8_t* data, size_t size, const std::string& where);

}  // namespace ffyolo
