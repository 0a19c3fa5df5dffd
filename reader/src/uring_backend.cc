#include <algorithm>
#include <cerrno>
#include <mutex>
#include <string>

#include "read_backend.h"

namespace ffr::internal {
namespace {

class UringBackend : public ReadBackend {
 public:
  UringBackend(Env* env, const std::vector<std::unique_ptr<RandomAccessFile>>& files, unsigned depth)
      : env_(env), depth_(depth), one_at_a_time_(NewPreadBackend(files)) {
    for (const auto& file : files) files_.push_back(file.get());
  }

  // The first queue, made at open so that an Env without queues is known before the first read.
  Status Init() {
    std::unique_ptr<ReadQueue> queue;
    FFR_RETURN_IF_ERROR(env_->NewReadQueue(files_, depth_, &queue));
    free_.push_back(std::move(queue));
    return Status::OK();
  }

  Status Run(ReadRequest* requests, size_t count, ReadHooks& hooks) const override {
    std::unique_ptr<ReadQueue> queue = Acquire();
    // More concurrent callers than the kernel gives queues: this one reads a read at a time.
    if (queue == nullptr) return one_at_a_time_->Run(requests, count, hooks);
    const Status status = RunOn(queue.get(), requests, count, hooks);
    Release(std::move(queue));
    return status;
  }

 private:
  Status RunOn(ReadQueue* queue, ReadRequest* requests, size_t count, ReadHooks& hooks) const {
    Status status;
    size_t next = 0;       // next request to issue
    size_t in_flight = 0;  // issued, not yet finished
    size_t completed = 0;
    std::vector<size_t> resubmit;  // requests to continue after a short read
    auto issue = [&](size_t k) {
      ReadRequest& r = requests[k];
      const uint64_t len = std::min(r.length - r.done, kMaxReadChunk);
      queue->Prepare(r.shard, r.offset + r.done, len, r.dst + r.done, k);
      ++in_flight;
    };
    // Made once: a std::function of this many captures allocates.
    const ReadQueue::Completion finish = [&](uint64_t k, int64_t result) {
      --in_flight;
      ReadRequest& r = requests[k];
      if (result == -EAGAIN || result == -EINTR) {
        resubmit.push_back(k);
        return;
      }
      if (result < 0) {
        if (status.ok())
          status = hooks.Failed(k, Status::FromErrno("read " + files_[r.shard]->path() + " at offset " +
                                                         std::to_string(r.offset + r.done), static_cast<int>(-result)));
        ++completed;
        return;
      }
      r.done += static_cast<uint64_t>(result);
      if (r.done >= r.required) {
        ++completed;
        if (status.ok()) status = hooks.Land(k);
      } else if (result == 0) {
        if (status.ok()) status = hooks.Failed(k, Status::OK());
        ++completed;
      } else {
        resubmit.push_back(k);  // continue after a short read
      }
    };
    while (completed < count) {
      while (in_flight < queue->depth() && (!resubmit.empty() || next < count)) {
        if (!resubmit.empty()) {
          issue(resubmit.back());
          resubmit.pop_back();
        } else {
          hooks.Start(next);
          issue(next++);
        }
      }
      // Wait for one read while more wait for a place in the queue or while a landed read has
      // work to do (its checksum overlaps the reads still in flight); otherwise for all at once,
      // one system call per batch.
      const bool more_to_issue = next < count || !resubmit.empty();
      const unsigned wait = more_to_issue || hooks.LandDoesWork() ? 1 : static_cast<unsigned>(in_flight);
      const Status reaped = queue->SubmitAndReap(wait, finish);
      if (!reaped.ok()) {
        status = reaped;
        break;
      }
      if (!status.ok()) {
        if (in_flight == 0) break;
        // Drain what is in flight before handing the queue back.
        next = count;
        resubmit.clear();
      }
    }
    // Drain after an error so that the queue is clean for its next user.
    while (in_flight > 0) {
      if (!queue->SubmitAndReap(1, [&](uint64_t, int64_t) { --in_flight; }).ok()) break;
    }
    return status;
  }

  std::unique_ptr<ReadQueue> Acquire() const {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        std::unique_ptr<ReadQueue> queue = std::move(free_.back());
        free_.pop_back();
        return queue;
      }
    }
    std::unique_ptr<ReadQueue> queue;
    if (!env_->NewReadQueue(files_, depth_, &queue).ok()) return nullptr;
    return queue;
  }

  void Release(std::unique_ptr<ReadQueue> queue) const {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(queue));
  }

  Env* env_;
  unsigned depth_;
  std::vector<const RandomAccessFile*> files_;
  std::unique_ptr<ReadBackend> one_at_a_time_;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<ReadQueue>> free_;  // one per concurrent caller in steady state
};

}  // namespace

Status NewUringBackend(Env* env, const std::vector<std::unique_ptr<RandomAccessFile>>& files, unsigned depth,
                       std::unique_ptr<ReadBackend>* out) {
  std::unique_ptr<UringBackend> backend(new UringBackend(env, files, depth));
  FFR_RETURN_IF_ERROR(backend->Init());
  *out = std::move(backend);
  return Status::OK();
}

}  // namespace ffr::internal
