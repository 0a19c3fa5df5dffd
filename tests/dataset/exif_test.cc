// JpegExifOrientation, PngExifOrientation and ImageExifOrientation: the turn cv::imread gives an image, as OpenCV
// 4.6's EXIF reader and libjpeg, libpng and libtiff under it read the bytes: every orientation a camera or a photo
// tool writes, in both byte orders and behind other segments; the blocks they read otherwise than TIFF's rules
// would (an XMP segment first, a LONG, two values, an eXIf chunk after the image data, ...); and no read past the
// end of any prefix. Where OpenCV's imgcodecs is linked, each of these is checked against cv::imdecode itself.
#include "ffyolo/exif.h"

#include <gtest/gtest.h>
#include <zlib.h>

#ifdef FFYOLO_HAVE_IMGCODECS
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#endif

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
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

// TIFF field types.
constexpr uint16_t kByte = 1, kAscii = 2, kShort = 3, kLong = 4, kRational = 5, kSShort = 8, kSLong = 9;

struct Entry {
  uint16_t tag, type;
  uint32_t count;
  uint32_t value;  // a BYTE's or a SHORT's in the field's first bytes (a second SHORT 0), else a 32-bit value
};

Entry Orientation(uint32_t value, uint16_t type = kShort, uint32_t count = 1) { return {0x0112, type, count, value}; }

void PutIfd(Bytes* t, bool little, const std::vector<Entry>& entries, uint32_t next_ifd) {
  Put16(t, static_cast<uint16_t>(entries.size()), little);
  for (const Entry& e : entries) {
    Put16(t, e.tag, little);
    Put16(t, e.type, little);
    Put32(t, e.count, little);
    if (e.type == kByte) {
      Put32(t, little ? e.value : e.value << 24, little);
    } else if (e.type == kShort || e.type == kSShort) {
      Put16(t, static_cast<uint16_t>(e.value), little);
      Put16(t, 0, little);
    } else {
      Put32(t, e.value, little);
    }
  }
  Put32(t, next_ifd, little);
}

// A TIFF block: header, IFD0 with `entries`, and IFD1 (a thumbnail's) after it with `ifd1` where given.
Bytes Tiff(bool little, const std::vector<Entry>& entries, const std::vector<Entry>& ifd1 = {}) {
  Bytes t = little ? Bytes{'I', 'I'} : Bytes{'M', 'M'};
  Put16(&t, 42, little);
  Put32(&t, 8, little);
  const uint32_t ifd1_offset = ifd1.empty() ? 0 : static_cast<uint32_t>(8 + 2 + 12 * entries.size() + 4);
  PutIfd(&t, little, entries, ifd1_offset);
  if (!ifd1.empty()) PutIfd(&t, little, ifd1, 0);
  return t;
}

Bytes Concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes Segment(uint8_t marker, const Bytes& payload) {
  Bytes s{0xFF, marker};
  Put16(&s, static_cast<uint16_t>(payload.size() + 2), /*little=*/false);
  return Concat(s, payload);
}

Bytes Exif(const Bytes& tiff) { return Segment(0xE1, Concat({'E', 'x', 'i', 'f', 0, 0}, tiff)); }

const Bytes kXmp = Segment(0xE1, Concat(Bytes{'h', 't', 't', 'p', ':', '/', '/', 'n', 's', '.', 'a', 'd', 'o', 'b', 'e'},
                                        Bytes{'.', 'c', 'o', 'm', '/', 'x', 'a', 'p', '/', '1', '.', '0', '/', 0}));
