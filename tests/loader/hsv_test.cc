#include "ffyolo/hsv.h"

#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

namespace ffyolo {
namespace {

TEST(BuildHsvLutsTest, HandComputedEntries) {
  const HsvLuts luts = BuildHsvLuts({1.01, 0.5, 1.2});
  // Hue: int((x * 1.01) % 180).
  EXPECT_EQ(luts.h[0], 0);
  EXPECT_EQ(luts.h[90], 90);    // 90.9
  EXPECT_EQ(luts.h[178], 179);  // 179.78
  EXPECT_EQ(luts.h[179], 0);    // 180.79 % 180 = 0.79
  EXPECT_EQ(luts.h[180], 1);    // 181.8 % 180
  EXPECT_EQ(luts.h[255], 77);   // 257.55 % 180
  // Saturation: int(clip(x * 0.5, 0, 255)).
  EXPECT_EQ(luts.s[1], 0);
  EXPECT_EQ(luts.s[3], 1);
  EXPECT_EQ(luts.s[255], 127);
  // Value: int(clip(x * 1.2, 0, 255)).
  EXPECT_EQ(luts.v[1], 1);
  EXPECT_EQ(luts.v[100], 120);
  EXPECT_EQ(luts.v[212], 254);  // 254.4
  EXPECT_EQ(luts.v[213], 255);  // 255.6 clipped
  EXPECT_EQ(luts.v[250], 255);
}

TEST(BuildHsvLutsTest, HueBelowOneTruncates) {
  const HsvLuts luts = BuildHsvLuts({0.99, 1, 1});
  EXPECT_EQ(luts.h[90], 89);    // 89.1
  EXPECT_EQ(luts.h[179], 177);  // 177.21
  EXPECT_EQ(luts.h[255], 72);   // 252.45 % 180
  for (int x = 0; x < 256; ++x) {
    EXPECT_EQ(luts.s[x], x);
    EXPECT_EQ(luts.v[x], x);
  }
}

TEST(BuildHsvLutsTest, NegativeGainsFollowPythonModuloAndClip) {
  // hgain or sgain > 1 can give negative gains: numpy's % is non-negative for a
  // positive divisor, and the clip floors saturation at 0.
  const HsvLuts luts = BuildHsvLuts({-0.5, -1, 2});
  EXPECT_EQ(luts.h[0], 0);
  EXPECT_EQ(luts.h[1], 179);    // -0.5 % 180 = 179.5
  EXPECT_EQ(luts.h[100], 130);  // -50 % 180
  EXPECT_EQ(luts.s[200], 0);
  EXPECT_EQ(luts.v[100], 200);
  EXPECT_EQ(luts.v[200], 255);
}

cv::Mat RandomImage(int w, int h, uint64_t seed) {
  cv::Mat img(h, w, CV_8UC3);
  cv::RNG rng(seed);
  rng.fill(img, cv::RNG::UNIFORM, 0, 256);
  return img;
}

// augment_hsv as YOLOv5 writes it: split, one LUT per channel, merge.
cv::Mat ReferenceHsv(const cv::Mat& bgr, const HsvLuts& luts) {
  cv::Mat hsv;
  cv::cvtColor(bgr, hsv, cv::COLOR_BGR2HSV);
  std::vector<cv::Mat> ch;
  cv::split(hsv, ch);
  const cv::Mat lh(1, 256, CV_8U, const_cast<uint8_t*>(luts.h.data()));
  const cv::Mat ls(1, 256, CV_8U, const_cast<uint8_t*>(luts.s.data()));
  const cv::Mat lv(1, 256, CV_8U, const_cast<uint8_t*>(luts.v.data()));
  cv::Mat h, s, v;
  cv::LUT(ch[0], lh, h);
  cv::LUT(ch[1], ls, s);
  cv::LUT(ch[2], lv, v);
  cv::Mat merged, out;
  cv::merge(std::vector<cv::Mat>{h, s, v}, merged);
  cv::cvtColor(merged, out, cv::COLOR_HSV2BGR);
  return out;
}

TEST(ApplyHsvTest, MatchesTheSplitMergeRecipeOnAView) {
  const cv::Mat image = RandomImage(97, 61, 1);
  for (const HsvGains& gains : {HsvGains{1.01, 0.5, 1.2}, HsvGains{0.987, 1.6, 0.7}}) {
    const HsvLuts luts = BuildHsvLuts(gains);
    cv::Mat buffer(80, 120, CV_8UC3, cv::Scalar::all(7));
    const cv::Rect view(11, 9, 97, 61);
    image.copyTo(buffer(view));
    cv::Mat roi = buffer(view);
    ApplyHsv(luts, &roi);
    ASSERT_EQ(roi.data, buffer.ptr(9, 11));
    EXPECT_EQ(cv::norm(roi, ReferenceHsv(image, luts), cv::NORM_INF), 0);
    cv::Mat outside = buffer.clone();
    outside(view).setTo(cv::Scalar::all(7));
    EXPECT_EQ(cv::countNonZero(outside.reshape(1) != 7), 0);
  }
}

TEST(ApplyHsvTest, SizesChangeBetweenCalls) {
  const HsvLuts luts = BuildHsvLuts({1.01, 0.8, 1.1});
  for (const cv::Size size : {cv::Size(64, 48), cv::Size(200, 150), cv::Size(31, 17)}) {
    cv::Mat img = RandomImage(size.width, size.height, size.area());
    const cv::Mat expected = ReferenceHsv(img, luts);
    ApplyHsv(luts, &img);
    EXPECT_EQ(cv::norm(img, expected, cv::NORM_INF), 0) << size;
  }
}

TEST(ApplyHsvTest, UnitGainsNearlyKeepTheImage) {
  cv::Mat img = RandomImage(128, 96, 2);
  const cv::Mat original = img.clone();
  ApplyHsv(BuildHsvLuts({1, 1, 1}), &img);
  // Only the 8-bit HSV round trip's quantisation remains: hue in 2-degree
  // steps is up to 1 degree off, (max - min) / 60 <= 4.25 levels, plus the
  // roundings (6 is the worst seen over 16M random pixels).
  EXPECT_LE(cv::norm(img, original, cv::NORM_INF), 6);
  // Greys have no hue to quantise: unchanged.
  cv::Mat grey(8, 8, CV_8UC3, cv::Scalar::all(93));
  ApplyHsv(BuildHsvLuts({1, 1, 1}), &grey);
  EXPECT_EQ(cv::norm(grey, cv::Mat(8, 8, CV_8UC3, cv::Scalar::all(93)), cv::NORM_INF), 0);
}

// Every 24-bit colour once, `width` pixels a row (the last row padded with
// black): pixel i is (B, G, R) = (i & 255, i >> 8 & 255, i >> 16).
cv::Mat AllColours(int width) {
  constexpr int kColours = 1 << 24;
  cv::Mat img((kColours + width - 1) / width, width, CV_8UC3, cv::Scalar::all(0));
  uint8_t* p = img.data;
  for (int i = 0; i < kColours; ++i, p += 3) {
    p[0] = static_cast<uint8_t>(i);
    p[1] = static_cast<uint8_t>(i >> 8);
    p[2] = static_cast<uint8_t>(i >> 16);
  }
  return img;
}

// HsvToPlanes on every row, mirrored or not, against OpenCV's steps; says
// which colours differ, the first few in full.
std::string CompareWithOpenCv(const cv::Mat& bgr, const HsvLuts& luts, bool mirror) {
  const cv::Mat expected = ReferenceHsv(bgr, luts);
  const int w = bgr.cols;
  std::vector<uint8_t> planes(3 * static_cast<size_t>(w));
  std::string report;
  int64_t wrong = 0;
  for (int y = 0; y < bgr.rows; ++y) {
    uint8_t* r = planes.data();
    HsvToPlanes(luts, bgr.ptr<uint8_t>(y), w, mirror, r, r + w, r + 2 * w);
    const uint8_t* want = expected.ptr<uint8_t>(y);
    for (int x = 0; x < w; ++x) {
      const int o = mirror ? w - 1 - x : x;
      const uint8_t got[3] = {r[2 * w + o], r[w + o], r[o]};
      if (got[0] == want[3 * x] && got[1] == want[3 * x + 1] && got[2] == want[3 * x + 2]) continue;
      if (++wrong <= 5) {
        const uint8_t* in = bgr.ptr<uint8_t>(y, x);
        report += cv::format("  column %d: BGR (%d, %d, %d) -> (%d, %d, %d), OpenCV (%d, %d, %d)\n", x, in[0], in[1],
                             in[2], got[0], got[1], got[2], want[3 * x], want[3 * x + 1], want[3 * x + 2]);
      }
    }
  }
  return wrong == 0 ? "" : cv::format("%lld pixels differ\n", static_cast<long long>(wrong)) + report;
}

std::vector<HsvGains> GainsToTest() {
  std::vector<HsvGains> gains = {
      {1, 1, 1},                      // hgain = sgain = vgain = 0: identity tables, only the round trip
      {1 - 0.015, 1 - 0.7, 1 - 0.4},  // the ends of the default hyp's ranges
      {1 + 0.015, 1 + 0.7, 1 + 0.4},
      {-0.5, 0, 2.5},  // beyond them: negative hue gain (Python's modulo), all grey, value clipped
      {1.9, 3, 0.01},
  };
  SampleRandom rng({12});
  for (int i = 0; i < 3; ++i) gains.push_back(DrawHsvGains(&rng, 0.015, 0.7, 0.4));
  return gains;
}

TEST(HsvToPlanesTest, EveryColourAsOpenCvInItsVectorLoop) {
  // 4096 wide: a multiple of OpenCV's vector block, so it converts every pixel in its vector loop.
  const cv::Mat colours = AllColours(4096);
  for (const HsvGains& g : GainsToTest()) {
    EXPECT_EQ(CompareWithOpenCv(colours, BuildHsvLuts(g), /*mirror=*/false), "")
        << "gains " << g.h << ", " << g.s << ", " << g.v;
  }
}

TEST(HsvToPlanesTest, EveryColourAsOpenCvInItsScalarTail) {
  // 31 wide: with AVX2, OpenCV converts all of each row in its scalar code
  // (the vector loop takes 32 pixels at a time), which rounds where the loop
  // truncates; without, it takes 16 in the loop and 15 in scalar code. Mirrored
  // to see that the roundings follow the source column. Half the gains: the
  // scalar code is slow.
  const cv::Mat colours = AllColours(31);
  const std::vector<HsvGains> gains = GainsToTest();
  for (const size_t i : {0, 1, 2, 5}) {
    const HsvGains& g = gains[i];
    EXPECT_EQ(CompareWithOpenCv(colours, BuildHsvLuts(g), /*mirror=*/i % 2 == 1), "")
        << "gains " << g.h << ", " << g.s << ", " << g.v;
  }
}

TEST(HsvToPlanesTest, HueEntriesFrom180OnWrapAsInOpenCv) {
  // BuildHsvLuts keeps hues below 180 but for x * h within 1e-14 below 0,
  // where Python's modulo gives 180.0; any table may hold up to 255, and
  // OpenCV then takes the sector modulo 6.
  HsvLuts luts = BuildHsvLuts({1, 1.2, 0.9});
  for (int i = 0; i < 256; ++i) luts.h[i] = static_cast<uint8_t>(255 - i);
  // 97 wide: vector loop and scalar tail.
  EXPECT_EQ(CompareWithOpenCv(RandomImage(97, 300, 3), luts, /*mirror=*/false), "");
}

TEST(DrawHsvGainsTest, Ranges) {
  double lo[3] = {2, 2, 2}, hi[3] = {0, 0, 0};
  for (uint64_t i = 0; i < 2000; ++i) {
    SampleRandom rng({9, i});
    const HsvGains g = DrawHsvGains(&rng, 0.015, 0.7, 0.4);
    const double v[3] = {g.h, g.s, g.v};
    for (int c = 0; c < 3; ++c) {
      lo[c] = std::min(lo[c], v[c]);
      hi[c] = std::max(hi[c], v[c]);
    }
  }
  const double gain[3] = {0.015, 0.7, 0.4};
  for (int c = 0; c < 3; ++c) {
    EXPECT_GE(lo[c], 1 - gain[c]) << c;
    EXPECT_LE(hi[c], 1 + gain[c]) << c;
    // U(-1, 1), not U(0, 1): both sides of 1 are reached.
    EXPECT_LT(lo[c], 1 - 0.95 * gain[c]) << c;
    EXPECT_GT(hi[c], 1 + 0.95 * gain[c]) << c;
  }
}

TEST(DrawHsvGainsTest, ZeroGainsAreOne) {
  SampleRandom rng({1});
  const HsvGains g = DrawHsvGains(&rng, 0, 0, 0);
  EXPECT_EQ(g.h, 1);
  EXPECT_EQ(g.s, 1);
  EXPECT_EQ(g.v, 1);
}

TEST(DrawHsvGainsTest, DrawsInHsvOrder) {
  // The same key drives the three gains in order h, s, v: with equal gains they equal three uniforms in turn.
  SampleRandom a({4, 2}), b({4, 2});
  const HsvGains g = DrawHsvGains(&a, 0.5, 0.5, 0.5);
  EXPECT_DOUBLE_EQ(g.h, b.Uniform(-1, 1) * 0.5 + 1);
  EXPECT_DOUBLE_EQ(g.s, b.Uniform(-1, 1) * 0.5 + 1);
  EXPECT_DOUBLE_EQ(g.v, b.Uniform(-1, 1) * 0.5 + 1);
}

}  // namespace
}  // namespace ffyolo
