#include "ffyolo/decoded_image_store.h"

#include <algorithm>

namespace ffyolo {

void DecodedImageStore::Reset(std::vector<int32_t> samples_per_span) {
  std::lock_guard<std::mutex> lock(mu_);
  remaining_ = std::move(samples_per_span);
  entries_.clear();
  bytes_ = 0;
}

DecodedImageStore::Claim DecodedImageStore::Acquire(int32_t span, uint64_t bytes, cv::Mat* image) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    const auto it = entries_.find(span);
    if (it == entries_.end()) break;
    if (!it->second.image.empty()) {
      *image = it->second.image;
      ++stats_.store_hits;
      return Claim::kHeld;
    }
    decoded_.wait(lock);  // another thread is decoding it
  }
  if (remaining_[span] <= 1) return Claim::kUnstored;  // no other sample will read it
  if (bytes_ + bytes > max_bytes_) {
    ++stats_.store_full;
    return Claim::kUnstored;
  }
  entries_[span].bytes = bytes;
  bytes_ += bytes;
  stats_.peak_images = std::max(stats_.peak_images, static_cast<int64_t>(entries_.size()));
  stats_.peak_bytes = std::max(stats_.peak_bytes, bytes_);
  return Claim::kDecode;
}

void DecodedImageStore::Publish(int32_t span, const cv::Mat& image) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries_[span].image = image;
  }
  decoded_.notify_all();
}

void DecodedImageStore::Abandon(int32_t span) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = entries_.find(span);
    bytes_ -= it->second.bytes;
    entries_.erase(it);
  }
  decoded_.notify_all();  // a waiting thread decodes it itself, and reports its own error
}

void DecodedImageStore::Release(int32_t span) {
  std::lock_guard<std::mutex> lock(mu_);
  if (--remaining_[span] > 0) return;
  const auto it = entries_.find(span);
  if (it == entries_.end()) return;
  bytes_ -= it->second.bytes;
  entries_.erase(it);
}

DecodeStats DecodedImageStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace ffyolo
