#include "ffyolo/mosaic.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <opencv2/core/hal/intrin.hpp>
#include <opencv2/imgproc.hpp>  // INTER_BITS, INTER_TAB_SIZE
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
constexpr int kInterTab = cv::INTER_TAB_SIZE;
constexpr int kInterMask = kInterTab - 1;
constexpr int kAbBits = 10;
constexpr int kAbScale = 1 << kAbBits;
constexpr int kCoefBits = 15;

// A row is sorted by halving spans of pixels until each span's samples touch
// no tile (filled with 114) or lie inside one tile (the fast kernel), or the
// span is this short; such a span is then computed pixel by pixel.
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

// remap's bilinear weights for the fractions alpha = fy * 32 + fx, as short
// pairs (w00 | w01 << 16, w10 | w11 << 16): products of (32 - f, f) scaled to
// sum to 1 << 15, except at (0, 0), where 32768 does not fit a short and
// OpenCV's table (initInterTab2D) holds {32767, 0, 0, 1}.
struct BilinearTable {
  uint32_t top[kInterTab * kInterTab], bottom[kInterTab * kInterTab];

  BilinearTable() {
    const int scale = (1 << kCoefBits) / (kInterTab * kInterTab);
    for (int a = 0; a < kInterTab * kInterTab; ++a) {
      const int fx = a & kInterMask, fy = a >> kInterBits;
      int w00 = (kInterTab - fx) * (kInterTab - fy) * scale, w01 = fx * (kInterTab - fy) * scale;
      int w10 = (kInterTab - fx) * fy * scale, w11 = fx * fy * scale;
      if (a == 0) w00 = SHRT_MAX, w11 = 1;
      top[a] = static_cast<uint16_t>(w00) | static_cast<uint32_t>(w01) << 16;
      bottom[a] = static_cast<uint16_t>(w10) | static_cast<uint32_t>(w11) << 16;
    }
  }
};

const BilinearTable& Bilinear() {
  static const BilinearTable table;
  return table;
}

// Buffers of one call, kept per thread so the loader's steady state allocates nothing.
struct Scratch {
  std::vector<short> xy;
  std::vector<uint16_t> alpha;
  std::vector<int> adelta, bdelta;
};

