#include "ffyolo/png_decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <png.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#ifdef FFYOLO_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif

#include "tiny_images.h"

namespace ffyolo {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct PngKind {
  int color_type;
  int bit_depth;
  bool interlaced;
  bool transparency;  // a tRNS chunk (grey, RGB and palette images)
};

std::string Describe(const PngKind& kind) {
  return "colour type " + std::to_string(kind.color_type) + ", " + std::to_string(kind.bit_depth) + " bits" +
         (kind.interlaced ? ", Adam7" : "") + (kind.transparency ? ", tRNS" : "");
}

void AppendToString(png_structp png, png_bytep data, size_t length) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), length);
}

// A PNG of `kind` and random samples, written by libpng.
std::string WritePng(const PngKind& kind, int width, int height, uint32_t seed) {
  std::mt19937 random(seed);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  std::string out;
  png_set_write_fn(png, &out, AppendToString, nullptr);
  png_set_IHDR(png, info, width, height, kind.bit_depth, kind.color_type,
               kind.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  const int max_sample = (1 << kind.bit_depth) - 1;
  if (kind.color_type == PNG_COLOR_TYPE_PALETTE) {
    std::vector<png_color> palette(1 << kind.bit_depth);
    for (png_color& c : palette) c = {static_cast<png_byte>(random()), static_cast<png_byte>(random()),
                                      static_cast<png_byte>(random())};
    png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
    if (kind.transparency) {
      std::vector<png_byte> alpha(palette.size() / 2 + 1);
      for (png_byte& a : alpha) a = static_cast<png_byte>(random());
      png_set_tRNS(png, info, alpha.data(), static_cast<int>(alpha.size()), nullptr);
    }
  } else if (kind.transparency) {
    png_color_16 key{};
    key.gray = key.red = static_cast<png_uint_16>(max_sample / 3);
    key.green = key.blue = static_cast<png_uint_16>(max_sample / 2);
    png_set_tRNS(png, info, nullptr, 0, &key);
  }
  png_write_info(png, info);
  const size_t row_bytes = png_get_rowbytes(png, info);
  std::vector<std::vector<png_byte>> rows(height, std::vector<png_byte>(row_bytes));
  for (auto& row : rows)
    for (png_byte& b : row) b = static_cast<png_byte>(random());
  if (kind.transparency && kind.color_type == PNG_COLOR_TYPE_GRAY && kind.bit_depth == 8)
    rows[0][0] = static_cast<png_byte>(max_sample / 3);  // a pixel that is the transparent key
  std::vector<png_bytep> pointers;
  for (auto& row : rows) pointers.push_back(row.data());
  png_write_image(png, pointers.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

// Every colour type at every bit depth PNG allows, plain and interlaced, and
// with a tRNS chunk where the colour type takes one.
std::vector<PngKind> EveryKind() {
  const std::vector<std::pair<int, std::vector<int>>> depths = {
      {PNG_COLOR_TYPE_GRAY, {1, 2, 4, 8, 16}},   {PNG_COLOR_TYPE_RGB, {8, 16}},
      {PNG_COLOR_TYPE_PALETTE, {1, 2, 4, 8}},    {PNG_COLOR_TYPE_GRAY_ALPHA, {8, 16}},
      {PNG_COLOR_TYPE_RGB_ALPHA, {8, 16}}};
  std::vector<PngKind> kinds;
  for (const auto& [color_type, bit_depths] : depths)
    for (const int bit_depth : bit_depths)
      for (const bool interlaced : {false, true})
        for (const bool transparency : {false, true})
          if (!transparency || (color_type & PNG_COLOR_MASK_ALPHA) == 0)
            kinds.push_back({color_type, bit_depth, interlaced, transparency});
  return kinds;
}

#ifdef FFYOLO_HAVE_IMGCODECS
TEST(PngDecodeTest, PixelsEqualOpenCvsForEveryKindOfPng) {
  const std::vector<PngKind> kinds = EveryKind();
  ASSERT_EQ(kinds.size(), 52u);
  std::vector<uint8_t> pixels;
  uint32_t seed = 0;
  for (const PngKind& kind : kinds) {
    SCOPED_TRACE(Describe(kind));
    const std::string png = WritePng(kind, 37, 23, ++seed);
    int width = 0, height = 0;
    ASSERT_TRUE(DecodePngToBgr(png, "a.png", &pixels, &width, &height).ok());
    ASSERT_EQ(width, 37);
    ASSERT_EQ(height, 23);
    const cv::Mat expected = cv::imdecode(std::vector<uint8_t>(png.begin(), png.end()), cv::IMREAD_COLOR);
    ASSERT_EQ(expected.type(), CV_8UC3);
    ASSERT_EQ(expected.size(), cv::Size(37, 23));
    ASSERT_TRUE(expected.isContinuous());
    EXPECT_EQ(0, std::memcmp(pixels.data(), expected.data, pixels.size()));
    EXPECT_EQ(pixels.size(), expected.total() * 3);
  }
}
#endif

TEST(PngDecodeTest, RgbComesOutAsBgr) {
  std::vector<uint8_t> pixels;
  int width = 0, height = 0;
  ASSERT_TRUE(DecodePngToBgr(testing::MakePng(5, 4), "a.png", &pixels, &width, &height).ok());
  ASSERT_EQ(pixels.size(), 5u * 4 * 3);
  // MakePng's sample (x, y) is (x + y) & 255 over the row's bytes: pixel (0, 3) is R 3, G 4, B 5.
  const size_t row_3 = 3 * 5 * 3;
  EXPECT_EQ(pixels[row_3], 5);
  EXPECT_EQ(pixels[row_3 + 1], 4);
  EXPECT_EQ(pixels[row_3 + 2], 3);
}

// Damage that zlib and every CRC let through: only a decode finds it.
TEST(PngDecodeTest, AnUnknownRowFilterIsCorruptionNamingTheFile) {
  std::vector<uint8_t> pixels;
  int width = 0, height = 0;
  const ffr::Status s = DecodePngToBgr(testing::MakePng(5, 4, 9), "bad.png", &pixels, &width, &height);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("bad.png: PNG image data does not decode (libpng: bad adaptive filter value)"));
}

TEST(PngDecodeTest, ErrorsAreReturnedAndNothingIsPrinted) {
  const std::string png = WritePng({PNG_COLOR_TYPE_RGB, 8, false, false}, 37, 23, 1);
  const std::string junk = testing::WithJunkIdat(png);
  std::string cut = png;
  cut.resize(testing::FindIdat(cut).data + 10);
  std::string crc = png;
  crc[testing::FindIdat(crc).data + 5] ^= 1;
  for (const auto& [name, damaged] : {std::pair{"junk.png", junk}, {"cut.png", cut}, {"crc.png", crc}}) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> pixels;
    int width = 0, height = 0;
    ::testing::internal::CaptureStderr();
    const ffr::Status s = DecodePngToBgr(damaged, name, &pixels, &width, &height);
    EXPECT_THAT(::testing::internal::GetCapturedStderr(), IsEmpty());
    ASSERT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr(std::string(name) + ": PNG image data does not decode (libpng: "));
  }
}

// libpng's warnings do not stop OpenCV's decode, and do not stop this one, nor print.
TEST(PngDecodeTest, WarningsNeitherFailNorPrint) {
  std::string png = testing::MakePng(5, 4);
  // An ancillary chunk with a bad CRC before IEND: libpng warns and skips it.
  const std::string text = std::string("\0\0\0\x05tEXtab\0cd", 13) + std::string(4, '\0');
  png.insert(png.size() - 12, text);
  std::vector<uint8_t> pixels;
  int width = 0, height = 0;
  ::testing::internal::CaptureStderr();
  const ffr::Status s = DecodePngToBgr(png, "a.png", &pixels, &width, &height);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), IsEmpty());
  EXPECT_TRUE(s.ok()) << s.ToString();
#ifdef FFYOLO_HAVE_IMGCODECS
  ::testing::internal::CaptureStderr();  // OpenCV leaves libpng to print "libpng warning: tEXt: CRC error"
  EXPECT_FALSE(cv::imdecode(std::vector<uint8_t>(png.begin(), png.end()), cv::IMREAD_COLOR).empty());
  ::testing::internal::GetCapturedStderr();
#endif
}

}  // namespace
}  // namespace ffyolo
