// Strict decimal integers for environment variables and sysfs values, where a
// half-parsed "4(x2)" or "12abc" must be an error rather than a 4 or a 12.
#pragma once

#include <string>

namespace ffyolo {

// True when all of `text` is one decimal int (optional leading '-').
bool ParseInt(const std::string& text, int* value);

}  // namespace ffyolo
