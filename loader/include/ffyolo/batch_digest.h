// Batch digests: a loader's batches reduced to CRC-32s, so that two loaders (another
// process, machine, thread count, or the Python package's) can be shown to give the
// same batches, bit for bit. What `yolo-ffr batches` prints.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ffr/status.h"
#include "ffyolo/batch.h"
#include "ffyolo/dataset.h"
#include "ffyolo/loader.h"

namespace ffyolo {

struct BatchDigest {
  int64_t index = 0;
  int size = 0, height = 0, width = 0;
  size_t targets = 0;
  uint32_t images_crc = 0;   // CRC-32 (zlib's) of the [B, 3, H, W] uint8 pixels
  uint32_t targets_crc = 0;  // of the (n, 6) float32 target rows, little-endian
};

BatchDigest DigestOf(const Batch& batch);

// "batch 3: 16 images 640x640, 97 targets, images crc32 1a2b3c4d, targets crc32 ..."
std::string FormatBatchDigest(const BatchDigest& digest);

// Runs a loader with `options` over `epoch` from batch 0, at most `limit` batches
// (< 0: all), and calls `each` with every batch's digest in order.
ffr::Status DigestBatches(const Dataset& dataset, const LoaderOptions& options, int64_t epoch, int64_t limit,
                          const std::function<void(const BatchDigest&)>& each);

}  // namespace ffyolo
