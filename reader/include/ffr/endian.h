// Little-endian fixed-width encoding, independent of the host byte order.
#pragma once

#include <cstdint>
#include <string>

namespace ffr {

inline void EncodeFixed32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void EncodeFixed64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint16_t DecodeFixed16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t DecodeFixed32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
inline uint64_t DecodeFixed64(const uint8_t* p) {
  return uint64_t{DecodeFixed32(p)} | (uint64_t{DecodeFixed32(p + 4)} << 32);
}
inline void PutFixed16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xff));
  out->push_back(static_cast<char>(v >> 8));
}
inline void PutFixed32(std::string* out, uint32_t v) {
  uint8_t b[4];
  EncodeFixed32(b, v);
  out->append(reinterpret_cast<const char*>(b), 4);
}
inline void PutFixed64(std::string* out, uint64_t v) {
  uint8_t b[8];
  EncodeFixed64(b, v);
  out->append(reinterpret_cast<const char*>(b), 8);
}

}  // namespace ffr
