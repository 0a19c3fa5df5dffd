// YOLOv5's 4-image mosaic, written straight into the output: no 2s x 2s
// canvas. The canvas method (tiles pasted around the centre (xc, yc) of a
// 2s x 2s canvas filled with 114, then random_perspective's warp to s x s) is
// reproduced by sampling, for every output pixel, the canvas point M^-1 maps
// it to, where a canvas pixel is looked up in the tile of its quadrant (or is
// 114). With OpenCV 4.6 the result equals the canvas method's to the bit. See
// docs/loader.md, "Mosaic without a canvas", for the argument and timings.
#pragma once

#include <array>
#include <opencv2/core.hpp>

namespace ffyolo {

// Where tile k (0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right) lands
// on the canvas: canvas rect [x1a, x2a) x [y1a, y2a) shows the tile's
// [x1b, x2b) x [y1b, y2b); pad = (x1a - x1b, y1a - y1b) moves its labels.
struct MosaicTile {
  int x1a = 0, y1a = 0, x2a = 0, y2a = 0;
  int x1b = 0, y1b = 0, x2b = 0, y2b = 0;
  int padw() const { return x1a - x1b; }
  int padh() const { return y1a - y1b; }
  cv::Rect canvas_rect() const { return {x1a, y1a, x2a - x1a, y2a - y1a}; }
  cv::Rect tile_rect() const { return {x1b, y1b, x2b - x1b, y2b - y1b}; }
};

// load_mosaic's placement for tiles of the given (w, h) sizes around (xc, yc)
// on a 2s x 2s canvas, crops at the canvas edges included. Requires
// 0 <= xc, yc <= 2s (YOLOv5 draws them in [s/2, 3s/2]).
std::array<MosaicTile, 4> PlanMosaic(const std::array<cv::Size, 4>& sizes, int s, int xc, int yc);

// Writes into `dst` (s x s CV_8UC3; may be a view, allocated when empty) what
// warping the mosaic canvas with M (canvas -> output; warpAffine when M is
// affine, else warpPerspective; bilinear, border 114) gives, without building
// the canvas. Tiles are CV_8UC3, each at least as large as its plan's tile_rect,
// or empty for a tile the warp does not sample; only the pixels of a tile's
// TileRegionsSampledByWarp are read.
//
// Inside a tile the bilinear step runs on the fastest kernel the CPU has
// (AVX2 where present); kPortable forces the 128-bit one that any x86-64 or
// ARM CPU runs, so that tests and benchmarks can compare both. They give the
// same bits.
enum class WarpKernel { kBest, kPortable };
void WarpMosaic(const std::array<cv::Mat, 4>& tiles, const std::array<MosaicTile, 4>& plan, int s,
                const cv::Matx33d& m, cv::Mat* dst, WarpKernel kernel = WarpKernel::kBest);

// The part of each tile the warp M (canvas -> s x s output) samples, in tile
// pixels: a sub-rectangle of plan[k].tile_rect(), empty for a tile it never
// reads. A tile's pixels outside its region contribute nothing, so the loader
// decodes only the region (DecodeOptions::region) and no tile at all where it
// is empty: with hyp.scratch-low's scale of 0.5 to 1.5 the output shows on
// average about a third of the canvas, and about one tile in ten not at all.
// Conservative: every whole tile_rect when M is not affine.
std::array<cv::Rect, 4> TileRegionsSampledByWarp(const std::array<MosaicTile, 4>& plan, int s, const cv::Matx33d& m);

// The canvas method itself (YOLOv5's code path): for tests and the baseline
// benchmark. `canvas` is reused when it already is 2s x 2s CV_8UC3.
void WarpMosaicWithCanvas(const std::array<cv::Mat, 4>& tiles, const std::array<MosaicTile, 4>& plan, int s,
                          const cv::Matx33d& m, cv::Mat* canvas, cv::Mat* dst);

}  // namespace ffyolo
