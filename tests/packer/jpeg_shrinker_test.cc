#include "jpeg_shrinker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../dataset/tiny_images.h"
#include "ffyolo/image_check.h"

namespace ffyolo {
namespace {

using ::testing::HasSubstr;

ImageFacts FactsOf(const std::string& jpeg) {
  ImageInspector inspector;
  ImageFacts facts;
  EXPECT_TRUE(inspector.Inspect(jpeg, "in.jpg", /*full_decode=*/true, &facts).ok());
  return facts;
}

// Grey, colour and CMYK: the longest side comes down to the limit, and the
// re-encoded image keeps its components (CMYK stays four inks).
TEST(JpegShrinkerTest, LargeImagesComeDownToTheLimitKeepingTheirComponents) {
  for (const int components : {1, 3, 4}) {
    SCOPED_TRACE(components);
    const std::string jpeg = testing::MakeJpeg(200, 100, components);
    JpegShrinker shrinker(50, 90);
    std::string smaller;
    int w = 0, h = 0;
    bool shrunk = false;
    const Status s = shrinker.Shrink(jpeg, FactsOf(jpeg), "in.jpg", &smaller, &w, &h, &shrunk);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(shrunk);
    EXPECT_EQ(w, 50);
    EXPECT_EQ(h, 25);
    const ImageFacts out = FactsOf(smaller);
    EXPECT_EQ(out.width, 50u);
    EXPECT_EQ(out.height, 25u);
    EXPECT_EQ(out.components, components);
  }
}

TEST(JpegShrinkerTest, ImagesWithinTheLimitAreLeftAlone) {
  const std::string jpeg = testing::MakeJpeg(64, 48, 3);
  JpegShrinker shrinker(64, 90);
  std::string smaller = "untouched";
  int w = 0, h = 0;
  bool shrunk = true;
  ASSERT_TRUE(shrinker.Shrink(jpeg, FactsOf(jpeg), "in.jpg", &smaller, &w, &h, &shrunk).ok());
  EXPECT_FALSE(shrunk);
  EXPECT_EQ(smaller, "untouched");
}

// A header over PIL's pixel limit (a packed file read without --check) is
// refused before the decode allocates for it.
TEST(JpegShrinkerTest, AHeaderOverThePixelLimitIsRefusedBeforeDecoding) {
  const std::string jpeg = testing::MakeJpeg(64, 48, 3);
  ImageFacts lying = FactsOf(jpeg);
  lying.width = 30000, lying.height = 20000;
  JpegShrinker shrinker(640, 90);
  std::string smaller;
  int w = 0, h = 0;
  bool shrunk = false;
  const Status s = shrinker.Shrink(jpeg, lying, "big.jpg", &smaller, &w, &h, &shrunk);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("big.jpg: JPEG of 30000x20000 pixels"));
  EXPECT_FALSE(shrunk);
}

}  // namespace
}  // namespace ffyolo
