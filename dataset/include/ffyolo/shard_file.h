// The file name of the k-th shard of a split or a pixel cache: PART_00000.ffr,
// PART_00001.ffr, ... (FFRecord's naming; readers take them in sorted order).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace ffyolo {

inline std::string ShardFileName(size_t k) {
  char name[32];
  std::snprintf(name, sizeof(name), "PART_%05zu.ffr", k);
  return name;
}

}  // namespace ffyolo
