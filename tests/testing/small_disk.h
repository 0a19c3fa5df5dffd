// SmallDisk: a tmpfs of a given size for the full-disk tests, unmounted at the
// end. Mounting needs root (and a container may forbid it even then): where it
// fails, mounted() is false and error() says why, for the test's skip message.
#pragma once

#include <sys/mount.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

namespace ffyolo::testing {

class SmallDisk {
 public:
  // `bytes` is rounded up to whole pages by tmpfs.
  SmallDisk(const std::string& dir, uint64_t bytes) : dir_(dir) {
    std::filesystem::create_directories(dir);
    const std::string options = "size=" + std::to_string(bytes);
    if (mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) == 0)
      mounted_ = true;
    else
      error_ = std::strerror(errno);
  }
  ~SmallDisk() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string dir_;
  bool mounted_ = false;
  std::string error_;
};

}  // namespace ffyolo::testing
