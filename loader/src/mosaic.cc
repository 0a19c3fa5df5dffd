#include "ffyolo/mosaic.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <opencv2/core/hal/intrin.hpp>
#include <opencv2/imgproc.hpp>
#include <vector>

#include "ffyolo/letterbox.h"
#include "ffyolo/perspective.h"

namespace ffyolo {

std::array<MosaicTile, 4> PlanMosaic(const std::array<cv::Size, 4>& sizes, int s, int xc, int yc) {
  CV_Assert(s > 0 && 0 <= xc && xc <= 2 * s && 0 <= yc && yc <= 2 * s);
  std::array<MosaicTile, 4> plan;
  for (int k = 0; k < 4; ++k) {
    const int w = sizes[k].width, h = sizes[k].height;
    MosaicTile& t = plan[k];
    switch (k) {
      case 0:  // top left: the tile's bottom-right corner at (xc, yc)
        t.x1a = std::max(xc - w, 0), t.y1a = std::max(yc - h, 0), t.x2a = xc, t.y2a = yc;
        t.x1b = w - (t.x2a - t.x1a), t.y1b = h - (t.y2a - t.y1a), t.x2b = w, t.y2b = h;
        break;
      case 1:  // top right: bottom-left corner at (xc, yc)
        t.x1a = xc, t.y1a = std::max(yc - h, 0), t.x2a = std::min(xc + w, 2 * s), t.y2a = yc;
        t.x1b = 0, t.y1b = h - (t.y2a - t.y1a), t.x2b = std::min(w, t.x2a - t.x1a), t.y2b = h;
        break;
      case 2:  // bottom left: top-right corner at (xc, yc)
        t.x1a = std::max(xc - w, 0), t.y1a = yc, t.x2a = xc, t.y2a = std::min(2 * s, yc + h);
        t.x1b = w - (t.x2a - t.x1a), t.y1b = 0, t.x2b = w, t.y2b = std::min(t.y2a - t.y1a, h);
        break;
      default:  // bottom right: top-left corner at (xc, yc)
        t.x1a = xc, t.y1a = yc, t.x2a = std::min(xc + w, 2 * s), t.y2a = std::min(2 * s, yc + h);
        t.x1b = 0, t.y1b = 0, t.x2b = std::min(w, t.x2a - t.x1a), t.y2b = std::min(t.y2a - t.y1a, h);
        break;
    }
  }
  return plan;
}

void WarpMosaicWithCanvas(const std::array<cv::Mat, 4>& tiles, const std::array<MosaicTile, 4>& plan, int s,
                          const cv::Matx33d& m, cv::Mat* canvas, cv::Mat* dst) {
  canvas->create(2 * s, 2 * s, CV_8UC3);
  canvas->setTo(cv::Scalar::all(kPadValue));
  for (int k = 0; k < 4; ++k) {
    if (plan[k].canvas_rect().empty()) continue;
    tiles[k](plan[k].tile_rect()).copyTo((*canvas)(plan[k].canvas_rect()));
  }
  dst->create(s, s, CV_8UC3);
  WarpImage(*canvas, m, dst);
}

namespace {

// OpenCV's fixed point for warps (imgwarp.cpp): source coordinates in 1/32
// pixel (INTER_BITS), warpAffine's per-row accumulators in 1/1024
// (AB_BITS = max(10, INTER_BITS)), bilinear weights summing to 1 << 15
// (INTER_REMAP_COEF_BITS).
constexpr int kInterBits = cv::INTER_BITS;
constexpr int kInterMask = cv::INTER_TAB_SIZE - 1;
constexpr int kAbBits = 10;
constexpr int kAbScale = 1 << kAbBits;
constexpr int kCoefBits = 15;

// Output rows handled per pass: the maps of a pass stay in L1/L2, and each
// tile costs one cv::remap call per pass.
constexpr int kBlockRows = 32;
// A row is sorted by halving spans of pixels until each span's samples touch
// no tile (filled with 114), lie inside one tile (left to cv::remap) or the
// span is this short; then pixel by pixel, computing here only those whose
// samples straddle a tile edge.
constexpr int kLeafSpan = 8;

// M^-1 computed with the same double operations, in the same order, as
// cv::warpAffine / cv::warpPerspective, so the fixed-point coordinates derived
// from it are OpenCV's to the bit.
struct InverseMap {
  bool affine = true;
  double m[9] = {};
};

InverseMap InvertAsOpenCV(const cv::Matx33d& fwd) {
  InverseMap inv;
  inv.affine = IsAffine(fwd);
  double* M = inv.m;
  std::copy(fwd.val, fwd.val + 9, M);
  if (!inv.affine) {
    cv::Mat mat(3, 3, CV_64F, M);
    cv::invert(mat, mat);  // warpPerspective: invert(matM, matM), DECOMP_LU
    return inv;
  }
  double D = M[0] * M[4] - M[1] * M[3];
  D = D != 0 ? 1. / D : 0;
  const double A11 = M[4] * D, A22 = M[0] * D;
  M[0] = A11;
  M[1] *= -D;
  M[3] *= -D;
  M[4] = A22;
  const double b1 = -M[0] * M[2] - M[1] * M[5];
  const double b2 = -M[3] * M[2] - M[4] * M[5];
  M[2] = b1;
  M[5] = b2;
  return inv;
}

// Buffers of one call, kept per thread so the loader's steady state allocates nothing.
struct Scratch {
  std::vector<short> xy, shifted;
  std::vector<uint16_t> alpha;
  std::vector<int> adelta, bdelta;
};

// The source map of one pass, as warpAffine/warpPerspective build it for
// remap: per output pixel the integer canvas pixel (sx, sy) of the top-left
// sample (CV_16SC2) and the 1/32 fractions fy * 32 + fx (CV_16UC1).
class SourceMap {
 public:
  SourceMap(const InverseMap& inv, int width, Scratch* scratch) : inv_(inv), width_(width), scratch_(*scratch) {
    scratch_.xy.resize(static_cast<size_t>(kBlockRows) * width * 2);
    scratch_.alpha.resize(static_cast<size_t>(kBlockRows) * width);
    if (inv.affine) {
      // warpAffine's adelta/bdelta: M0 * x and M3 * x in 1/1024, rounded.
      scratch_.adelta.resize(width);
      scratch_.bdelta.resize(width);
      for (int x = 0; x < width; ++x) {
        scratch_.adelta[x] = cv::saturate_cast<int>(inv.m[0] * x * kAbScale);
        scratch_.bdelta[x] = cv::saturate_cast<int>(inv.m[3] * x * kAbScale);
      }
    }
  }

