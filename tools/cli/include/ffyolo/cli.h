// What the tools' mains share besides progress bars: flag values CLI11 cannot
// parse by itself.
#pragma once

#include <cstdint>
#include <string>

namespace ffyolo {

// A byte count: digits with an optional fraction and unit, K/KiB/k, M/MiB or
// G/GiB (powers of 1024), e.g. "4096", "256M", "1.5G". False, with *error
// saying why, for anything else, for 0 and for more than 2^64 - 1 bytes.
bool ParseByteSize(const std::string& text, uint64_t* bytes, std::string* error);

}  // namespace ffyolo
