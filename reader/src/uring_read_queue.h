// The POSIX Env's ReadQueue: an io_uring instance with the files' descriptors registered.
#pragma once

#include <memory>
#include <vector>

#include "ffr/env.h"

namespace ffr::internal {

// A queue of `depth` entries over `fds`; NotSupported where the kernel refuses io_uring.
Status NewUringReadQueue(const std::vector<int>& fds, unsigned depth, std::unique_ptr<ReadQueue>* out);

}  // namespace ffr::internal
