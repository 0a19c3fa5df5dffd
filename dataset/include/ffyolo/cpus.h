// How many CPUs this process may run on (its affinity mask, e.g. after NUMA
// binding), which is what thread pools should size themselves by.
#pragma once

namespace ffyolo {

int UsableCpus();

}  // namespace ffyolo
