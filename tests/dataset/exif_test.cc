// JpegExifOrientation and PngExifOrientation: the orientation of every EXIF block a camera or a photo tool writes, in both
// byte orders and behind other segments, and 1 for every broken or absent one, never reading past the end.
#include "ffyolo/exif.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ffyolo {
namespace {

using Bytes = std::vector<uint8_t>;

void Put16(Bytes* b, uint16_t v, bool little) {
  if (little) {
    b->insert(b->end(), {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8)});
  } else {
    b->insert(b->end(), {static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)});
  }
}

void Put32(Bytes* b, uint32_t v, bool little) {
  Put16(b, static_cast<uint16_t>(little ? v : v >> 16), little);
  Put16(b, static_cast<uint16_t>(little ? v >> 16 : v), little);
}

struct Entry {
  uint16_t tag, type;
  uint32_t count;
  uint16_t value;
};

// A TIFF block: header, then IFD0 at `ifd_offset` with `entries`.
Bytes Tiff(bool little, const std::vector<Entry>& entries, uint32_t ifd_offset = 8) {
  Bytes t = little ? Bytes{'I', 'I'} : Bytes{'M', 'M'};
  Put16(&t, 42, little);
  Put32(&t, ifd_offset, little);
  t.resize(ifd_offset, 0);
  Put16(&t, static_cast<uint16_t>(entries.size()), little);
  for (const Entry& e : entries) {
    Put16(&t, e.tag, little);
    Put16(&t, e.type, little);
    Put32(&t, e.count, little);
    Put16(&t, e.value, little);
    Put16(&t, 0, little);
  }
  Put32(&t, 0, little);  // no next IFD
  return t;
}

Bytes Segment(uint8_t marker, const Bytes& payload) {
  Bytes s{0xFF, marker};
  const size_t length = payload.size() + 2;
  s.push_back(static_cast<uint8_t>(length >> 8));
  s.push_back(static_cast<uint8_t>(length));
  s.insert(s.end(), payload.begin(), payload.end());
  return s;
}

Bytes Exif(const Bytes& tiff) {
  Bytes payload{'E', 'x', 'i', 'f', 0, 0};
  payload.insert(payload.end(), tiff.begin(), tiff.end());
  return Segment(0xE1, payload);
}

// SOI, the segments, then a start of scan and some entropy-coded bytes.
Bytes Jpeg(const std::vector<Bytes>& segments) {
  Bytes j{0xFF, 0xD8};
  for (const Bytes& s : segments) j.insert(j.end(), s.begin(), s.end());
  const Bytes sos = Segment(0xDA, Bytes(10, 0));
  j.insert(j.end(), sos.begin(), sos.end());
  j.insert(j.end(), {0x12, 0x34, 0xFF, 0xD9});
  return j;
}

int Orientation(const Bytes& b, bool* malformed = nullptr) { return JpegExifOrientation(b.data(), b.size(), malformed); }

const Entry kMake{0x010F, 2, 6, 0};  // another tag before the orientation, as cameras write

TEST(ExifTest, EveryOrientationInBothByteOrders) {
  for (bool little : {true, false}) {
    for (uint16_t o = 1; o <= 8; ++o) {
      bool malformed = true;
      EXPECT_EQ(Orientation(Jpeg({Exif(Tiff(little, {kMake, {0x0112, 3, 1, o}}))}), &malformed), o)
          << (little ? "II " : "MM ") << o;
      EXPECT_FALSE(malformed);
    }
  }
}