  // Fills rows [y0, y0 + rows) of the output.
  void Compute(int y0, int rows) {
    for (int r = 0; r < rows; ++r) {
      if (inv_.affine) {
        AffineRow(y0 + r, mutable_xy(r), mutable_alpha(r));
      } else {
        PerspectiveRow(y0 + r, mutable_xy(r), mutable_alpha(r));
      }
    }
  }

  const short* xy(int row) const { return scratch_.xy.data() + static_cast<size_t>(row) * width_ * 2; }
  const uint16_t* alpha(int row) const { return scratch_.alpha.data() + static_cast<size_t>(row) * width_; }
  cv::Mat alpha_mat(int rows) { return cv::Mat(rows, width_, CV_16UC1, scratch_.alpha.data()); }

 private:
  short* mutable_xy(int row) { return scratch_.xy.data() + static_cast<size_t>(row) * width_ * 2; }
  uint16_t* mutable_alpha(int row) { return scratch_.alpha.data() + static_cast<size_t>(row) * width_; }

  // WarpAffineInvoker: X0 = round((M1 y + M2) 1024) + 16 per row, then
  // X = (X0 + adelta[x]) >> 5 in 1/32 pixel; likewise Y.
  void AffineRow(int y, short* xy, uint16_t* alpha) const {
    const int* adelta = scratch_.adelta.data();
    const int* bdelta = scratch_.bdelta.data();
    const int round_delta = kAbScale / cv::INTER_TAB_SIZE / 2;
    const int X0 = cv::saturate_cast<int>((inv_.m[1] * y + inv_.m[2]) * kAbScale) + round_delta;
    const int Y0 = cv::saturate_cast<int>((inv_.m[4] * y + inv_.m[5]) * kAbScale) + round_delta;
    int x = 0;
#if CV_SIMD128
    const cv::v_int32x4 vx0 = cv::v_setall_s32(X0), vy0 = cv::v_setall_s32(Y0);
    const cv::v_int32x4 mask = cv::v_setall_s32(kInterMask);
    for (; x <= width_ - 8; x += 8) {
      const cv::v_int32x4 X_lo = cv::v_shr<kAbBits - kInterBits>(vx0 + cv::v_load(adelta + x));
      const cv::v_int32x4 X_hi = cv::v_shr<kAbBits - kInterBits>(vx0 + cv::v_load(adelta + x + 4));
      const cv::v_int32x4 Y_lo = cv::v_shr<kAbBits - kInterBits>(vy0 + cv::v_load(bdelta + x));
      const cv::v_int32x4 Y_hi = cv::v_shr<kAbBits - kInterBits>(vy0 + cv::v_load(bdelta + x + 4));
      cv::v_store_interleave(xy + 2 * x, cv::v_pack(cv::v_shr<kInterBits>(X_lo), cv::v_shr<kInterBits>(X_hi)),
                             cv::v_pack(cv::v_shr<kInterBits>(Y_lo), cv::v_shr<kInterBits>(Y_hi)));
      const cv::v_int32x4 a_lo = cv::v_shl<kInterBits>(Y_lo & mask) | (X_lo & mask);
      const cv::v_int32x4 a_hi = cv::v_shl<kInterBits>(Y_hi & mask) | (X_hi & mask);
      cv::v_store(reinterpret_cast<short*>(alpha + x), cv::v_pack(a_lo, a_hi));
    }
#endif
    for (; x < width_; ++x) {
      const int X = (X0 + adelta[x]) >> (kAbBits - kInterBits);
      const int Y = (Y0 + bdelta[x]) >> (kAbBits - kInterBits);
      Store(X, Y, xy + 2 * x, alpha + x);
    }
  }

