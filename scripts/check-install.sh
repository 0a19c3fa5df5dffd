#!/usr/bin/env bash
# Installs a whole build into a temporary prefix and uses only that copy, from
# a temporary folder outside the checkout: yolo-train finds its shipped model
# configs beside itself, yolo-synth, yolo-pack and yolo-ffr make and check a
# small dataset, and two tiny consumers read that dataset through the
# installed libraries: one with CMake (find_package(ffyolo) -> ffyolo::dataset,
# which finds ffr::ffr) and one with pkg-config (ffyolo.pc, ffr.pc).
#
#   scripts/check-install.sh <build-dir>
#
# Run by ctest as install_test; exits nonzero on the first failure and then
# leaves the temporary folder for a look.
set -euo pipefail

build=$(realpath "$1")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ffyolo-install.XXXXXX")
trap 'echo "left in $scratch"' ERR
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
bin=$prefix/bin
mkdir "$scratch/work"
cd "$scratch/work"

echo "== yolo-train --summary with shipped configs"
"$bin/yolo-train" --cfg yolov5s --nc 80 --summary >summary.txt
grep "YOLOv5s summary" summary.txt
# A model that only the prefix holds resolves too: configs come from beside the binary.
models=$prefix/share/ffyolo/configs/models
cp "$models/yolov5n.yaml" "$models/yolov5n-installed.yaml"
"$bin/yolo-train" --cfg yolov5n-installed --nc 3 --summary | grep "YOLOv5n-installed summary"

echo "== yolo-synth, yolo-pack, yolo-ffr verify"
"$bin/yolo-synth" -o synth --train 8 --val 4 --classes 3 --min-size 64 --max-size 96 --seed 1 >/dev/null
"$bin/yolo-pack" synth -o synth.ffr >/dev/null
"$bin/yolo-ffr" verify synth.ffr

mkdir src
# Opens the packed dataset and reads its first training sample.
cat >src/consumer.cc <<'CC'
#include <cstdio>
#include <memory>
#include <string>

#include "ffyolo/dataset.h"
#include "ffyolo/record.h"

int main(int argc, char** argv) {
  std::unique_ptr<ffyolo::Dataset> dataset;
  ffr::Status s = ffyolo::Dataset::Open(argv[1], &dataset);
  std::string split;
  if (s.ok()) s = dataset->ResolveSplit(true, &split);
  std::unique_ptr<ffr::Reader> reader;
  if (s.ok()) s = dataset->OpenReader(split, ffr::ReaderOptions(), &reader);
  ffr::ReadBuffer buffer;
  ffr::Sample sample;
  if (s.ok()) s = reader->Read(0, &buffer, &sample);
  ffyolo::RecordView record;
  if (s.ok()) s = ffyolo::RecordView::Parse(sample.data, sample.size, split + " sample 0", &record);
  if (!s.ok()) {
    std::fprintf(stderr, "consumer failed: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("%zu classes, %s: %lld samples, the first %ux%u\n", dataset->num_classes(), split.c_str(),
              static_cast<long long>(reader->size()), record.width(), record.height());
  return 0;
}
CC
cat >src/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.20)
project(ffyolo_consumer CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(ffyolo 0.1 REQUIRED)
message(STATUS "ffyolo from ${ffyolo_DIR}, ffr from ${ffr_DIR}")
add_executable(consumer consumer.cc)
target_link_libraries(consumer PRIVATE ffyolo::dataset)
CM

echo "== CMake consumer (find_package(ffyolo))"
cmake -S src -B cmake_build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >cmake_configure.log ||
  { cat cmake_configure.log; exit 1; }
grep -F "ffyolo from $prefix/" cmake_configure.log | grep -F "ffr from $prefix/"
cmake --build cmake_build -j2 >/dev/null
cmake_build/consumer synth.ffr | tee consumer.txt
grep -q "3 classes, train2017: 8 samples" consumer.txt

echo "== pkg-config consumer (ffyolo.pc)"
PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name ffyolo.pc)")
export PKG_CONFIG_PATH
flags=$(pkg-config --static --cflags --libs ffyolo)
# shellcheck disable=SC2086  # the flags are words
c++ -std=c++17 -o consumer_pc src/consumer.cc $flags
./consumer_pc synth.ffr

rm -rf "$scratch"
