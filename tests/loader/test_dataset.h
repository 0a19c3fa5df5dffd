// Small packed synthetic datasets for the loader tests, built once per process.
#pragma once

#include <string>

namespace ffyolo::testing {

// A packed yolo-synth dataset (train2017: `train` images, val2017: `val`),
// generated and packed on first use under the build tree.
const std::string& PackedSyntheticDataset(int train = 48, int val = 16);

}  // namespace ffyolo::testing