  // WarpPerspectiveInvoker: blocks of bw0 columns, each starting its row at
  // X0 = M0 x + M1 y + M2 (likewise Y0, W0); then per pixel
  // W = 32 / (W0 + M6 x1), X = round((X0 + M0 x1) W), clamped to int.
  void PerspectiveRow(int y, short* xy, uint16_t* alpha) const {
    const double* M = inv_.m;
    const int bh0 = std::min(16, width_);  // BLOCK_SZ / 2 with BLOCK_SZ 32; the output is square
    const int bw0 = std::min(32 * 32 / bh0, width_);
    for (int x = 0; x < width_; x += bw0) {
      const int bw = std::min(bw0, width_ - x);
      const double X0 = M[0] * x + M[1] * y + M[2];
      const double Y0 = M[3] * x + M[4] * y + M[5];
      const double W0 = M[6] * x + M[7] * y + M[8];
      for (int x1 = 0; x1 < bw; ++x1) {
        double W = W0 + M[6] * x1;
        W = W ? cv::INTER_TAB_SIZE / W : 0;
        const double fX = std::max(double{INT_MIN}, std::min(double{INT_MAX}, (X0 + M[0] * x1) * W));
        const double fY = std::max(double{INT_MIN}, std::min(double{INT_MAX}, (Y0 + M[3] * x1) * W));
        Store(cv::saturate_cast<int>(fX), cv::saturate_cast<int>(fY), xy + 2 * (x + x1), alpha + x + x1);
      }
    }
  }

  static void Store(int X, int Y, short* xy, uint16_t* alpha) {
    xy[0] = cv::saturate_cast<short>(X >> kInterBits);
    xy[1] = cv::saturate_cast<short>(Y >> kInterBits);
    *alpha = static_cast<uint16_t>((Y & kInterMask) * cv::INTER_TAB_SIZE + (X & kInterMask));
  }

