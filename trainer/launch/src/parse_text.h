// Strict parsing of environment variables and sysfs values, where a
// half-parsed "4(x2)" or "12abc" must be an error rather than a 4 or a 12.
#pragma once

#include <string>
#include <vector>

namespace ffyolo {

// True when all of `text` is one decimal int (optional leading '-').
bool ParseInt(const std::string& text, int* value);

// The comma-separated fields of `text`, empty ones included: "" is {""} and
// "1," is {"1", ""}, so that a caller's per-field check sees them.
std::vector<std::string> SplitCommas(const std::string& text);

}  // namespace ffyolo
