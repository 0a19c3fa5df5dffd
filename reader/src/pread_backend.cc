#include <algorithm>

#include "read_backend.h"

namespace ffr::internal {
namespace {

class PreadBackend : public ReadBackend {
 public:
  explicit PreadBackend(const std::vector<std::unique_ptr<RandomAccessFile>>& files) : files_(files) {}

  Status Run(ReadRequest* requests, size_t count, ReadHooks& hooks) const override {
    for (size_t k = 0; k < count; ++k) {
      ReadRequest& r = requests[k];
      hooks.Start(k);
      while (r.done < r.required) {
        const uint64_t len = std::min(r.length - r.done, kMaxReadChunk);
        size_t got = 0;
        const Status read = files_[r.shard]->Read(r.offset + r.done, len, r.dst + r.done, &got);
        if (!read.ok()) return hooks.Failed(k, read);
        r.done += got;
        if (got < len) break;
      }
      if (r.done < r.required) return hooks.Failed(k, Status::OK());
      FFR_RETURN_IF_ERROR(hooks.Land(k));
    }
    return Status::OK();
  }

 private:
  const std::vector<std::unique_ptr<RandomAccessFile>>& files_;
};

}  // namespace

std::unique_ptr<ReadBackend> NewPreadBackend(const std::vector<std::unique_ptr<RandomAccessFile>>& files) {
  return std::make_unique<PreadBackend>(files);
}

}  // namespace ffr::internal
