// The benchmarks' second clock: what the work cost in CPU, whatever else the machine ran meanwhile.
#pragma once

#include <time.h>

namespace ffyolo {

// Seconds on `clock`: CLOCK_PROCESS_CPUTIME_ID (every thread of the process) or CLOCK_THREAD_CPUTIME_ID.
inline double CpuSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace ffyolo
