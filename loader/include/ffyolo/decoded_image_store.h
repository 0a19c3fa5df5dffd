// DecodedImageStore: load_image's outputs that several samples of an epoch
// read, decoded once and shared by the loader's threads (Ultralytics 8's
// mosaic training, docs/loader.md "The decoded image store"). Ultralytics
// keeps each worker's recent loads decoded in its buffer and takes mosaic
// tiles from there; the loader plans which loads share an image
// (PlanDecodeSpans: a span, and how many samples read it) and this store holds
// a span's image from its first read to its last sample's release, in
// whatever order the threads come. Only where pixels come from changes: a
// stored image is the whole image a read would decode.
//
// Memory is bounded by max_bytes: a read that would take the store past it
// decodes for itself and stores nothing (as does a span's last sample),
// so no thread ever waits for memory. A thread waits only for another that is
// decoding the same span, and a decoding thread publishes or abandons it
// before it reads anything else.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <opencv2/core.hpp>

namespace ffyolo {

// Since the loader opened.
struct DecodeStats {
  int64_t decodes = 0;       // images decoded (the loader's count: every mode, validation too)
  int64_t store_hits = 0;    // reads served from the store
  int64_t store_full = 0;    // reads decoded and not stored because the store was at max_bytes
  int64_t peak_images = 0;   // most images held (or being decoded into it) at once
  uint64_t peak_bytes = 0;   // their most bytes at once
};

class DecodedImageStore {
 public:
  explicit DecodedImageStore(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // A new plan: every image dropped; span s is read by samples_per_span[s]
  // samples. Called while no thread uses the store.
  void Reset(std::vector<int32_t> samples_per_span);

  enum class Claim {
    kHeld,      // *image is the span's image
    kDecode,    // the caller decodes the whole image, then Publish or Abandon
    kUnstored,  // the caller decodes what it needs for itself
  };
  // A read of `span`'s image, `bytes` once decoded, by a sample not yet released.
  Claim Acquire(int32_t span, uint64_t bytes, cv::Mat* image);
  void Publish(int32_t span, const cv::Mat& image);  // after kDecode: the image, owned (not a view of a scratch buffer)
  void Abandon(int32_t span);                        // after kDecode: the decode failed
  // A sample done with `span` (whether it read the image or failed before): the image goes with the last.
  void Release(int32_t span);

  DecodeStats stats() const;  // decodes left 0

 private:
  struct Entry {
    cv::Mat image;  // empty while decoding
    uint64_t bytes = 0;
  };

  const uint64_t max_bytes_;
  mutable std::mutex mu_;
  std::condition_variable decoded_;  // a decoding entry published or abandoned
  std::vector<int32_t> remaining_;   // per span: samples not yet released
  std::unordered_map<int32_t, Entry> entries_;
  uint64_t bytes_ = 0;
  DecodeStats stats_;
};

}  // namespace ffyolo
