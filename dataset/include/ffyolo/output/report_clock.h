// ReportClock: paces progress callbacks of long library work (packing,
// cache building) to a few a second, so that a tool's drawing never slows it.
#pragma once

#include <chrono>

namespace ffyolo {

class ReportClock {
 public:
  // True when a report is due: `force`, or 200 ms since the last one.
  bool Due(bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(200)) return false;
    last_ = now;
    return true;
  }

 private:
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace ffyolo