// The source map of one output row, as warpAffine/warpPerspective build it
// for remap: per pixel the integer canvas pixel (sx, sy) of the top-left
// sample and the 1/32 fractions alpha = fy * 32 + fx.
class SourceMap {
 public:
  SourceMap(const InverseMap& inv, int width, Scratch* scratch) : inv_(inv), width_(width), scratch_(*scratch) {
    scratch_.xy.resize(static_cast<size_t>(width) * 2);
    scratch_.alpha.resize(width);
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

  void Compute(int y) {
    if (inv_.affine) {
      AffineRow(y);
    } else {
      PerspectiveRow(y);
    }
  }

  const short* xy() const { return scratch_.xy.data(); }
  const uint16_t* alpha() const { return scratch_.alpha.data(); }

 private:
  // WarpAffineInvoker: X0 = round((M1 y + M2) 1024) + 16 per row, then
  // X = (X0 + adelta[x]) >> 5 in 1/32 pixel; likewise Y.
  void AffineRow(int y) {
    const int* adelta = scratch_.adelta.data();
    const int* bdelta = scratch_.bdelta.data();
    short* xy = scratch_.xy.data();
    uint16_t* alpha = scratch_.alpha.data();
    const int round_delta = kAbScale / kInterTab / 2;
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
  void PerspectiveRow(int y) {
    const double* M = inv_.m;
    short* xy = scratch_.xy.data();
    uint16_t* alpha = scratch_.alpha.data();
    const int bh0 = std::min(16, width_);  // BLOCK_SZ / 2 with BLOCK_SZ 32; the output is square
    const int bw0 = std::min(32 * 32 / bh0, width_);
    for (int x = 0; x < width_; x += bw0) {
      const int bw = std::min(bw0, width_ - x);
      const double X0 = M[0] * x + M[1] * y + M[2];
      const double Y0 = M[3] * x + M[4] * y + M[5];
      const double W0 = M[6] * x + M[7] * y + M[8];
      for (int x1 = 0; x1 < bw; ++x1) {
        double W = W0 + M[6] * x1;
        W = W ? kInterTab / W : 0;
        const double fX = std::max(double{INT_MIN}, std::min(double{INT_MAX}, (X0 + M[0] * x1) * W));
        const double fY = std::max(double{INT_MIN}, std::min(double{INT_MAX}, (Y0 + M[3] * x1) * W));
        Store(cv::saturate_cast<int>(fX), cv::saturate_cast<int>(fY), xy + 2 * (x + x1), alpha + x + x1);
      }
    }
  }

  static void Store(int X, int Y, short* xy, uint16_t* alpha) {
    xy[0] = cv::saturate_cast<short>(X >> kInterBits);
    xy[1] = cv::saturate_cast<short>(Y >> kInterBits);
    *alpha = static_cast<uint16_t>((Y & kInterMask) * kInterTab + (X & kInterMask));
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
      if (tiles[k].empty()) continue;  // not sampled by the warp (TileRegionsSampledByWarp): never looked up
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

 private:
  int QuadrantOf(int cx, int cy) const { return (cy >= yc_ ? 2 : 0) + (cx >= xc_ ? 1 : 0); }

  const int xc_, yc_;
  std::array<cv::Rect, 4> rects_;
  std::array<cv::Mat, 4> crops_;
  uint8_t fill_[3];
};

// remap's bilinear step for one pixel from its four samples: OpenCV's
// weights, sum and rounding.
void Blend(const uint8_t* p00, const uint8_t* p01, const uint8_t* p10, const uint8_t* p11, int alpha, uint8_t* out) {
  const uint32_t top = Bilinear().top[alpha], bottom = Bilinear().bottom[alpha];
  const int w00 = static_cast<int16_t>(top & 0xffff), w01 = static_cast<int16_t>(top >> 16);
  const int w10 = static_cast<int16_t>(bottom & 0xffff), w11 = static_cast<int16_t>(bottom >> 16);
  for (int c = 0; c < 3; ++c) {
    const int v = p00[c] * w00 + p01[c] * w01 + p10[c] * w10 + p11[c] * w11;
    out[c] = static_cast<uint8_t>((v + (1 << (kCoefBits - 1))) >> kCoefBits);
  }
}

// One pixel whose samples may come from different tiles or the fill.
void InterpolatePixel(const VirtualCanvas& canvas, int sx, int sy, int alpha, uint8_t* out) {
  Blend(canvas.Pixel(sx, sy), canvas.Pixel(sx + 1, sy), canvas.Pixel(sx, sy + 1), canvas.Pixel(sx + 1, sy + 1), alpha,
        out);
}

// The same step for n pixels whose samples all lie in one tile crop (canvas
// origin (ox, oy)), two 8-byte loads per pixel. A pixel's 4-byte store runs
// one byte into the next pixel, which is written after it; the last pixel,
// and any whose loads would pass the end of the crop's buffer, take the
// scalar path.
void InterpolateInside(const cv::Mat& crop, int ox, int oy, const short* xy, const uint16_t* alpha, int n,
                       uint8_t* out) {
  const size_t step = crop.step;
  int i = 0;
#if CV_SIMD128
  const BilinearTable& table = Bilinear();
  const uint8_t* load_limit = crop.datalimit - 8;
  const cv::v_int32x4 delta = cv::v_setall_s32(1 << (kCoefBits - 1));
  for (; i < n - 1; ++i) {
    const uint8_t* p0 = crop.data + (xy[2 * i + 1] - oy) * step + (xy[2 * i] - ox) * 3;
    const uint8_t* p1 = p0 + step;
    if (p1 > load_limit) break;
    // (b0 g0 r0 b1 g1 r1 . .) -> (b0 b1 g0 g1 r0 r1 . .) per row, then one dot product per row.
    const cv::v_int16x8 row0 = cv::v_reinterpret_as_s16(cv::v_load_expand(p0));
    const cv::v_int16x8 row1 = cv::v_reinterpret_as_s16(cv::v_load_expand(p1));
    cv::v_int16x8 pairs0, pairs1, unused;
    cv::v_zip(row0, cv::v_rotate_right<3>(row0), pairs0, unused);
    cv::v_zip(row1, cv::v_rotate_right<3>(row1), pairs1, unused);
    const cv::v_int16x8 w0 = cv::v_reinterpret_as_s16(cv::v_setall_u32(table.top[alpha[i]]));
    const cv::v_int16x8 w1 = cv::v_reinterpret_as_s16(cv::v_setall_u32(table.bottom[alpha[i]]));
    const cv::v_int32x4 sum = cv::v_shr<kCoefBits>(cv::v_dotprod(pairs0, w0, cv::v_dotprod(pairs1, w1, delta)));
    const cv::v_int16x8 packed = cv::v_pack(sum, sum);
    const uint32_t bgr = cv::v_reinterpret_as_u32(cv::v_pack_u(packed, packed)).get0();
    std::memcpy(out + 3 * i, &bgr, 4);
  }
#endif
  for (; i < n; ++i) {
    const uint8_t* p0 = crop.ptr<uint8_t>(xy[2 * i + 1] - oy) + 3 * (xy[2 * i] - ox);
    Blend(p0, p0 + 3, p0 + step, p0 + step + 3, alpha[i], out + 3 * i);
  }
}

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

// What a span's samples touch: no tile, all one tile, or something else.
constexpr int kReachesNone = -1, kReachesSeveral = -2;

int ReachOf(const VirtualCanvas& canvas, const SampleBounds& b) {
  for (int k = 0; k < 4; ++k) {
    const cv::Rect& r = canvas.rect(k);
    if (r.empty() || b.x1 + 1 < r.x || b.x0 >= r.x + r.width || b.y1 + 1 < r.y || b.y0 >= r.y + r.height) continue;
    const bool inside = b.x0 >= r.x && b.x1 + 1 < r.x + r.width && b.y0 >= r.y && b.y1 + 1 < r.y + r.height;
    return inside ? k : kReachesSeveral;  // tiles do not overlap: a span inside one touches no other
  }
  return kReachesNone;
}

// Writes one output row: halves spans of it (see kLeafSpan) and hands each to
// the fill, the one-tile kernel or the per-pixel path.
class RowWriter {
 public:
  RowWriter(const VirtualCanvas& canvas, bool monotone) : canvas_(canvas), monotone_(monotone) {}

  void Write(const short* xy, const uint16_t* alpha, int width, uint8_t* out) {
    xy_ = xy, alpha_ = alpha, out_ = out;
    WriteSpan(0, width);
  }

 private:
  void WriteSpan(int x, int n) {
    const short* xy = xy_ + 2 * x;
    const int reach = ReachOf(canvas_, monotone_ ? EndBounds(xy, n) : ScanBounds(xy, n));
    if (reach == kReachesNone) {
      std::memset(out_ + 3 * x, kPadValue, 3 * n);
    } else if (reach >= 0) {
      const cv::Rect& r = canvas_.rect(reach);
      InterpolateInside(canvas_.crop(reach), r.x, r.y, xy, alpha_ + x, n, out_ + 3 * x);
    } else if (n > kLeafSpan) {
      WriteSpan(x, n / 2);
      WriteSpan(x + n / 2, n - n / 2);
    } else {
      for (int i = x; i < x + n; ++i) InterpolatePixel(canvas_, xy_[2 * i], xy_[2 * i + 1], alpha_[i], out_ + 3 * i);
    }
  }

  const VirtualCanvas& canvas_;
  const bool monotone_;
  const short* xy_ = nullptr;
  const uint16_t* alpha_ = nullptr;
  uint8_t* out_ = nullptr;
};

}  // namespace

std::array<cv::Rect, 4> TileRegionsSampledByWarp(const std::array<MosaicTile, 4>& plan, int s, const cv::Matx33d& m) {
  std::array<cv::Rect, 4> regions;
  for (int k = 0; k < 4; ++k) regions[k] = plan[k].tile_rect();
  const double det = m(0, 0) * m(1, 1) - m(0, 1) * m(1, 0);
  if (!IsAffine(m) || std::abs(det) < 1e-9) return regions;
  // An affine map sends the output square to a parallelogram whose bounding box
  // holds every canvas point sampled; its corners bound it.
  const cv::Matx33d inv = m.inv();
  double x0 = HUGE_VAL, x1 = -HUGE_VAL, y0 = HUGE_VAL, y1 = -HUGE_VAL;
  for (const double x : {0, s})
    for (const double y : {0, s}) {
      const double cx = inv(0, 0) * x + inv(0, 1) * y + inv(0, 2), cy = inv(1, 0) * x + inv(1, 1) * y + inv(1, 2);
      x0 = std::min(x0, cx), x1 = std::max(x1, cx), y0 = std::min(y0, cy), y1 = std::max(y1, cy);
    }
  // Bilinear reads (sx + 1, sy + 1); OpenCV rounds M^-1 to 1/1024 and the
  // point to 1/32 pixel: two pixels of margin cover both.
  constexpr double kMargin = 2;
  const auto clamped = [s](double v) { return static_cast<int>(std::clamp(v, -1.0, 2.0 * s + 1)); };
  const cv::Rect sampled(cv::Point(clamped(std::floor(x0 - kMargin)), clamped(std::floor(y0 - kMargin))),
                         cv::Point(clamped(std::ceil(x1 + kMargin)) + 1, clamped(std::ceil(y1 + kMargin)) + 1));
  for (int k = 0; k < 4; ++k) {
    const cv::Rect canvas = plan[k].canvas_rect() & sampled;
    regions[k] = canvas.empty() ? cv::Rect() : canvas - cv::Point(plan[k].padw(), plan[k].padh());
  }
  return regions;
}

void WarpMosaic(const std::array<cv::Mat, 4>& tiles, const std::array<MosaicTile, 4>& plan, int s,
                const cv::Matx33d& m, cv::Mat* dst) {
  for (int k = 0; k < 4; ++k) {
    CV_Assert(plan[k].canvas_rect().empty() || tiles[k].empty() || tiles[k].type() == CV_8UC3);
  }
  dst->create(s, s, CV_8UC3);

  thread_local Scratch scratch;
  const InverseMap inv = InvertAsOpenCV(m);
  const VirtualCanvas canvas(tiles, plan);
  SourceMap map(inv, s, &scratch);
  RowWriter writer(canvas, inv.affine);
  for (int y = 0; y < s; ++y) {
    map.Compute(y);
    writer.Write(map.xy(), map.alpha(), s, dst->ptr<uint8_t>(y));
  }
}

}  // namespace ffyolo