  const InverseMap& inv_;
  const int width_;
  Scratch& scratch_;
};

// The canvas seen through the tiles: pixel (cx, cy) is tile k's if it lies in
// k's canvas rect, where k is the quadrant of (cx, cy) around (xc, yc), and
// 114 otherwise (outside the canvas included).
class VirtualCanvas {
 public:
  VirtualCanvas(const std::array<cv::Mat, 4>& tiles, const std::array<MosaicTile, 4>& plan)
      : xc_(plan[0].x2a), yc_(plan[0].y2a) {
    std::memset(fill_, kPadValue, sizeof(fill_));
    for (int k = 0; k < 4; ++k) {
      rects_[k] = plan[k].canvas_rect();
      if (!rects_[k].empty()) crops_[k] = tiles[k](plan[k].tile_rect());
    }
  }

  const cv::Rect& rect(int k) const { return rects_[k]; }
  const cv::Mat& crop(int k) const { return crops_[k]; }

  const uint8_t* Pixel(int cx, int cy) const {
    const int k = QuadrantOf(cx, cy);
    const cv::Rect& r = rects_[k];
    const unsigned dx = static_cast<unsigned>(cx - r.x), dy = static_cast<unsigned>(cy - r.y);
    if (dx >= static_cast<unsigned>(r.width) || dy >= static_cast<unsigned>(r.height)) return fill_;
    return crops_[k].ptr<uint8_t>(static_cast<int>(dy)) + 3 * dx;
  }

  // True when the samples (sx, sy) .. (sx + 1, sy + 1) all lie in one tile:
  // exactly the pixels remap with BORDER_TRANSPARENT writes from that tile.
  bool InOneTile(int sx, int sy) const {
    const cv::Rect& r = rects_[QuadrantOf(sx, sy)];
    return sx >= r.x && sx + 1 < r.x + r.width && sy >= r.y && sy + 1 < r.y + r.height;
  }

 private:
  int QuadrantOf(int cx, int cy) const { return (cy >= yc_ ? 2 : 0) + (cx >= xc_ ? 1 : 0); }

