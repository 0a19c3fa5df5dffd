// What the tools' mains share besides progress bars: the last word on an
// exception that escapes them, and flag values CLI11 cannot parse by itself.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace ffyolo {

// Runs a tool's main. The libraries report through Status, yet an exception
// can still escape them (std::bad_alloc, a std::filesystem call without an
// error_code, a bug): it ends the tool with "<tool>: error: <what>" on stderr
// and exit status 1, where std::terminate would abort (status 134, a core
// dump) with a message users cannot act on.
// It also makes sure that what the tool printed on stdout was written: stdout
// is flushed at the end, and a write that failed (a full disk, /dev/full, a
// file system gone) ends the tool with "<tool>: error: ..." and exit status 1,
// where the output would be cut short under exit status 0.
int RunMain(const char* tool, const std::function<int()>& main);

// A byte count: digits with an optional fraction and unit, K/KiB/k, M/MiB or
// G/GiB (powers of 1024), e.g. "4096", "256M", "1.5G". False, with *error
// saying why, for anything else, for 0 and for more than 2^64 - 1 bytes.
bool ParseByteSize(const std::string& text, uint64_t* bytes, std::string* error);

}  // namespace ffyolo
