// ReadBuffer: a reusable, 4096-byte aligned arena that batched reads fill.
// The caller owns it and reuses it across calls, so steady-state reads
// allocate nothing; samples returned by a read stay valid until the buffer is
// used for the next read or destroyed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ffr {

class ReadBuffer {
 public:
  static constexpr size_t kAlignment = 4096;

  ReadBuffer() = default;
  ~ReadBuffer();
  ReadBuffer(const ReadBuffer&) = delete;
  ReadBuffer& operator=(const ReadBuffer&) = delete;
  ReadBuffer(ReadBuffer&& other) noexcept;
  ReadBuffer& operator=(ReadBuffer&& other) noexcept;

  // Makes room for `size` bytes (contents are not kept when it grows).
  uint8_t* Reserve(size_t size);
  uint8_t* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

// A sample's bytes inside a ReadBuffer (or a mapped shard, with IoBackend::kMmap).
struct Sample {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

}  // namespace ffr