const Bytes kJfif = Segment(0xE0, {'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0});

// SOI, a start of scan and some entropy-coded bytes, then EOI: the image data the tests around it need.
const Bytes kJpegImage = Concat(Concat({0xFF, 0xD8}, Segment(0xDA, Bytes(10, 0))), {0x12, 0x34, 0xFF, 0xD9});

// `image` (a JPEG) with `segments` after its SOI.
Bytes Jpeg(const std::vector<Bytes>& segments, const Bytes& image = kJpegImage) {
  Bytes j(image.begin(), image.begin() + 2);
  for (const Bytes& s : segments) j = Concat(j, s);
  return Concat(j, Bytes(image.begin() + 2, image.end()));
}

Bytes Chunk(const std::string& type, const Bytes& data) {
  Bytes c;
  Put32(&c, static_cast<uint32_t>(data.size()), /*little=*/false);
  c.insert(c.end(), type.begin(), type.end());
  c = Concat(c, data);
  Put32(&c, static_cast<uint32_t>(crc32(0, c.data() + 4, static_cast<uInt>(c.size() - 4))), false);
  return c;
}

// A PNG's signature and IHDR, then IDAT and IEND: the image data the tests around it need.
const Bytes kPngImage = Concat(Concat(Concat({0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}, Chunk("IHDR", Bytes(13, 1))),
                                      Chunk("IDAT", Bytes(4, 0))),
                               Chunk("IEND", {}));

// `image` (a PNG whose IHDR is its first chunk and IEND its last) with the chunks `before` after its IHDR and
// the chunks `after` before its IEND (after the image data).
Bytes Png(const std::vector<Bytes>& before, const std::vector<Bytes>& after = {}, const Bytes& image = kPngImage) {
  constexpr size_t kAfterIhdr = 8 + 12 + 13;
  Bytes p(image.begin(), image.begin() + kAfterIhdr);
  for (const Bytes& c : before) p = Concat(p, c);
  p.insert(p.end(), image.begin() + kAfterIhdr, image.end() - 12);
  for (const Bytes& c : after) p = Concat(p, c);
  return Concat(p, Bytes(image.end() - 12, image.end()));
}

int JpegOrientation(const Bytes& b) { return JpegExifOrientation(b.data(), b.size()); }
int PngOrientation(const Bytes& b) { return PngExifOrientation(b.data(), b.size()); }

const Entry kMake{0x010F, kAscii, 6, 0};  // another tag before the orientation, as cameras write

// A variant of an image's EXIF, the image (a JPEG or a PNG) given, and the turn OpenCV 4.6's source says
// cv::imread gives it (checked against cv::imdecode where it is linked).
struct Variant {
  const char* name;
  std::function<Bytes(const Bytes& image)> make;
  int turn;
};

std::vector<Variant> JpegVariants() {
  const auto tiff_of = [](std::vector<Entry> entries, bool little = true) {
    return [=](const Bytes& image) { return Jpeg({Exif(Tiff(little, entries))}, image); };
  };
  Bytes named_otherwise = Segment(0xE1, Concat({'A', 'B', 'C', 'D', 'E', 'F'}, Tiff(true, {Orientation(6)})));
  Bytes no_byte_order = Exif(Tiff(false, {Orientation(6)}));
  no_byte_order[10] = 'X';  // after FF E1, the length and "Exif\0\0": read big-endian, as "MM"
  Bytes bogus_length{0xFF, 0xE1, 0x00, 0x00};
  return {
      {"SHORT, little-endian", tiff_of({kMake, Orientation(6)}), 6},
      {"SHORT, big-endian", tiff_of({kMake, Orientation(6)}, false), 6},
      {"an XMP segment before the EXIF one: OpenCV reads the first APP1 alone",
       [](const Bytes& image) { return Jpeg({kXmp, Exif(Tiff(true, {Orientation(6)}))}, image); }, 1},
      {"an APP1 of 4 bytes before the EXIF one", [](const Bytes& image) {
         return Jpeg({Segment(0xE1, {'E', 'x', 'i', 'f'}), Exif(Tiff(true, {Orientation(6)}))}, image);
       }, 1},
      {"an APP1 with a bogus length (0): libjpeg keeps no segment", [=](const Bytes& image) {
         return Jpeg({bogus_length, Exif(Tiff(true, {Orientation(6)}))}, image);
       }, 6},
      {"a JFIF segment and fill bytes first", [](const Bytes& image) {
         return Jpeg({kJfif, {0xFF, 0xFF}, Exif(Tiff(false, {Orientation(6)}))}, image);
       }, 6},
      {"stray bytes before the EXIF segment: libjpeg skips them", [](const Bytes& image) {
         return Jpeg({kJfif, {0x00, 0x12, 0xFF, 0x00}, Exif(Tiff(false, {Orientation(6)}))}, image);
       }, 6},
      {"not named Exif", [=](const Bytes& image) { return Jpeg({named_otherwise}, image); }, 6},
      {"no byte order: read big-endian", [=](const Bytes& image) { return Jpeg({no_byte_order}, image); }, 6},
      {"a LONG, little-endian: its first two bytes hold the value", tiff_of({Orientation(6, kLong)}), 6},
      {"a LONG, big-endian: its first two bytes read 0", tiff_of({Orientation(6, kLong)}, false), 1},
      {"a BYTE, little-endian", tiff_of({Orientation(6, kByte)}), 6},
      {"a BYTE, big-endian: read as a SHORT", tiff_of({Orientation(6, kByte)}, false), 1},
      {"two SHORTs, little-endian", tiff_of({Orientation(6, kShort, 2)}), 6},
      {"two SHORTs, big-endian", tiff_of({Orientation(6, kShort, 2)}, false), 6},
      {"value 9", tiff_of({Orientation(9)}), 1},
      {"value 0", tiff_of({Orientation(0)}, false), 1},
      {"two orientations: the first", tiff_of({Orientation(3), Orientation(6)}), 3},
      {"in IFD1 (the thumbnail's) only",
       [](const Bytes& image) { return Jpeg({Exif(Tiff(true, {kMake}, {Orientation(6)}))}, image); }, 1},
      {"a resolution past the block before it stops the reading",
       tiff_of({{0x011A, kRational, 1, 0xFFF0}, Orientation(6)}), 1},
      {"a resolution past the block after it does not", tiff_of({Orientation(6), {0x011A, kRational, 1, 0xFFF0}}), 6},
      {"a string past the block before it", tiff_of({{0x010F, kAscii, 20, 0x7FF0}, Orientation(6)}, false), 1},
      {"a short string (in the entry) and a tag OpenCV skips before it",
       tiff_of({{0x010F, kAscii, 4, 0}, {0x8769, kLong, 1, 0xFFFF}, Orientation(8)}), 8},
      {"not TIFF's 42", [](const Bytes& image) {
         Bytes tiff = Tiff(true, {Orientation(6)});
         tiff[2] = 43;
         return Jpeg({Exif(tiff)}, image);
       }, 1},
  };
}

std::vector<Variant> PngVariants() {
  const auto exif = [](const Bytes& tiff) { return Chunk("eXIf", tiff); };
  return {
      {"before the image data, little-endian",
       [=](const Bytes& image) { return Png({Chunk("gAMA", {0, 0, 0xB1, 0x8F}), exif(Tiff(true, {kMake, Orientation(6)}))}, {}, image); },
       6},
      {"before the image data, big-endian",
       [=](const Bytes& image) { return Png({exif(Tiff(false, {kMake, Orientation(7)}))}, {}, image); }, 7},
      {"after the image data", [=](const Bytes& image) { return Png({}, {exif(Tiff(true, {Orientation(6)}))}, image); },
       6},
      {"before and after the image data: the one before", [=](const Bytes& image) {
         return Png({exif(Tiff(true, {Orientation(3)}))}, {exif(Tiff(true, {Orientation(6)}))}, image);
       }, 3},
      {"two before the image data: the first", [=](const Bytes& image) {
         return Png({exif(Tiff(true, {Orientation(3)})), exif(Tiff(true, {Orientation(6)}))}, {}, image);
       }, 3},
      {"one libpng drops (no byte order) before another", [=](const Bytes& image) {
         Bytes dropped = Tiff(true, {Orientation(3)});
         dropped[1] = 'M';
         return Png({exif(dropped), exif(Bytes{'I'}), exif(Tiff(true, {Orientation(6)}))}, {}, image);
       }, 6},
      {"a LONG, big-endian", [=](const Bytes& image) { return Png({exif(Tiff(false, {Orientation(6, kLong)}))}, {}, image); },
       1},
      {"two SHORTs, big-endian",
       [=](const Bytes& image) { return Png({exif(Tiff(false, {Orientation(5, kShort, 2)}))}, {}, image); }, 5},
  };
}

TEST(ExifTest, EveryOrientationInBothByteOrders) {
  for (bool little : {true, false})
    for (uint16_t o = 1; o <= 8; ++o) {
      EXPECT_EQ(JpegOrientation(Jpeg({kJfif, Exif(Tiff(little, {kMake, Orientation(o)}))})), o)
          << (little ? "II " : "MM ") << o;
      const Bytes png = Png({Chunk("eXIf", Tiff(little, {kMake, Orientation(o)}))});
      EXPECT_EQ(PngOrientation(png), o);
      EXPECT_EQ(ImageExifOrientation(png.data(), png.size()), o);
    }
  EXPECT_TRUE(OrientationSwapsSides(6) && OrientationSwapsSides(8) && !OrientationSwapsSides(3));
}

TEST(ExifTest, EachVariantAsOpenCvReadsIt) {
  for (const Variant& v : JpegVariants()) {
    const Bytes jpeg = v.make(kJpegImage);
    EXPECT_EQ(JpegOrientation(jpeg), v.turn) << v.name;
    EXPECT_EQ(ImageExifOrientation(jpeg.data(), jpeg.size()), v.turn) << v.name;
  }
  for (const Variant& v : PngVariants()) EXPECT_EQ(PngOrientation(v.make(kPngImage)), v.turn) << v.name;
}

TEST(ExifTest, NoExifIsOne) {
  EXPECT_EQ(JpegOrientation(Jpeg({})), 1);
  EXPECT_EQ(JpegOrientation(Jpeg({Exif(Tiff(true, {kMake}))})), 1);
  EXPECT_EQ(JpegOrientation(kPngImage), 1);  // not a JPEG
  EXPECT_EQ(JpegOrientation(Bytes{}), 1);
  EXPECT_EQ(PngOrientation(Png({})), 1);
  // An EXIF segment after the image data is not read (libjpeg stops at the start of scan).
  EXPECT_EQ(JpegOrientation(Concat(Jpeg({}), Exif(Tiff(true, {Orientation(8)})))), 1);
  // An eXIf chunk after IEND is not read either.
  EXPECT_EQ(PngOrientation(Concat(Png({}), Chunk("eXIf", Tiff(true, {Orientation(8)})))), 1);
  // IFD0's offset past the block, and an entry count running past it: the entries there are read.
  Bytes far = Tiff(true, {Orientation(6)});
  far[4] = 0xF0;
  EXPECT_EQ(JpegOrientation(Jpeg({Exif(far)})), 1);
  Bytes many = Tiff(true, {Orientation(6)});
  many[8] = 0xFF;
  many[9] = 0xFF;  // 65535 entries: the first is the orientation, so it is read before the end is
  EXPECT_EQ(JpegOrientation(Jpeg({Exif(many)})), 6);
  Bytes missing = Tiff(true, {kMake, kMake});
  missing[8] = 0x40;  // 64 entries of which 2 are there
  EXPECT_EQ(JpegOrientation(Jpeg({Exif(missing)})), 1);
}

// A TIFF file is read by libtiff, not by OpenCV's EXIF reader: IFD0's first orientation entry, one integer of
// any width read as its type says, 1 to 8. (tests/loader/orientation_test.cc checks these against cv::imdecode.)
TEST(ExifTest, TiffFileAsLibtiffReadsIt) {
  const auto orientation = [](const Bytes& tiff) { return ImageExifOrientation(tiff.data(), tiff.size()); };
  for (const bool little : {true, false}) {
    for (const uint16_t type : {kByte, kShort, kLong, kSShort, kSLong})
      EXPECT_EQ(orientation(Tiff(little, {kMake, Orientation(7, type)})), 7) << type;
    EXPECT_EQ(orientation(Tiff(little, {Orientation(7, kShort, 2)})), 1);
    EXPECT_EQ(orientation(Tiff(little, {Orientation(9)})), 1);
    EXPECT_EQ(orientation(Tiff(little, {Orientation(9), Orientation(6)})), 1);  // the first decides
    EXPECT_EQ(orientation(Tiff(little, {Orientation(3), Orientation(6)})), 3);
    EXPECT_EQ(orientation(Tiff(little, {kMake}, {Orientation(6)})), 1);
  }
  Bytes cut = Tiff(true, {kMake, kMake});
  cut[8] = 0x40;  // 64 entries of which 2 are there
  EXPECT_EQ(orientation(cut), 1);
  EXPECT_EQ(ImageExifOrientation(kPngImage.data(), 4), 1);
}

// Every prefix of every variant: 1 to 8, and no read past the prefix (ASan's job in its build).
TEST(ExifTest, EveryTruncationIsSafe) {
  std::vector<Bytes> images;
  for (const Variant& v : JpegVariants()) images.push_back(v.make(kJpegImage));
  for (const Variant& v : PngVariants()) images.push_back(v.make(kPngImage));
  images.push_back(Tiff(false, {kMake, Orientation(5, kLong)}));
  for (const Bytes& image : images)
    for (size_t n = 0; n <= image.size(); ++n) {
      const Bytes prefix(image.begin(), image.begin() + static_cast<std::ptrdiff_t>(n));
      const int o = ImageExifOrientation(prefix.data(), prefix.size());
      EXPECT_TRUE(o >= 1 && o <= 8) << n;
    }
}

#ifdef FFYOLO_HAVE_IMGCODECS
Bytes Encode(const std::string& ext, const cv::Mat& image) {
  std::vector<uint8_t> out;
  EXPECT_TRUE(cv::imencode(ext, image, out));
  return out;
}

cv::Mat Decode(const Bytes& bytes) { return cv::imdecode(bytes, cv::IMREAD_COLOR); }

bool Same(const cv::Mat& a, const cv::Mat& b) { return a.size() == b.size() && cv::norm(a, b, cv::NORM_INF) == 0; }

// Each variant, on a real image, decodes with cv::imdecode as the same image carrying the plain EXIF block of
// the orientation these functions give (tests/loader/image_decoder_test.cc checks that plain block, each
// orientation, against cv::imdecode): what they decide is the turn OpenCV gives it, and what its source says.
void ExpectEachVariantTurnsAsOpenCvDoes(const Bytes& image, const std::vector<Variant>& variants,
                                        const std::function<Bytes(int)>& plain) {
  std::vector<cv::Mat> turned;
  for (int o = 1; o <= 8; ++o) {
    turned.push_back(Decode(plain(o)));
    for (int other = 1; other < o; ++other)  // the picture tells the eight turns apart
      ASSERT_FALSE(Same(turned.back(), turned[other - 1])) << o << " and " << other;
  }
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name);
    const Bytes bytes = v.make(image);
    const cv::Mat by_opencv = Decode(bytes);
    ASSERT_FALSE(by_opencv.empty());
    const int o = ImageExifOrientation(bytes.data(), bytes.size());
    EXPECT_TRUE(Same(by_opencv, turned[o - 1])) << "turned by " << o;
    EXPECT_EQ(o, v.turn);
  }
}

TEST(ExifTest, EachVariantTurnsAsOpenCvDecodesIt) {
  std::mt19937 rng(4);
  cv::Mat picture(5, 7, CV_8UC3);
  for (auto it = picture.begin<cv::Vec3b>(); it != picture.end<cv::Vec3b>(); ++it)
    *it = cv::Vec3b(static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng()));
  const Bytes jpeg = Encode(".jpg", picture);
  ExpectEachVariantTurnsAsOpenCvDoes(jpeg, JpegVariants(), [&](int o) {
    const std::string tagged = JpegWithExifOrientation(std::string(jpeg.begin(), jpeg.end()), o);
    return Bytes(tagged.begin(), tagged.end());
  });
  const Bytes png = Encode(".png", picture);
  ExpectEachVariantTurnsAsOpenCvDoes(png, PngVariants(),
                                     [&](int o) { return Png({Chunk("eXIf", Tiff(true, {Orientation(o)}))}, {}, png); });
}
#endif

}  // namespace
}  // namespace ffyolo
