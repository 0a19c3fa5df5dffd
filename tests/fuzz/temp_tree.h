// A directory below $TMPDIR (or /tmp) that lives as long as the fuzzing
// process, for targets whose parser reads a file tree: each input is written
// into it as the files the parser looks for.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

#include "ffr/env.h"

class TempTree {
 public:
  // Creates <tmp>/<name>.XXXXXX and the empty `dirs` below it.
  TempTree(const char* name, std::initializer_list<const char*> dirs) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" + name + ".XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    root_ = pattern;
    for (const char* dir : dirs) std::filesystem::create_directories(root_ + "/" + dir);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;
  ~TempTree() { ffr::Env::Default()->RemoveTree(root_); }

  const std::string& root() const { return root_; }

  // Writes `bytes` to root/relative, replacing what was there.
  void Write(const std::string& relative, std::string_view bytes) const {
    std::ofstream out(root_ + "/" + relative, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) std::abort();
  }

  void Remove(const std::string& relative) const {
    std::error_code ec;
    std::filesystem::remove(root_ + "/" + relative, ec);
  }

 private:
  std::string root_;
};
