#include "ffr/read_buffer.h"

#include <cstdlib>
#include <new>
#include <utility>

namespace ffr {

ReadBuffer::~ReadBuffer() { std::free(data_); }

ReadBuffer::ReadBuffer(ReadBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

ReadBuffer& ReadBuffer::operator=(ReadBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(capacity_, other.capacity_);
  return *this;
}

uint8_t* ReadBuffer::Reserve(size_t size) {
  if (size <= capacity_) return data_;
  // Grow geometrically so that a slowly rising batch size does not reallocate each time.
  size_t capacity = capacity_ == 0 ? kAlignment : capacity_;
  while (capacity < size) capacity *= 2;
  void* p = nullptr;
  if (posix_memalign(&p, kAlignment, capacity) != 0) throw std::bad_alloc();
  std::free(data_);
  data_ = static_cast<uint8_t*>(p);
  capacity_ = capacity;
  return data_;
}

}  // namespace ffr
