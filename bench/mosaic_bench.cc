// WarpMosaic (straight into the s x s output; its best bilinear kernel for
// this CPU and the portable one) against the canvas method
// (2s x 2s canvas filled with 114, four tile copies, warpAffine): s = 640,
// four 640 x 480 tiles, hyp.scratch-low's warp (scale 0.5..1.5, translate
// 0.1). Each iteration takes the next of 64 pre-drawn mosaics, the same
// sequence for both methods. OpenCV runs single-threaded unless
// --cv_threads=N is given, as in the loader, whose workers parallelise
// across samples. BM_HsvFlipPlanes times the pass after the warp
// (augment_hsv, fliplr and the CHW planes) on one 640 x 640 image.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <opencv2/core.hpp>
#include <vector>

#include "ffyolo/hsv.h"
#include "ffyolo/mosaic.h"
#include "ffyolo/planes.h"
#include "ffyolo/random.h"

namespace {

constexpr int kS = 640;

struct MosaicCase {
  std::array<cv::Mat, 4> tiles;
  std::array<ffyolo::MosaicTile, 4> plan;
  cv::Matx33d m;
};

const std::vector<MosaicCase>& Cases() {
  static const std::vector<MosaicCase> cases = [] {
    ffyolo::SampleRandom rng({2024});
    std::vector<MosaicCase> out(64);
    for (MosaicCase& c : out) {
      std::array<cv::Size, 4> sizes;
      for (int k = 0; k < 4; ++k) {
        sizes[k] = {640, 480};
        c.tiles[k].create(480, 640, CV_8UC3);
        cv::randu(c.tiles[k], cv::Scalar::all(0), cv::Scalar::all(256));
      }
      c.plan = ffyolo::PlanMosaic(sizes, kS, static_cast<int>(rng.Uniform(320, 960)),
                                  static_cast<int>(rng.Uniform(320, 960)));
      // M = T R C with C = translate(-s, -s), R = scale, T = translate((0.5 +- 0.1) s).
      const double scale = rng.Uniform(0.5, 1.5);
      c.m = cv::Matx33d(scale, 0, rng.Uniform(0.4, 0.6) * kS - scale * kS, 0, scale,
                        rng.Uniform(0.4, 0.6) * kS - scale * kS, 0, 0, 1);
    }
    return out;
  }();
  return cases;
}

void BM_WarpMosaic(benchmark::State& state, ffyolo::WarpKernel kernel) {
  const auto& cases = Cases();
  cv::Mat out(kS, kS, CV_8UC3);
  size_t i = 0;
  for (auto _ : state) {
    const MosaicCase& c = cases[i++ % cases.size()];
    ffyolo::WarpMosaic(c.tiles, c.plan, kS, c.m, &out, kernel);
    benchmark::DoNotOptimize(out.data);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_WarpMosaicWithCanvas(benchmark::State& state) {
  const auto& cases = Cases();
  cv::Mat canvas(2 * kS, 2 * kS, CV_8UC3), out(kS, kS, CV_8UC3);
  size_t i = 0;
  for (auto _ : state) {
    const MosaicCase& c = cases[i++ % cases.size()];
    ffyolo::WarpMosaicWithCanvas(c.tiles, c.plan, kS, c.m, &canvas, &out);
    benchmark::DoNotOptimize(out.data);
  }
  state.SetItemsProcessed(state.iterations());
}

// A sample's end as SampleBuilder runs it: new gains from hyp.scratch-low's
// hsv_h, hsv_s, hsv_v (tables included), fliplr on every other sample.
void BM_HsvFlipPlanes(benchmark::State& state) {
  cv::Mat img(kS, kS, CV_8UC3);
  cv::randu(img, cv::Scalar::all(0), cv::Scalar::all(256));
  std::vector<uint8_t> planes(3 * img.total());
  ffyolo::SampleRandom rng({7});
  bool flip = false;
  for (auto _ : state) {
    const ffyolo::HsvLuts luts = ffyolo::BuildHsvLuts(ffyolo::DrawHsvGains(&rng, 0.015, 0.7, 0.4));
    ffyolo::PlaneAugment augment;
    augment.hsv = &luts;
    augment.flip_left_right = flip = !flip;
    ffyolo::WriteRgbPlanes(img, augment, planes.data());
    benchmark::DoNotOptimize(planes.data());
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(BM_WarpMosaic, best, ffyolo::WarpKernel::kBest)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WarpMosaic, portable, ffyolo::WarpKernel::kPortable)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WarpMosaicWithCanvas)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HsvFlipPlanes)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--cv_threads=", 13) == 0) threads = std::atoi(argv[i] + 13);
  }
  cv::setNumThreads(threads);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
