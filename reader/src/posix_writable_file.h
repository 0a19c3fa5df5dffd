// The POSIX Env's WritableFiles: a buffered one (pwrite) and an O_DIRECT one that writes past the
// page cache from aligned chunks of its own while the next chunk fills.
#pragma once

#include <memory>
#include <string>

#include "ffr/env.h"

namespace ffr::internal {

// Takes `fd`, open for writing (with O_DIRECT and for reading too when `direct`), and closes it.
std::unique_ptr<WritableFile> NewPosixWritableFile(const std::string& path, int fd, bool direct);

}  // namespace ffr::internal
