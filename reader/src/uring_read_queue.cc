#include "uring_read_queue.h"

#include <liburing.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace ffr::internal {
namespace {

class UringReadQueue : public ReadQueue {
 public:
  ~UringReadQueue() override {
    if (initialized_) io_uring_queue_exit(&ring_);
  }

  Status Init(const std::vector<int>& fds, unsigned depth) {
    // COOP_TASKRUN (Linux 5.19) posts completions when the reader next enters
    // the kernel instead of interrupting it, e.g. while it checks a CRC.
    int rc = io_uring_queue_init(depth, &ring_, IORING_SETUP_COOP_TASKRUN);
    if (rc == -EINVAL) rc = io_uring_queue_init(depth, &ring_, 0);
    if (rc < 0) return Status::NotSupported(std::string("io_uring unavailable: ") + std::strerror(-rc));
    initialized_ = true;
    depth_ = depth;
    fds_ = fds;
    // Registered files spare the kernel a descriptor lookup per read; without them reads name the descriptors.
    fixed_files_ = !fds.empty() && io_uring_register_files(&ring_, fds.data(), static_cast<unsigned>(fds.size())) == 0;
    return Status::OK();
  }

  unsigned depth() const override { return depth_; }

  void Prepare(size_t file, uint64_t offset, size_t n, void* dst, uint64_t tag) override {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (fixed_files_) {
      io_uring_prep_read(sqe, static_cast<int>(file), dst, static_cast<unsigned>(n), offset);
      sqe->flags |= IOSQE_FIXED_FILE;
    } else {
      io_uring_prep_read(sqe, fds_[file], dst, static_cast<unsigned>(n), offset);
    }
    io_uring_sqe_set_data64(sqe, tag);
  }

  Status SubmitAndReap(unsigned wait, const Completion& complete) override {
    const int rc = io_uring_submit_and_wait(&ring_, wait);
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) return Status::FromErrno("io_uring_submit", -rc);
    io_uring_cqe* cqe;
    unsigned head;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      complete(io_uring_cqe_get_data64(cqe), cqe->res);
    }
    io_uring_cq_advance(&ring_, seen);
    return Status::OK();
  }

 private:
  io_uring ring_{};
  bool initialized_ = false;
  bool fixed_files_ = false;
  unsigned depth_ = 0;
  std::vector<int> fds_;
};

}  // namespace

Status NewUringReadQueue(const std::vector<int>& fds, unsigned depth, std::unique_ptr<ReadQueue>* out) {
  std::unique_ptr<UringReadQueue> queue(new UringReadQueue());
  FFR_RETURN_IF_ERROR(queue->Init(fds, depth));
  *out = std::move(queue);
  return Status::OK();
}

}  // namespace ffr::internal
