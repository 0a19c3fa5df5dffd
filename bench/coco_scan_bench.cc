// The COCO instances JSON phase of yolo-pack alone: ScanSource of a COCO tree
// (reading annotations/instances_<split>.json and building the source listing),
// several times, with the wall and CPU time of each. docs/bench.md, "Packing at
// COCO scale".
//
//   coco_scan_bench COCO_ROOT [REPEATS]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ffyolo/source.h"

namespace {

double CpuSeconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s COCO_ROOT [REPEATS]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  ffyolo::ScanOptions options;
  options.layout = ffyolo::SourceLayout::kCocoJson;
  std::vector<double> wall, cpu;
  size_t images = 0;
  for (int r = 0; r < repeats; ++r) {
    ffyolo::SourceDataset dataset;
    const double cpu_start = CpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    const ffr::Status s = ffyolo::ScanSource(argv[1], options, &dataset);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    cpu.push_back(CpuSeconds() - cpu_start);
    if (!s.ok()) {
      std::fprintf(stderr, "coco_scan_bench: %s\n", s.ToString().c_str());
      return 1;
    }
    images = 0;
    for (const ffyolo::SourceSplit& split : dataset.splits) images += split.images.size();
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf("%s: %zu images; ScanSource wall min %.3f s, median %.3f s; CPU min %.3f s, median %.3f s (%d scans)\n",
              argv[1], images, wall.front(), wall[wall.size() / 2], cpu.front(), cpu[cpu.size() / 2], repeats);
  return 0;
}
