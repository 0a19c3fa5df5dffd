#!/usr/bin/env bash
# Installs libffr from a build tree into a scratch prefix, then builds and runs
# two tiny consumers against the installed copy only: one with CMake
# (find_package(ffr) -> ffr::ffr, C++ and C) and one with pkg-config (C).
#
#   scripts/check-reader-install.sh <build-dir> <scratch-dir>
#
# Run by ctest as reader_install_consumer; exits nonzero on the first failure.
set -euo pipefail

build=$(realpath "$1")
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(realpath "$scratch")
prefix=$scratch/prefix

cmake --install "$build" --component ffr --prefix "$prefix" >/dev/null

src=$scratch/src
mkdir -p "$src"
# The C consumer: writes a shard, reads it back, checks bytes and errors.
cat >"$src/consumer.c" <<'C'
#include <stdio.h>
#include <string.h>

#include "ffr/ffr.h"

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #cond, ffr_last_error()); return 1; } } while (0)

int main(int argc, char** argv) {
  const char* samples[] = {"abc", "hello", ""};
  char path[4096];
  snprintf(path, sizeof(path), "%s/c.ffr", argc > 1 ? argv[1] : ".");
  ffr_writer* w = NULL;
  CHECK(ffr_writer_create(path, 3, &w) == FFR_OK);
  for (int i = 0; i < 3; ++i) CHECK(ffr_writer_append(w, samples[i], strlen(samples[i])) == FFR_OK);
  CHECK(ffr_writer_finish(w) == FFR_OK);

  ffr_reader* r = NULL;
  CHECK(ffr_reader_open(path, NULL, &r) == FFR_OK);
  CHECK(ffr_reader_size(r) == 3);
  char buf[16];
  uint64_t size = 0;
  CHECK(ffr_reader_read(r, 1, buf, sizeof(buf), &size) == FFR_OK);
  CHECK(size == 5 && memcmp(buf, "hello", 5) == 0);
  CHECK(ffr_reader_read(r, 3, buf, sizeof(buf), &size) == FFR_INVALID_ARGUMENT);
  CHECK(strstr(ffr_last_error(), "out of range") != NULL);
  ffr_reader_close(r);
  printf("C consumer OK (%s)\n", path);
  return 0;
}
C
# The C++ consumer: the same through ffr::ShardWriter and ffr::Reader.
cat >"$src/consumer.cc" <<'CC'
#include <cstdio>
#include <memory>
#include <string>

#include "ffr/reader.h"
#include "ffr/shard_writer.h"

int main(int argc, char** argv) {
  const std::string path = std::string(argc > 1 ? argv[1] : ".") + "/cc.ffr";
  std::unique_ptr<ffr::ShardWriter> w;
  ffr::Status s = ffr::ShardWriter::Create(path, 2, nullptr, &w);
  if (s.ok()) s = w->Append("abc", 3);
  if (s.ok()) s = w->Append("hello", 5);
  if (s.ok()) s = w->Finish();
  std::unique_ptr<ffr::Reader> r;
  if (s.ok()) s = ffr::Reader::Open(path, ffr::ReaderOptions(), &r);
  ffr::ReadBuffer buffer;
  ffr::Sample sample;
  if (s.ok()) s = r->Read(1, &buffer, &sample);
  if (!s.ok() || std::string(reinterpret_cast<const char*>(sample.data), sample.size) != "hello") {
    std::fprintf(stderr, "C++ consumer failed: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("C++ consumer OK (%s, %s)\n", path.c_str(), ffr::IoBackendName(r->backend()));
  return 0;
}
CC
cat >"$src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(ffr_consumer C CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(ffr 0.1 REQUIRED)
message(STATUS "ffr from ${ffr_DIR}")
add_executable(consumer_cc consumer.cc)
target_link_libraries(consumer_cc PRIVATE ffr::ffr)
add_executable(consumer_c consumer.c)
target_link_libraries(consumer_c PRIVATE ffr::ffr)
CM

echo "== CMake consumer (find_package(ffr))"
cmake -S "$src" -B "$scratch/cmake_build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$scratch/cmake_configure.log" ||
  { cat "$scratch/cmake_configure.log"; exit 1; }
grep -F "ffr from $prefix/" "$scratch/cmake_configure.log"
cmake --build "$scratch/cmake_build" -j2
"$scratch/cmake_build/consumer_cc" "$scratch"
"$scratch/cmake_build/consumer_c" "$scratch"

echo "== pkg-config consumer"
export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name ffr.pc)")
libdir=$(pkg-config --variable=libdir ffr)
if [[ -e $libdir/libffr.so ]]; then
  flags=$(pkg-config --cflags --libs ffr)
else
  flags=$(pkg-config --static --cflags --libs ffr)
fi
echo "cc consumer.c $flags"
# shellcheck disable=SC2086  # the flags are words
cc -std=c99 -Wall -Werror -o "$scratch/consumer_pc" "$src/consumer.c" $flags -Wl,-rpath,"$libdir"
"$scratch/consumer_pc" "$scratch"
