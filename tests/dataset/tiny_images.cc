#include "tiny_images.h"

#include <turbojpeg.h>
#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "ffyolo/exif.h"

namespace ffyolo::testing {

namespace {

void PutBigEndian32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xFF));
}

void PutPngChunk(std::string* png, const char* type, const std::string& data) {
  PutBigEndian32(png, static_cast<uint32_t>(data.size()));
  const std::string body = std::string(type, 4) + data;
  png->append(body);
  PutBigEndian32(png, static_cast<uint32_t>(
                          crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
}

}  // namespace

std::string MakeJpeg(int width, int height, int components) {
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * components);
  uint32_t state = 12345;
  for (unsigned char& p : pixels) {
    state = state * 1664525u + 1013904223u;
    p = static_cast<unsigned char>(state >> 24);
  }
  tjhandle handle = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  const int format = components == 1 ? TJPF_GRAY : components == 4 ? TJPF_CMYK : TJPF_RGB;
  const int rc = tjCompress2(handle, pixels.data(), width, 0, height, format, &jpeg, &size,
                             components == 1 ? TJSAMP_GRAY : TJSAMP_420, 90, 0);
  std::string out = rc == 0 ? std::string(reinterpret_cast<char*>(jpeg), size) : std::string();
  tjFree(jpeg);
  tjDestroy(handle);
  if (out.empty()) throw std::runtime_error("tjCompress2 failed");
  return out;
}

std::string MakePng(int width, int height, unsigned char row_filter) {
  std::string raw;  // the filter byte, then RGB per row
  for (int y = 0; y < height; ++y) {
    raw.push_back(static_cast<char>(row_filter));
    for (int x = 0; x < width * 3; ++x) raw.push_back(static_cast<char>((x + y) & 0xFF));
  }
  std::string compressed(compressBound(static_cast<uLong>(raw.size())), '\0');
  uLongf compressed_size = static_cast<uLongf>(compressed.size());
  compress(reinterpret_cast<Bytef*>(compressed.data()), &compressed_size,
           reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()));
  compressed.resize(compressed_size);

  std::string png("\x89PNG\r\n\x1A\n", 8);
  std::string ihdr;
  PutBigEndian32(&ihdr, static_cast<uint32_t>(width));
  PutBigEndian32(&ihdr, static_cast<uint32_t>(height));
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit, RGB, deflate, no filter, no interlace
  PutPngChunk(&png, "IHDR", ihdr);
  PutPngChunk(&png, "IDAT", compressed);
  PutPngChunk(&png, "IEND", "");
  return png;
}

IdatSpan FindIdat(const std::string& png) {
  const size_t type = png.find("IDAT");
  const auto* p = reinterpret_cast<const unsigned char*>(png.data() + type - 4);
  return {type + 4, (size_t{p[0]} << 24) | (size_t{p[1]} << 16) | (size_t{p[2]} << 8) | p[3]};
}

std::string WithJunkIdat(std::string png) {
  const IdatSpan idat = FindIdat(png);
  for (size_t i = 2; i < idat.length; ++i) png[idat.data + i] = static_cast<char>(0xff);
  const auto crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(png.data() + idat.data - 4), static_cast<uInt>(idat.length + 4)));
  for (int k = 0; k < 4; ++k) png[idat.data + idat.length + k] = static_cast<char>(crc >> (24 - 8 * k));
  return png;
}

std::string WithPngExifOrientation(const std::string& png, uint8_t orientation) {
  // The TIFF block JpegWithExifOrientation writes, after its 4 marker and length bytes and "Exif\0\0".
  const std::string tiff = JpegWithExifOrientation("\xFF\xD8", orientation).substr(2 + 4 + 6);
  std::string chunk = std::string("\0\0\0", 3) + static_cast<char>(tiff.size()) + "eXIf" + tiff;
  const auto crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(chunk.data() + 4), static_cast<uInt>(chunk.size() - 4)));
  for (int k = 0; k < 4; ++k) chunk += static_cast<char>(crc >> (24 - 8 * k));
  constexpr size_t kAfterIhdr = 8 + 4 + 4 + 13 + 4;
  return png.substr(0, kAfterIhdr) + chunk + png.substr(kAfterIhdr);
}

std::string WithXmpFirst(const std::string& jpeg) {
  const std::string xmp = std::string("http://ns.adobe.com/xap/1.0/\0", 29) + "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>";
  const size_t length = xmp.size() + 2;
  return jpeg.substr(0, 2) + "\xFF\xE1" + static_cast<char>(length >> 8) + static_cast<char>(length & 0xFF) + xmp +
         jpeg.substr(2);
}

std::string WithExifOrientation(const std::string& jpeg, uint8_t orientation) {
  return JpegWithExifOrientation(jpeg, orientation);
}

}  // namespace ffyolo::testing
