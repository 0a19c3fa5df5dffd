#include "ffyolo/cli.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

namespace ffyolo {
namespace {

// stdio keeps a write's failure in the stream's error flag; the last buffered bytes only fail now.
int CheckStdoutWritten(const char* tool, int status) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout) && !std::cout.bad()) return status;
  std::fprintf(stderr, "%s: error: the output to stdout was not all written%s%s\n", tool,
               !flushed && errno != 0 ? ": " : "", !flushed && errno != 0 ? std::strerror(errno) : "");
  return status == 0 ? 1 : status;
}

}  // namespace

int RunMain(const char* tool, const std::function<int()>& main) {
  int status = 1;
  try {
    status = main();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: error: unknown exception\n", tool);
  }
  return CheckStdoutWritten(tool, status);
}

bool ParseByteSize(const std::string& text, uint64_t* bytes, std::string* error) {
  const auto fail = [&](const std::string& why) {
    *error = "'" + text + "' " + why;
    return false;
  };
  size_t pos = 0;
  uint64_t whole = 0;
  bool overflow = false;
  for (; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos)
    overflow |= __builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, text[pos] - '0', &whole);
  const size_t whole_digits = pos;
  double fraction = 0, scale = 1;
  if (pos < text.size() && text[pos] == '.')
    for (++pos; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos)
      fraction += (text[pos] - '0') * (scale /= 10);
  if (whole_digits == 0 && scale == 1) return fail("is not a size (examples: 4096, 256M, 1G)");
  const std::string unit = text.substr(pos);
  uint64_t multiplier = 1;
  if (unit == "K" || unit == "KiB" || unit == "k") multiplier = uint64_t{1} << 10;
  else if (unit == "M" || unit == "MiB") multiplier = uint64_t{1} << 20;
  else if (unit == "G" || unit == "GiB") multiplier = uint64_t{1} << 30;
  else if (!unit.empty()) return fail("has an unknown unit '" + unit + "' (use K, M or G)");
  // The fraction is of one unit (at most 2^30 bytes), so it never overflows by itself.
  uint64_t total = 0;
  overflow |= __builtin_mul_overflow(whole, multiplier, &total) ||
              __builtin_add_overflow(total, static_cast<uint64_t>(fraction * multiplier), &total);
  if (overflow) return fail("is too large (at most 2^64 - 1 bytes, 16 EiB)");
  if (total == 0) return fail("is not a positive size");
  *bytes = total;
  return true;
}

}  // namespace ffyolo
