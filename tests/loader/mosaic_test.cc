// WarpMosaic (no canvas) against the canvas method, PlanMosaic against
// hand-computed placements.
#include "ffyolo/mosaic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

#include "ffyolo/random.h"

namespace ffyolo {
namespace {

std::array<cv::Size, 4> Sizes(cv::Size a, cv::Size b, cv::Size c, cv::Size d) { return {a, b, c, d}; }

void ExpectTile(const MosaicTile& t, std::array<int, 4> a, std::array<int, 4> b) {
  EXPECT_EQ(t.x1a, a[0]);
  EXPECT_EQ(t.y1a, a[1]);
  EXPECT_EQ(t.x2a, a[2]);
  EXPECT_EQ(t.y2a, a[3]);
  EXPECT_EQ(t.x1b, b[0]);
  EXPECT_EQ(t.y1b, b[1]);
  EXPECT_EQ(t.x2b, b[2]);
  EXPECT_EQ(t.y2b, b[3]);
}

TEST(PlanMosaic, TilesFitAroundTheCentre) {
  // s = 640, centre (700, 500); every tile fits on the 1280 x 1280 canvas.
  const auto plan = PlanMosaic(Sizes({640, 480}, {300, 200}, {400, 640}, {500, 350}), 640, 700, 500);
  ExpectTile(plan[0], {60, 20, 700, 500}, {0, 0, 640, 480});
  ExpectTile(plan[1], {700, 300, 1000, 500}, {0, 0, 300, 200});
  ExpectTile(plan[2], {300, 500, 700, 1140}, {0, 0, 400, 640});
  ExpectTile(plan[3], {700, 500, 1200, 850}, {0, 0, 500, 350});
  EXPECT_EQ(plan[0].padw(), 60);
  EXPECT_EQ(plan[0].padh(), 20);
  EXPECT_EQ(plan[3].padw(), 700);
  EXPECT_EQ(plan[3].padh(), 500);
}

TEST(PlanMosaic, CropsAtTheCanvasEdges) {
  // Centre (320, 960): tile 0 is cut on the left, 1 on the right, 2 on the
  // left and bottom, 3 at the bottom; the crop comes off the far side.
  const auto plan = PlanMosaic(Sizes({640, 480}, {1000, 100}, {400, 640}, {300, 500}), 640, 320, 960);
  ExpectTile(plan[0], {0, 480, 320, 960}, {320, 0, 640, 480});
  ExpectTile(plan[1], {320, 860, 1280, 960}, {0, 0, 960, 100});
  ExpectTile(plan[2], {0, 960, 320, 1280}, {80, 0, 400, 320});
  ExpectTile(plan[3], {320, 960, 620, 1280}, {0, 0, 300, 320});
  EXPECT_EQ(plan[0].padw(), -320);
  EXPECT_EQ(plan[2].padw(), -80);
  // Tall tile 0 at the top: cut at y = 0.
  const auto top = PlanMosaic(Sizes({100, 900}, {1, 1}, {1, 1}, {1, 1}), 640, 400, 320);
  ExpectTile(top[0], {300, 0, 400, 320}, {0, 580, 100, 900});
  EXPECT_EQ(top[0].padh(), -580);
}

TEST(PlanMosaic, CanvasAndTileRectsAgree) {
  SampleRandom rng({11});
  for (int trial = 0; trial < 500; ++trial) {
    const int s = 32 + static_cast<int>(rng.Below(700));
    std::array<cv::Size, 4> sizes;
    for (cv::Size& z : sizes) z = {1 + static_cast<int>(rng.Below(2 * s)), 1 + static_cast<int>(rng.Below(2 * s))};
    const int xc = static_cast<int>(rng.Uniform(s / 2.0, 1.5 * s)), yc = static_cast<int>(rng.Uniform(s / 2.0, 1.5 * s));
    const auto plan = PlanMosaic(sizes, s, xc, yc);
    for (int k = 0; k < 4; ++k) {
      const cv::Rect a = plan[k].canvas_rect(), b = plan[k].tile_rect();
      EXPECT_EQ(a.size(), b.size());
      EXPECT_TRUE((cv::Rect(0, 0, 2 * s, 2 * s) & a) == a);
      EXPECT_TRUE((cv::Rect({0, 0}, sizes[k]) & b) == b);
    }
    // The four rects meet at (xc, yc) and do not overlap.
    EXPECT_EQ(plan[0].x2a, xc);
    EXPECT_EQ(plan[1].x1a, xc);
    EXPECT_EQ(plan[2].y1a, yc);
    EXPECT_EQ(plan[3].y1a, yc);
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) EXPECT_TRUE((plan[i].canvas_rect() & plan[j].canvas_rect()).empty());
  }
}

// A random mosaic: noise tiles of random sizes and a random warp.
struct Case {
  int s = 0;
  std::array<std::vector<uint8_t>, 4> buffers;  // behind some of the tiles
  std::array<cv::Mat, 4> tiles;
  std::array<MosaicTile, 4> plan;
  cv::Matx33d m;
  std::string name;
};

// A noise tile (any misplaced pixel shows) in one of the layouts the loader
// meets: its own Mat, a view with a wider row step, or an exactly sized
// external buffer, where a read past the last pixel leaves the allocation
// (ASan builds catch it).
cv::Mat NoiseTile(SampleRandom* rng, cv::Size size, std::vector<uint8_t>* buffer) {
  cv::Mat tile;
  switch (rng->Below(3)) {
    case 0:
      tile.create(size, CV_8UC3);
      break;
    case 1:
      tile = cv::Mat(size.height + 3, size.width + 5, CV_8UC3)(cv::Rect(2, 1, size.width, size.height));
      break;
    default:
      buffer->assign(static_cast<size_t>(size.area()) * 3, 0);
      tile = cv::Mat(size, CV_8UC3, buffer->data());
      break;
  }
  cv::randu(tile, cv::Scalar::all(0), cv::Scalar::all(256));
  return tile;
}

cv::Size RandomTileSize(SampleRandom* rng, int s) {
  switch (rng->Below(4)) {
    case 0:  // tiny: down to 1 x 1
      return {1 + static_cast<int>(rng->Below(4)), 1 + static_cast<int>(rng->Below(4))};
    case 1:  // larger than s
      return {s + static_cast<int>(rng->Below(s)), s + static_cast<int>(rng->Below(s))};
    default:  // load_image's shape: the longest side s
      return rng->Bernoulli(0.5) ? cv::Size(s, 1 + static_cast<int>(rng->Below(s)))
                                 : cv::Size(1 + static_cast<int>(rng->Below(s)), s);
  }
}

// random_perspective's M = T S R P C for a 2s canvas and an s output, with
// ranges far wider than YOLOv5's defaults.
cv::Matx33d RandomWarp(SampleRandom* rng, int s, bool perspective) {
  const double pi = 3.14159265358979323846;
  cv::Matx33d C = cv::Matx33d::eye(), P = C, R = C, S = C, T = C;
  C(0, 2) = -s, C(1, 2) = -s;
  if (perspective) P(2, 0) = rng->Uniform(-1e-3, 1e-3), P(2, 1) = rng->Uniform(-1e-3, 1e-3);
  const double a = rng->Bernoulli(0.3) ? 0 : rng->Uniform(-180, 180) * pi / 180;
  const double scale = rng->Uniform(0.3, 1.8);
  R(0, 0) = scale * std::cos(a), R(0, 1) = scale * std::sin(a);
  R(1, 0) = -scale * std::sin(a), R(1, 1) = scale * std::cos(a);
  if (rng->Bernoulli(0.5)) {
    S(0, 1) = std::tan(rng->Uniform(-20, 20) * pi / 180);
    S(1, 0) = std::tan(rng->Uniform(-20, 20) * pi / 180);
  }
  T(0, 2) = rng->Uniform(0.2, 0.8) * s, T(1, 2) = rng->Uniform(0.2, 0.8) * s;
  return T * S * R * P * C;
}

Case RandomCase(SampleRandom* rng, int s, bool perspective) {
  Case c;
  c.s = s;
  std::array<cv::Size, 4> sizes;
  for (int k = 0; k < 4; ++k) {
    sizes[k] = RandomTileSize(rng, s);
    c.tiles[k] = NoiseTile(rng, sizes[k], &c.buffers[k]);
  }
  const int xc = static_cast<int>(rng->Uniform(s / 2.0, 1.5 * s)), yc = static_cast<int>(rng->Uniform(s / 2.0, 1.5 * s));
  c.plan = PlanMosaic(sizes, s, xc, yc);
  c.m = RandomWarp(rng, s, perspective);
  char name[160];
  std::snprintf(name, sizeof(name), "s=%d centre=(%d,%d) tiles=%dx%d,%dx%d,%dx%d,%dx%d", s, xc, yc, sizes[0].width,
                sizes[0].height, sizes[1].width, sizes[1].height, sizes[2].width, sizes[2].height, sizes[3].width,
                sizes[3].height);
  c.name = name;
  return c;
}

// OpenCV 4.6's warpAffine and warpPerspective (fixed-point maps, then remap),
// which WarpMosaic reproduces to the bit; other versions get the tolerances
// (1 level affine, 2 perspective).
constexpr bool kBitExactOpenCV = CV_VERSION_MAJOR == 4 && CV_VERSION_MINOR == 6;

struct Diff {
  int max = 0;
  int64_t pixels = 0;  // pixels with any channel different
};

Diff Compare(const cv::Mat& a, const cv::Mat& b) {
  cv::Mat d, per_pixel;
  cv::absdiff(a, b, d);
  cv::reduce(d.reshape(1, static_cast<int>(d.total())), per_pixel, 1, cv::REDUCE_MAX);  // max over channels
  double max = 0;
  cv::minMaxLoc(per_pixel, nullptr, &max);
  return {static_cast<int>(max), cv::countNonZero(per_pixel)};
}

// Output pixels whose exact canvas point lies a pixel or more beyond where
// bilinear sampling could reach a tile (x1a - 1 <= x < x2a, likewise y) must
// be pure fill; M^-1 is computed here in plain double, independently of both
// methods.
int64_t CheckFarPixelsAreFill(const Case& c, const cv::Mat& out) {
  const cv::Matx33d inv = c.m.inv();
  int64_t far = 0;
  for (int y = 0; y < c.s; ++y) {
    for (int x = 0; x < c.s; ++x) {
      const cv::Vec3d p = inv * cv::Vec3d(x, y, 1);
      if (p[2] <= 0) continue;
      const double cx = p[0] / p[2], cy = p[1] / p[2];
      bool near = false;
      for (const MosaicTile& t : c.plan) {
        if (t.canvas_rect().empty()) continue;
        near |= cx > t.x1a - 2 && cx < t.x2a + 1 && cy > t.y1a - 2 && cy < t.y2a + 1;
      }
      if (near) continue;
      ++far;
      const cv::Vec3b v = out.at<cv::Vec3b>(y, x);
      if (v != cv::Vec3b(114, 114, 114)) {
        ADD_FAILURE() << c.name << ": far pixel (" << x << ", " << y << ") -> canvas (" << cx << ", " << cy
                      << ") is not 114";
        return far;
      }
    }
  }
  return far;
}

void RunRandomCases(uint64_t seed, bool perspective, int cases, int tolerance) {
  SampleRandom rng({seed});
  const int sizes[] = {64, 160, 320, 640};
  Diff total;
  int64_t far_pixels = 0, pixels = 0;
  int cases_with_diff = 0;
  cv::Mat canvas;
  for (int i = 0; i < cases; ++i) {
    const Case c = RandomCase(&rng, sizes[rng.Below(4)], perspective);
    cv::Mat expected, actual, portable;
    WarpMosaicWithCanvas(c.tiles, c.plan, c.s, c.m, &canvas, &expected);
    WarpMosaic(c.tiles, c.plan, c.s, c.m, &actual);
    WarpMosaic(c.tiles, c.plan, c.s, c.m, &portable, WarpKernel::kPortable);
    const Diff d = Compare(expected, actual);
    EXPECT_LE(d.max, tolerance) << c.name << ", " << d.pixels << " pixels differ";
    EXPECT_EQ(Compare(portable, actual).pixels, 0) << c.name << ": the kernels disagree";
    total.max = std::max(total.max, d.max);
    total.pixels += d.pixels;
    cases_with_diff += d.pixels > 0;
    pixels += static_cast<int64_t>(c.s) * c.s;
    far_pixels += CheckFarPixelsAreFill(c, expected);
    far_pixels += CheckFarPixelsAreFill(c, actual);
  }
  std::printf("%s: %d cases, %lld output pixels: max abs difference %d, %lld pixels differ (in %d cases); "
              "%lld far-from-tiles pixels checked as 114\n",
              perspective ? "perspective" : "affine", cases, static_cast<long long>(pixels), total.max,
              static_cast<long long>(total.pixels), cases_with_diff, static_cast<long long>(far_pixels / 2));
  EXPECT_GT(far_pixels, 0);
}

TEST(WarpMosaic, MatchesTheCanvasMethodForAffineWarps) {
  RunRandomCases(1, /*perspective=*/false, 300, kBitExactOpenCV ? 0 : 1);
}

TEST(WarpMosaic, MatchesTheCanvasMethodForPerspectiveWarps) {
  RunRandomCases(2, /*perspective=*/true, 100, kBitExactOpenCV ? 0 : 2);
}

TEST(WarpMosaic, MatchesTheCanvasMethodForYoloDefaults) {
  // hyp.scratch-low: scale 0.5..1.5, translate 0.1, 640 x 480 / 480 x 640 tiles.
  SampleRandom rng({3});
  const int s = 640;
  cv::Mat canvas, expected, actual;
  for (int i = 0; i < 20; ++i) {
    std::array<cv::Size, 4> sizes;
    std::array<std::vector<uint8_t>, 4> buffers;
    std::array<cv::Mat, 4> tiles;
    for (int k = 0; k < 4; ++k) {
      sizes[k] = rng.Bernoulli(0.5) ? cv::Size(640, 480) : cv::Size(480, 640);
      tiles[k] = NoiseTile(&rng, sizes[k], &buffers[k]);
    }
    const auto plan = PlanMosaic(sizes, s, static_cast<int>(rng.Uniform(320, 960)), static_cast<int>(rng.Uniform(320, 960)));
    const double scale = rng.Uniform(0.5, 1.5);
    cv::Matx33d m(scale, 0, 0, 0, scale, 0, 0, 0, 1);
    m(0, 2) = rng.Uniform(0.4, 0.6) * s - scale * s;
    m(1, 2) = rng.Uniform(0.4, 0.6) * s - scale * s;
    WarpMosaicWithCanvas(tiles, plan, s, m, &canvas, &expected);
    for (const WarpKernel kernel : {WarpKernel::kBest, WarpKernel::kPortable}) {
      WarpMosaic(tiles, plan, s, m, &actual, kernel);
      const Diff d = Compare(expected, actual);
      EXPECT_LE(d.max, kBitExactOpenCV ? 0 : 1)
          << "case " << i << ", kernel " << static_cast<int>(kernel) << ", " << d.pixels << " pixels differ";
    }
  }
}

// Warps without rotation, shear or perspective (YOLOv5's defaults) take a
// separable path on CPUs with AVX2: scales and shifts far beyond the defaults,
// different along x and y, centres on the canvas edges.
TEST(WarpMosaic, MatchesTheCanvasMethodForAxisAlignedWarps) {
  SampleRandom rng({8});
  const int sizes[] = {1, 7, 64, 161, 640};
  cv::Mat canvas, expected, actual, portable;
  for (int i = 0; i < 300; ++i) {
    Case c = RandomCase(&rng, sizes[rng.Below(5)], /*perspective=*/false);
    if (i % 10 == 0) {
      std::array<cv::Size, 4> tile_sizes;
      for (int k = 0; k < 4; ++k) tile_sizes[k] = {c.tiles[k].cols, c.tiles[k].rows};
      c.plan = PlanMosaic(tile_sizes, c.s, i % 20 == 0 ? 0 : 2 * c.s, static_cast<int>(rng.Below(2 * c.s + 1)));
    }
    const double sx = rng.Uniform(0.2, 3), sy = rng.Bernoulli(0.5) ? sx : rng.Uniform(0.2, 3);
    c.m = cv::Matx33d(sx, 0, rng.Uniform(-1.5, 1.5) * c.s, 0, sy, rng.Uniform(-1.5, 1.5) * c.s, 0, 0, 1);
    WarpMosaicWithCanvas(c.tiles, c.plan, c.s, c.m, &canvas, &expected);
    WarpMosaic(c.tiles, c.plan, c.s, c.m, &actual);
    WarpMosaic(c.tiles, c.plan, c.s, c.m, &portable, WarpKernel::kPortable);
    ASSERT_LE(Compare(expected, actual).max, kBitExactOpenCV ? 0 : 1) << c.name << ", case " << i;
    ASSERT_EQ(Compare(portable, actual).pixels, 0) << c.name << ", case " << i << ": the kernels disagree";
  }
}

// What TileRegionsSampledByWarp rules out: the canvas method's output does
// not change when a tile's pixels outside its region do, and WarpMosaic
// given tiles that hold garbage there (as the loader's region decodes leave
// them) or no tile at all where the region is empty still equals the canvas
// method with the true tiles.
TEST(TileRegionsSampledByWarp, PixelsOutsideTheRegionsDoNotShow) {
  SampleRandom rng({17});
  int unsampled = 0;
  double tile_pixels = 0, region_pixels = 0;
  cv::Mat canvas, expected, changed, actual;
  for (int i = 0; i < 400; ++i) {
    Case c = RandomCase(&rng, i % 2 ? 64 : 160, /*perspective=*/false);
    if (i % 4 == 0) {  // hyp.scratch-low's warps, where large scales leave tiles out
      const double scale = rng.Uniform(0.5, 1.5);
      c.m = cv::Matx33d(scale, 0, 0, 0, scale, 0, 0, 0, 1);
      c.m(0, 2) = rng.Uniform(0.4, 0.6) * c.s - scale * c.s;
      c.m(1, 2) = rng.Uniform(0.4, 0.6) * c.s - scale * c.s;
    }
    const std::array<cv::Rect, 4> regions = TileRegionsSampledByWarp(c.plan, c.s, c.m);
    WarpMosaicWithCanvas(c.tiles, c.plan, c.s, c.m, &canvas, &expected);
    std::array<cv::Mat, 4> garbled, dropped;
    for (int k = 0; k < 4; ++k) {
      const cv::Rect tile = c.plan[k].tile_rect();
      ASSERT_EQ(regions[k] & tile, regions[k]) << c.name << ": region outside tile " << k;
      tile_pixels += tile.area();
      region_pixels += regions[k].area();
      garbled[k] = cv::Scalar::all(255) - c.tiles[k];
      if (regions[k].empty()) {
        unsampled += !tile.empty();
        continue;
      }
      c.tiles[k](regions[k]).copyTo(garbled[k](regions[k]));
      dropped[k] = garbled[k];
    }
    WarpMosaicWithCanvas(garbled, c.plan, c.s, c.m, &canvas, &changed);
    EXPECT_EQ(Compare(expected, changed).pixels, 0) << c.name;
    WarpMosaic(dropped, c.plan, c.s, c.m, &actual);
    EXPECT_LE(Compare(expected, actual).max, kBitExactOpenCV ? 0 : 1) << c.name;
  }
  std::printf("400 mosaics: %d tiles left out, regions hold %.0f%% of the tiles' pixels\n", unsampled,
              100 * region_pixels / tile_pixels);
  EXPECT_GT(unsampled, 40);                        // the test must exercise both rules
  EXPECT_LT(region_pixels, 0.8 * tile_pixels);
}

TEST(TileRegionsSampledByWarp, PerspectiveAndCoveringWarpsKeepWholeTiles) {
  const std::array<MosaicTile, 4> plan =
      PlanMosaic(Sizes({640, 480}, {640, 480}, {480, 640}, {640, 640}), 640, 700, 600);
  const auto expect_whole = [&](const std::array<cv::Rect, 4>& regions) {
    for (int k = 0; k < 4; ++k) EXPECT_EQ(regions[k], plan[k].tile_rect()) << k;
  };
  cv::Matx33d perspective = cv::Matx33d::eye();
  perspective(2, 0) = 1e-4;
  perspective(0, 2) = -640, perspective(1, 2) = -640;
  expect_whole(TileRegionsSampledByWarp(plan, 640, perspective));
  // Scale 0.5 around the centre shows the whole canvas.
  expect_whole(TileRegionsSampledByWarp(plan, 640, cv::Matx33d(0.5, 0, 0, 0, 0.5, 0, 0, 0, 1)));
}

TEST(TileRegionsSampledByWarp, ZoomedWarpsNeedPartsOfTiles) {
  const std::array<MosaicTile, 4> plan =
      PlanMosaic(Sizes({640, 480}, {640, 480}, {480, 640}, {640, 640}), 640, 700, 600);
  // Scale 2 around the canvas centre (640, 640) shows canvas [480, 800)^2,
  // around the mosaic centre (700, 600): a corner of each tile, with two
  // pixels of margin and bilinear's right and lower neighbour.
  const cv::Matx33d twice(2, 0, -960, 0, 2, -960, 0, 0, 1);
  const std::array<cv::Rect, 4> regions = TileRegionsSampledByWarp(plan, 640, twice);
  const cv::Rect view(cv::Point(478, 478), cv::Point(803, 803));
  for (int k = 0; k < 4; ++k) {
    const cv::Rect expected = (plan[k].canvas_rect() & view) - cv::Point(plan[k].padw(), plan[k].padh());
    EXPECT_EQ(regions[k], expected) << k;
  }
  // Shifted so that the view [0, 320)^2 lies inside tile 0's rect: tile 0 only.
  const std::array<cv::Rect, 4> corner = TileRegionsSampledByWarp(plan, 640, cv::Matx33d(2, 0, 0, 0, 2, 0, 0, 0, 1));
  EXPECT_FALSE(corner[0].empty());
  EXPECT_TRUE(corner[1].empty() && corner[2].empty() && corner[3].empty());
}

TEST(WarpMosaic, UnitScaleShiftCopiesTheTiles) {
  // M = translate(-s/2, -s/2): the output is the canvas' centre s x s,
  // built here by hand from the tiles.
  SampleRandom rng({4});
  const int s = 320;
  std::array<std::vector<uint8_t>, 4> buffers;
  std::array<cv::Mat, 4> tiles;
  std::array<cv::Size, 4> sizes = Sizes({320, 240}, {200, 320}, {320, 100}, {50, 60});
  for (int k = 0; k < 4; ++k) tiles[k] = NoiseTile(&rng, sizes[k], &buffers[k]);
  const auto plan = PlanMosaic(sizes, s, 300, 350);
  const cv::Matx33d m(1, 0, -s / 2, 0, 1, -s / 2, 0, 0, 1);
  cv::Mat out;
  WarpMosaic(tiles, plan, s, m, &out);
  for (int y = 0; y < s; ++y) {
    for (int x = 0; x < s; ++x) {
      const int cx = x + s / 2, cy = y + s / 2;
      cv::Vec3b want(114, 114, 114);
      for (int k = 0; k < 4; ++k) {
        if (plan[k].canvas_rect().contains({cx, cy}))
          want = tiles[k].at<cv::Vec3b>(cy - plan[k].padh(), cx - plan[k].padw());
      }
      ASSERT_EQ(out.at<cv::Vec3b>(y, x), want) << "at (" << x << ", " << y << ")";
    }
  }
}

TEST(WarpMosaic, WritesOnlyIntoItsView) {
  SampleRandom rng({5});
  const Case c = RandomCase(&rng, 160, /*perspective=*/false);
  cv::Mat big(c.s + 20, c.s + 30, CV_8UC3, cv::Scalar(1, 2, 3));
  cv::Mat view = big(cv::Rect(10, 7, c.s, c.s));
  const uint8_t* data = view.data;
  WarpMosaic(c.tiles, c.plan, c.s, c.m, &view);
  EXPECT_EQ(view.data, data);  // not reallocated
  cv::Mat canvas, expected;
  WarpMosaicWithCanvas(c.tiles, c.plan, c.s, c.m, &canvas, &expected);
  EXPECT_LE(Compare(expected, view).max, kBitExactOpenCV ? 0 : 1);
  for (int y = 0; y < big.rows; ++y)
    for (int x = 0; x < big.cols; ++x)
      if (!cv::Rect(10, 7, c.s, c.s).contains({x, y})) {
        ASSERT_EQ(big.at<cv::Vec3b>(y, x), cv::Vec3b(1, 2, 3));
      }
}

TEST(WarpMosaic, OutputAwayFromAllTilesIsFill) {
  // Tiny tiles and a shift that moves the canvas centre off the output:
  // nothing maps into a tile.
  SampleRandom rng({6});
  const int s = 128;
  std::array<std::vector<uint8_t>, 4> buffers;
  std::array<cv::Mat, 4> tiles;
  std::array<cv::Size, 4> sizes = Sizes({3, 2}, {1, 1}, {2, 5}, {4, 4});
  for (int k = 0; k < 4; ++k) tiles[k] = NoiseTile(&rng, sizes[k], &buffers[k]);
  const auto plan = PlanMosaic(sizes, s, 128, 128);
  // Output (x, y) shows canvas (x + 20, y + 20); the tiles cover canvas x 125..131, y 126..132.
  const cv::Matx33d m(1, 0, -20, 0, 1, -20, 0, 0, 1);
  cv::Mat out;
  WarpMosaic(tiles, plan, s, m, &out);
  const cv::Rect tiles_area(103, 103, 10, 10);  // output pixels whose neighbours may reach a tile
  for (int y = 0; y < s; ++y)
    for (int x = 0; x < s; ++x)
      if (!tiles_area.contains({x, y})) {
        ASSERT_EQ(out.at<cv::Vec3b>(y, x), cv::Vec3b(114, 114, 114)) << x << "," << y;
      }
  cv::Mat canvas, expected;
  WarpMosaicWithCanvas(tiles, plan, s, m, &canvas, &expected);
  EXPECT_EQ(Compare(expected, out).max, 0);
}

}  // namespace
}  // namespace ffyolo
