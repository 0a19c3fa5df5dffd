#include "ffyolo/batch_digest.h"

#include <cstdio>
#include <memory>

#include "ffr/format.h"

namespace ffyolo {

BatchDigest DigestOf(const Batch& batch) {
  BatchDigest d;
  d.index = batch.index;
  d.size = batch.size;
  d.height = batch.height;
  d.width = batch.width;
  d.targets = batch.num_targets();
  d.images_crc = ffr::Crc32(batch.images, batch.image_bytes());
  d.targets_crc = ffr::Crc32(batch.targets.data(), batch.targets.size() * sizeof(float));
  return d;
}

std::string FormatBatchDigest(const BatchDigest& d) {
  char line[160];
  std::snprintf(line, sizeof line, "batch %lld: %d images %dx%d, %zu targets, images crc32 %08x, targets crc32 %08x",
                static_cast<long long>(d.index), d.size, d.width, d.height, d.targets, d.images_crc, d.targets_crc);
  return line;
}

ffr::Status DigestBatches(const Dataset& dataset, const LoaderOptions& options, int64_t epoch, int64_t limit,
                          const std::function<void(const BatchDigest&)>& each) {
  std::unique_ptr<Loader> loader;
  FFR_RETURN_IF_ERROR(Loader::Open(dataset, options, &loader));
  FFR_RETURN_IF_ERROR(loader->Start(epoch));
  for (int64_t n = 0; limit < 0 || n < limit; ++n) {
    const Batch* batch = nullptr;
    FFR_RETURN_IF_ERROR(loader->Next(&batch));
    if (!batch) break;
    each(DigestOf(*batch));
    loader->Release(batch);
  }
  return ffr::Status::OK();
}

}  // namespace ffyolo