  const int xc_, yc_;
  std::array<cv::Rect, 4> rects_;
  std::array<cv::Mat, 4> crops_;
  uint8_t fill_[3];
};

// Bounding box [x0, x1] x [y0, y1] of the top-left samples (sx, sy) of n
// pixels of a map row; their samples lie in [x0, x1 + 1] x [y0, y1 + 1].
struct SampleBounds {
  int x0, x1, y0, y1;
};

// Along a row of an affine map sx and sy are monotone (X0 + round(M0 x 1024)
// and the shifts and saturation after it all preserve order), so the ends of
// a span bound it.
SampleBounds EndBounds(const short* xy, int n) {
  const short* last = xy + 2 * (n - 1);
  return {std::min(xy[0], last[0]), std::max(xy[0], last[0]), std::min(xy[1], last[1]), std::max(xy[1], last[1])};
}

// Any map: a scan (perspective rows need not be monotone to the last bit).
SampleBounds ScanBounds(const short* xy, int n) {
  int i = 0;
  short lx = SHRT_MAX, hx = SHRT_MIN, ly = SHRT_MAX, hy = SHRT_MIN;
#if CV_SIMD128
  if (n >= 8) {
    cv::v_int16x8 vlx = cv::v_setall_s16(SHRT_MAX), vhx = cv::v_setall_s16(SHRT_MIN);
    cv::v_int16x8 vly = vlx, vhy = vhx;
    for (; i <= n - 8; i += 8) {
      cv::v_int16x8 sx, sy;
      cv::v_load_deinterleave(xy + 2 * i, sx, sy);
      vlx = cv::v_min(vlx, sx), vhx = cv::v_max(vhx, sx);
      vly = cv::v_min(vly, sy), vhy = cv::v_max(vhy, sy);
    }
    lx = cv::v_reduce_min(vlx), hx = cv::v_reduce_max(vhx);
    ly = cv::v_reduce_min(vly), hy = cv::v_reduce_max(vhy);
  }
#endif
  for (; i < n; ++i) {
    lx = std::min(lx, xy[2 * i]), hx = std::max(hx, xy[2 * i]);
    ly = std::min(ly, xy[2 * i + 1]), hy = std::max(hy, xy[2 * i + 1]);
  }
  return {lx, hx, ly, hy};
}

// Which tiles a span's samples touch (bit k for tile k), and whether they all
// lie inside a single one.
struct SpanReach {
  unsigned tiles = 0;
  bool inside_one = false;
};

SpanReach ReachOf(const VirtualCanvas& canvas, const SampleBounds& b) {
  SpanReach reach;
  for (int k = 0; k < 4; ++k) {
    const cv::Rect& r = canvas.rect(k);
    if (r.empty() || b.x1 + 1 < r.x || b.x0 >= r.x + r.width || b.y1 + 1 < r.y || b.y0 >= r.y + r.height) continue;
    reach.tiles |= 1u << k;
    reach.inside_one |= b.x0 >= r.x && b.x1 + 1 < r.x + r.width && b.y0 >= r.y && b.y1 + 1 < r.y + r.height;
  }
  return reach;
}

// remap's bilinear step for one pixel whose four samples may come from
// different tiles or the fill: OpenCV's weights (products of the 1/32
// fractions, scaled to sum to 1 << 15) and rounding.
void InterpolatePixel(const VirtualCanvas& canvas, int sx, int sy, int alpha, uint8_t* out) {
  const int fx = alpha & kInterMask, fy = alpha >> kInterBits;
  const int scale = (1 << kCoefBits) / (cv::INTER_TAB_SIZE * cv::INTER_TAB_SIZE);
  const int w00 = (cv::INTER_TAB_SIZE - fx) * (cv::INTER_TAB_SIZE - fy) * scale;
  const int w01 = fx * (cv::INTER_TAB_SIZE - fy) * scale;
  const int w10 = (cv::INTER_TAB_SIZE - fx) * fy * scale;
  const int w11 = fx * fy * scale;
  const uint8_t* p00 = canvas.Pixel(sx, sy);
  const uint8_t* p01 = canvas.Pixel(sx + 1, sy);
  const uint8_t* p10 = canvas.Pixel(sx, sy + 1);
  const uint8_t* p11 = canvas.Pixel(sx + 1, sy + 1);
  for (int c = 0; c < 3; ++c) {
    const int v = p00[c] * w00 + p01[c] * w01 + p10[c] * w10 + p11[c] * w11;
    out[c] = static_cast<uint8_t>((v + (1 << (kCoefBits - 1))) >> kCoefBits);
  }
}

// The part of a pass (rows relative to it) that remap must cover for one tile.
struct PassBox {
  int x0 = INT_MAX, y0 = INT_MAX, x1 = -1, y1 = -1;
  bool empty() const { return x1 < 0; }
  void Add(int x, int y, int n) {
    x0 = std::min(x0, x), x1 = std::max(x1, x + n - 1);
    y0 = std::min(y0, y), y1 = std::max(y1, y);
  }
  cv::Rect rect() const { return {x0, y0, x1 - x0 + 1, y1 - y0 + 1}; }
};

// Sorts the pixels of one output row of a pass (see kLeafSpan): fills,
// computes the pixels on tile edges, and extends each tile's remap box over
// the spans that reach it.
class RowSorter {
 public:
  RowSorter(const VirtualCanvas& canvas, bool monotone, std::array<PassBox, 4>* boxes)
      : canvas_(canvas), monotone_(monotone), boxes_(*boxes) {}

  void Sort(const short* xy, const uint16_t* alpha, int row, int width, uint8_t* out) {
    xy_ = xy, alpha_ = alpha, row_ = row, out_ = out;
    SortSpan(0, width);
  }

