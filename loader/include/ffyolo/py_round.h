// Python's round(): exact halves go to the even neighbour (banker's rounding),
// unlike std::round. YOLOv5's formulas (letterbox, accumulate, warmup) use it.
#pragma once

#include <cmath>

namespace ffyolo {

inline double PyRound(double x) {
  // x - trunc(x) is exact in double.
  if (std::fabs(x - std::trunc(x)) == 0.5) return 2.0 * std::round(x / 2.0);
  return std::round(x);
}

}  // namespace ffyolo