TEST(ExifTest, FoundBehindJfifXmpAndFillBytes) {
  const Bytes jfif = Segment(0xE0, {'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0});
  const Bytes xmp = Segment(0xE1, {'h', 't', 't', 'p', ':', '/', '/', 'n', 's'});
  Bytes j = Jpeg({jfif, xmp, Exif(Tiff(false, {{0x0112, 3, 1, 6}}))});
  j.insert(j.begin() + 2, {0xFF, 0xFF});  // fill bytes before a marker are allowed
  EXPECT_EQ(Orientation(j), 6);
  EXPECT_TRUE(OrientationSwapsSides(6) && OrientationSwapsSides(8) && !OrientationSwapsSides(3));
}

TEST(ExifTest, NoExifOrNoTagIsOneAndNotMalformed) {
  bool malformed = true;
  EXPECT_EQ(Orientation(Jpeg({}), &malformed), 1);
  EXPECT_FALSE(malformed);
  EXPECT_EQ(Orientation(Jpeg({Exif(Tiff(true, {kMake}))}), &malformed), 1);
  EXPECT_FALSE(malformed);
  EXPECT_EQ(Orientation(Bytes{0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A}), 1);  // not a JPEG
  EXPECT_EQ(Orientation(Bytes{}), 1);
  // An EXIF segment after the image data is not the image's (and not read).
  Bytes late = Jpeg({});
  const Bytes exif = Exif(Tiff(true, {{0x0112, 3, 1, 8}}));
  late.insert(late.end(), exif.begin(), exif.end());
  EXPECT_EQ(Orientation(late), 1);
}

TEST(ExifTest, MalformedBlocksAreOneAndSaySo) {
  const std::vector<std::pair<const char*, Bytes>> cases = {
      {"value 9", Exif(Tiff(true, {{0x0112, 3, 1, 9}}))},
      {"value 0", Exif(Tiff(false, {{0x0112, 3, 1, 0}}))},
      {"a LONG, not a SHORT", Exif(Tiff(true, {{0x0112, 4, 1, 6}}))},
      {"two values", Exif(Tiff(true, {{0x0112, 3, 2, 6}}))},
      {"no byte order", Exif(Bytes{'X', 'X', 42, 0, 8, 0, 0, 0, 0, 0})},
      {"not TIFF's 42", Exif(Bytes{'I', 'I', 43, 0, 8, 0, 0, 0, 0, 0})},
  };
  for (const auto& [what, segment] : cases) {
    bool malformed = false;
    EXPECT_EQ(Orientation(Jpeg({segment}), &malformed), 1) << what;
    EXPECT_TRUE(malformed) << what;
  }
  // IFD0's offset past the block, and an entry count running past it.
  Bytes far = Tiff(true, {{0x0112, 3, 1, 6}});
  far[4] = 0xF0;
  bool malformed = false;
  EXPECT_EQ(Orientation(Jpeg({Exif(far)}), &malformed), 1);
  EXPECT_TRUE(malformed);
  Bytes many = Tiff(true, {{0x0112, 3, 1, 6}});
  many[8] = 0xFF;
  many[9] = 0xFF;  // 65535 entries: the first is the orientation, so it is found before the end is
  EXPECT_EQ(Orientation(Jpeg({Exif(many)})), 6);
  Bytes missing = Tiff(true, {kMake, kMake});
  missing[8] = 0x40;  // 64 entries of which 2 are there
  EXPECT_EQ(Orientation(Jpeg({Exif(missing)}), &malformed), 1);
  EXPECT_TRUE(malformed);
}

// Every prefix of a tagged JPEG: the tag or 1, and no read past the prefix (ASan's job in its build).
TEST(ExifTest, EveryTruncationIsSafe) {
  const Bytes j = Jpeg({Segment(0xE0, Bytes(14, 1)), Exif(Tiff(false, {kMake, {0x0112, 3, 1, 5}}))});
  for (size_t n = 0; n <= j.size(); ++n) {
    const Bytes prefix(j.begin(), j.begin() + static_cast<std::ptrdiff_t>(n));
    const int o = Orientation(prefix);
    EXPECT_TRUE(o == 1 || o == 5) << n;
    if (n == j.size()) {
      EXPECT_EQ(o, 5);
    }
  }
}

// A PNG: signature, IHDR, the chunks, then IDAT and IEND (CRCs are not read for the orientation).
Bytes Png(const std::vector<std::pair<std::string, Bytes>>& chunks) {
  Bytes p{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  auto chunk = [&](const std::string& type, const Bytes& data) {
    Put32(&p, static_cast<uint32_t>(data.size()), /*little=*/false);
    p.insert(p.end(), type.begin(), type.end());
    p.insert(p.end(), data.begin(), data.end());
    Put32(&p, 0, false);
  };
  chunk("IHDR", Bytes(13, 0));
  for (const auto& [type, data] : chunks) chunk(type, data);
  chunk("IDAT", Bytes(4, 0));
  chunk("IEND", {});
  return p;
}

// A PNG's eXIf chunk (OpenCV 4.6's imread turns a PNG by it too): its orientation in both byte orders, 1
// without one or when malformed (saying so), and every prefix safe.
TEST(ExifTest, PngExifChunk) {
  bool malformed = true;
  for (const bool little : {true, false})
    for (uint16_t o = 1; o <= 8; ++o) {
      const Bytes png = Png({{"gAMA", Bytes(4, 0)}, {"eXIf", Tiff(little, {kMake, {0x0112, 3, 1, o}})}});
      EXPECT_EQ(PngExifOrientation(png.data(), png.size(), &malformed), o);
      EXPECT_FALSE(malformed);
      EXPECT_EQ(ImageExifOrientation(png.data(), png.size()), o);
    }
  const Bytes plain = Png({});
  EXPECT_EQ(PngExifOrientation(plain.data(), plain.size()), 1);
  const Bytes tagged = Png({{"eXIf", Tiff(true, {{0x0112, 3, 1, 6}})}});
  EXPECT_EQ(ImageExifOrientation(tagged.data(), tagged.size()), 6);
  const Bytes broken = Png({{"eXIf", Bytes{'I', 'I', 0, 0}}});
  EXPECT_EQ(PngExifOrientation(broken.data(), broken.size(), &malformed), 1);
  EXPECT_TRUE(malformed);
  for (size_t n = 0; n <= tagged.size(); ++n) {
    const int o = PngExifOrientation(tagged.data(), n);
    EXPECT_TRUE(o == 1 || o == 6) << n;
  }
  const Bytes jpeg = Jpeg({Exif(Tiff(true, {{0x0112, 3, 1, 3}}))});
  EXPECT_EQ(ImageExifOrientation(jpeg.data(), jpeg.size()), 3);
  // A TIFF file is a TIFF block: its IFD0's orientation (OpenCV turns a TIFF by it), in both byte orders.
  for (const bool little : {true, false}) {
    const Bytes tiff = Tiff(little, {kMake, {0x0112, 3, 1, 7}});
    EXPECT_EQ(ImageExifOrientation(tiff.data(), tiff.size(), &malformed), 7);
    EXPECT_FALSE(malformed);
  }
  const Bytes untagged = Tiff(true, {kMake});
  EXPECT_EQ(ImageExifOrientation(untagged.data(), untagged.size(), &malformed), 1);
  EXPECT_FALSE(malformed);
  Bytes cut = Tiff(true, {kMake, kMake});
  cut[8] = 0x40;  // 64 entries of which 2 are there
  EXPECT_EQ(ImageExifOrientation(cut.data(), cut.size(), &malformed), 1);
  EXPECT_TRUE(malformed);
  EXPECT_EQ(ImageExifOrientation(plain.data(), 4), 1);
}

}  // namespace
}  // namespace ffyolo
