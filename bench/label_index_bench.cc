// How long a packed split's label index takes to load: Dataset::LoadLabelIndex
// (read the file, check the zstd frame's checksum, decompress, parse) of the
// dataset given on the command line, several times, after one untimed load that
// brings the file into the page cache. docs/bench.md, "Packing at COCO scale":
// the goal is under 1 s for COCO's 118,287 train images.
//
//   label_index_bench DATASET.ffr [SPLIT] [REPEATS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ffyolo/dataset.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATASET.ffr [SPLIT] [REPEATS]\n", argv[0]);
    return 2;
  }
  std::unique_ptr<ffyolo::Dataset> dataset;
  ffr::Status s = ffyolo::Dataset::Open(argv[1], &dataset);
  std::string split = argc > 2 ? argv[2] : "";
  if (s.ok()) s = dataset->ResolveSplit(/*training=*/true, &split);
  const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  std::vector<double> ms;
  size_t samples = 0, boxes = 0;
  for (int r = 0; s.ok() && r <= repeats; ++r) {
    ffyolo::LabelIndex index;
    const auto start = std::chrono::steady_clock::now();
    s = dataset->LoadLabelIndex(split, &index);
    const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (r > 0) ms.push_back(elapsed);  // the first load warms the page cache
    samples = index.size();
    boxes = index.total_boxes();
  }
  if (!s.ok()) {
    std::fprintf(stderr, "label_index_bench: %s\n", s.ToString().c_str());
    return 1;
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%s %s: %zu samples, %zu boxes; LoadLabelIndex min %.1f ms, median %.1f ms, max %.1f ms (%d loads)\n",
              argv[1], split.c_str(), samples, boxes, ms.front(), ms[ms.size() / 2], ms.back(), repeats);
  return 0;
}
