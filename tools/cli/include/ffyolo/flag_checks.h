// Checks of numeric flag values whose refusals say what the flag needs.
// CLI11's own PositiveNumber and NonNegativeNumber quote their double range,
// up to 1.8e308 written out in full, when they refuse a value.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ffyolo {

// A number in [lowest, highest]; `need` is the refusal ("must be ...") and the
// name help shows.
inline CLI::Validator NumberIn(double lowest, double highest, const std::string& need) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0;
        if (CLI::detail::lexical_cast(text, value) && value >= lowest && value <= highest) return std::string();
        return "'" + text + "' " + need;
      },
      "", need);
}

inline const CLI::Validator kPositive = NumberIn(1, 1e300, "must be at least 1");
inline const CLI::Validator kNonNegative = NumberIn(0, 1e300, "must be 0 or more");
// Thresholds and fractions.
inline const CLI::Validator kUnitInterval = NumberIn(0, 1, "must be between 0 and 1");

}  // namespace ffyolo