 private:
  void SortSpan(int x, int n) {
    const short* xy = xy_ + 2 * x;
    const SpanReach reach = ReachOf(canvas_, monotone_ ? EndBounds(xy, n) : ScanBounds(xy, n));
    if (reach.tiles == 0) {
      std::memset(out_ + 3 * x, kPadValue, 3 * n);
      return;
    }
    if (!reach.inside_one && n > kLeafSpan) {
      SortSpan(x, n / 2);
      SortSpan(x + n / 2, n - n / 2);
      return;
    }
    for (int k = 0; k < 4; ++k) {
      if (reach.tiles & (1u << k)) boxes_[k].Add(x, row_, n);
    }
    if (reach.inside_one) return;
    for (int i = x; i < x + n; ++i) {
      const int sx = xy_[2 * i], sy = xy_[2 * i + 1];
      if (!canvas_.InOneTile(sx, sy)) InterpolatePixel(canvas_, sx, sy, alpha_[i], out_ + 3 * i);
    }
  }

  const VirtualCanvas& canvas_;
  const bool monotone_;
  std::array<PassBox, 4>& boxes_;
  const short* xy_ = nullptr;
  const uint16_t* alpha_ = nullptr;
  int row_ = 0;
  uint8_t* out_ = nullptr;
};

// Remaps one tile over a box of a pass: the canvas map shifted into the tile
// crop's coordinates (saturating, so far-away pixels stay far away), and
// BORDER_TRANSPARENT, which writes exactly the pixels whose samples all lie
// in the crop (InOneTile) and leaves every other pixel alone.
void RemapTile(const VirtualCanvas& canvas, int k, SourceMap* map, int rows, const cv::Rect& box, int y0,
               std::vector<short>* shifted, cv::Mat* dst) {
  const cv::Rect& r = canvas.rect(k);
  shifted->resize(static_cast<size_t>(box.area()) * 2);
  for (int row = 0; row < box.height; ++row) {
    const short* from = map->xy(box.y + row) + 2 * box.x;
    short* to = shifted->data() + static_cast<size_t>(row) * box.width * 2;
    int i = 0;
#if CV_SIMD128
    const cv::v_int16x8 origin =
        cv::v_reinterpret_as_s16(cv::v_setall_u32((static_cast<unsigned>(r.y) << 16) | static_cast<unsigned>(r.x)));
    for (; i <= 2 * box.width - 8; i += 8) cv::v_store(to + i, cv::v_load(from + i) - origin);  // saturating
#endif
    for (; i < 2 * box.width; i += 2) {
      to[i] = cv::saturate_cast<short>(from[i] - r.x);
      to[i + 1] = cv::saturate_cast<short>(from[i + 1] - r.y);
    }
  }
  const cv::Mat local(box.height, box.width, CV_16SC2, shifted->data());
  cv::Mat out = (*dst)(cv::Rect(box.x, y0 + box.y, box.width, box.height));
  cv::remap(canvas.crop(k), out, local, map->alpha_mat(rows)(box), cv::INTER_LINEAR, cv::BORDER_TRANSPARENT);
}

}  // namespace

void WarpMosaic(const std::array<cv::Mat, 4>& tiles, const std::array<MosaicTile, 4>& plan, int s,
                const cv::Matx33d& m, cv::Mat* dst) {
  for (int k = 0; k < 4; ++k) {
    CV_Assert(plan[k].canvas_rect().empty() || tiles[k].type() == CV_8UC3);
  }
  dst->create(s, s, CV_8UC3);

  thread_local Scratch scratch;
  const InverseMap inv = InvertAsOpenCV(m);
  const VirtualCanvas canvas(tiles, plan);
  SourceMap map(inv, s, &scratch);

  for (int y0 = 0; y0 < s; y0 += kBlockRows) {
    const int rows = std::min(kBlockRows, s - y0);
    map.Compute(y0, rows);
    std::array<PassBox, 4> boxes;
    RowSorter sorter(canvas, inv.affine, &boxes);
    for (int r = 0; r < rows; ++r) sorter.Sort(map.xy(r), map.alpha(r), r, s, dst->ptr<uint8_t>(y0 + r));
    for (int k = 0; k < 4; ++k) {
      if (!boxes[k].empty()) RemapTile(canvas, k, &map, rows, boxes[k].rect(), y0, &scratch.shifted, dst);
    }
  }
}

}  // namespace ffyolo
