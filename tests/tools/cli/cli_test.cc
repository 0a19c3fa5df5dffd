// ffyolo_cli: the tools' last-resort exception handling and flag parsing.
#include "ffyolo/cli.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

namespace ffyolo {
namespace {

TEST(RunMainTest, ReturnsWhatMainReturns) {
  EXPECT_EQ(RunMain("yolo-test", [] { return 0; }), 0);
  EXPECT_EQ(RunMain("yolo-test", [] { return 75; }), 75);
}

// std::terminate used to abort the tool (exit status 134) on these.
TEST(RunMainTest, EscapedExceptionIsAnErrorLineAndStatus1) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMain("yolo-test", []() -> int {
              throw std::filesystem::filesystem_error("cannot create directories", "/proc/nope",
                                                      std::make_error_code(std::errc::no_such_file_or_directory));
            }),
            1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.rfind("yolo-test: error: ", 0), 0u) << err;
  EXPECT_NE(err.find("/proc/nope"), std::string::npos) << err;

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunMain("yolo-test", []() -> int { throw 42; }), 1);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "yolo-test: error: unknown exception\n");
}

uint64_t Size(const std::string& text) {
  uint64_t bytes = 0;
  std::string error;
  EXPECT_TRUE(ParseByteSize(text, &bytes, &error)) << text << ": " << error;
  return bytes;
}

std::string Refusal(const std::string& text) {
  uint64_t bytes = 12345;
  std::string error;
  EXPECT_FALSE(ParseByteSize(text, &bytes, &error)) << text << " parsed as " << bytes;
  EXPECT_EQ(bytes, 12345u) << text;  // untouched
  return error;
}

TEST(ParseByteSizeTest, UnitsArePowersOf1024) {
  EXPECT_EQ(Size("4096"), 4096u);
  EXPECT_EQ(Size("64K"), 64u << 10);
  EXPECT_EQ(Size("64k"), 64u << 10);
  EXPECT_EQ(Size("64KiB"), 64u << 10);
  EXPECT_EQ(Size("256M"), 256u << 20);
  EXPECT_EQ(Size("256MiB"), 256u << 20);
  EXPECT_EQ(Size("1G"), uint64_t{1} << 30);
  EXPECT_EQ(Size("1.5G"), uint64_t{3} << 29);
  EXPECT_EQ(Size(".5K"), 512u);
  EXPECT_EQ(Size("18446744073709551615"), UINT64_MAX);
}

// 99999999999999999999 used to go through a double and wrap to 0, which
// packed one image per shard.
TEST(ParseByteSizeTest, OverflowIsRefused) {
  for (const char* text : {"99999999999999999999", "18446744073709551616", "17179869184G", "99999999999999999999K",
                           "18014398509481984K"})
    EXPECT_NE(Refusal(text).find("too large"), std::string::npos) << text;
  EXPECT_EQ(Size("17179869183G"), uint64_t{17179869183} << 30);
}

TEST(ParseByteSizeTest, NonSizesAreRefusedSayingWhy) {
  EXPECT_EQ(Refusal("0"), "'0' is not a positive size");
  EXPECT_EQ(Refusal("0.0001"), "'0.0001' is not a positive size");
  EXPECT_EQ(Refusal("256T"), "'256T' has an unknown unit 'T' (use K, M or G)");
  for (const char* text : {"", "M", ".", "-1", "+1", " 1", "1e9", "0x10", "inf", "nan"})
    EXPECT_FALSE(Refusal(text).empty()) << text;
}

}  // namespace
}  // namespace ffyolo
