// A BatchAllocator that keeps a buffer Python let go of for the ring's next hand-over.
//
// ffyolo.Loader hands a held batch's buffer over and gives the ring a new one whenever the loader
// restarts: every `for` loop holds its last batch while the next epoch starts, so without this
// each epoch would allocate, fault in and unmap a whole batch (and, for ffyolo.torch on CUDA,
// pin and unpin it). The spares go back to `source` when the allocator is destroyed, which is
// at the loader's close, or once the loader and every array it handed over are gone.
#ifndef FFYOLO_PYTHON_SPARE_BUFFERS_H_
#define FFYOLO_PYTHON_SPARE_BUFFERS_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "ffyolo/batch.h"

namespace ffyolo::python {

class SpareBuffers : public BatchAllocator {
 public:
  SpareBuffers(std::shared_ptr<BatchAllocator> source, size_t keep) : source_(std::move(source)), keep_(keep) {}
  ~SpareBuffers() override { Drain(); }

  // Frees the spares and keeps none from now on (the loader is closed: nothing will be allocated).
  void Drain() {
    std::vector<std::pair<void*, size_t>> spares;
    {
      std::lock_guard<std::mutex> lock(mu_);
      spares.swap(spares_);
      keep_ = 0;
    }
    for (const auto& [p, bytes] : spares) source_->Free(p, bytes);
  }

  void* Allocate(size_t bytes) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = spares_.begin(); it != spares_.end(); ++it) {
        if (it->second != bytes) continue;
        void* p = it->first;
        spares_.erase(it);
        return p;
      }
    }
    return source_->Allocate(bytes);
  }

  void Free(void* p, size_t bytes) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (spares_.size() < keep_) {
        spares_.emplace_back(p, bytes);
        return;
      }
    }
    source_->Free(p, bytes);
  }

 private:
  const std::shared_ptr<BatchAllocator> source_;
  size_t keep_;
  std::mutex mu_;
  std::vector<std::pair<void*, size_t>> spares_;
};

}  // namespace ffyolo::python

#endif  // FFYOLO_PYTHON_SPARE_BUFFERS_H_
