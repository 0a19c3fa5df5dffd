#include "ffyolo/mosaic.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <opencv2/core/hal/intrin.hpp>
#include <opencv2/imgproc.hpp>  // INTER_BITS, INTER_TAB_SIZE
#include <vector>

#include "avx2.h"
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
  // SeparableWarp's column map and its two horizontal rows.
  std::vector<short> column_sx;
  std::vector<uint64_t> column_weights;
  std::vector<int16_t> horizontal[2];
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

  // warpAffine's per-row start in 1/1024 pixel, rounding term included:
  // round((a y + b) 1024) + 16, for X with (a, b) = (M1, M2), for Y (M4, M5).
  static int AffineRowStart(double a, double b, int y) {
    return cv::saturate_cast<int>((a * y + b) * kAbScale) + kAbScale / kInterTab / 2;
  }

  static void Store(int X, int Y, short* xy, uint16_t* alpha) {
    xy[0] = cv::saturate_cast<short>(X >> kInterBits);
    xy[1] = cv::saturate_cast<short>(Y >> kInterBits);
    *alpha = static_cast<uint16_t>((Y & kInterMask) * kInterTab + (X & kInterMask));
  }

 private:
  // WarpAffineInvoker: X0 = round((M1 y + M2) 1024) + 16 per row, then
  // X = (X0 + adelta[x]) >> 5 in 1/32 pixel; likewise Y.
  void AffineRow(int y) {
    const int* adelta = scratch_.adelta.data();
    const int* bdelta = scratch_.bdelta.data();
    short* xy = scratch_.xy.data();
    uint16_t* alpha = scratch_.alpha.data();
    const int X0 = AffineRowStart(inv_.m[1], inv_.m[2], y);
    const int Y0 = AffineRowStart(inv_.m[4], inv_.m[5], y);
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
  // The left one of the two tiles canvas row cy can show (the right is + 1).
  int LeftTileOfRow(int cy) const { return cy >= yc_ ? 2 : 0; }
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

// Whether an 8-byte load at p (a pixel and its right neighbour, plus two
// bytes the vector kernels ignore) stays inside the crop's buffer.
inline bool LoadFits(const cv::Mat& crop, const uint8_t* p) { return crop.datalimit - p >= 8; }

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
  const cv::v_int32x4 delta = cv::v_setall_s32(1 << (kCoefBits - 1));
  for (; i < n - 1; ++i) {
    const uint8_t* p0 = crop.data + (xy[2 * i + 1] - oy) * step + (xy[2 * i] - ox) * 3;
    const uint8_t* p1 = p0 + step;
    if (!LoadFits(crop, p1)) break;
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

#ifdef FFYOLO_HAVE_AVX2
// InterpolateInside for CPUs with AVX2, four pixels per iteration, two per
// 256-bit register (one per 128-bit lane). The weights factor exactly:
// OpenCV's sum is 32 * S with S = (32 - fy) H0 + fy H1, H = (32 - fx) p0 +
// fx p1 per row, and (32 S + 2^14) >> 15 = (S + 512) >> 10; the (0, 0)
// entry's {32767, 0, 0, 1} gives p00 either way. So one byte shuffle puts
// each lane's two rows as (left, right) byte pairs, channel by channel;
// maddubs with (32 - fx, fx) gives H0 and H1 interleaved, pmaddwd with
// (32 - fy, fy) gives S. Requires every pixel's two 8-byte row loads to lie
// inside the crop's buffer and n % 4 == 0 pixels are written (the caller
// passes the rest to the portable kernel); returns how many it wrote.
__attribute__((target("avx2"))) int InterpolateInsideAvx2(const cv::Mat& crop, int ox, int oy, const short* xy,
                                                          const uint16_t* alpha, int n, uint8_t* out) {
  const int step = static_cast<int>(crop.step);
  if (crop.step > static_cast<size_t>(SHRT_MAX)) return 0;  // offsets below are one 16-bit multiply-add
  // Per lane: row 0's (b, g, r) of the left and right samples in bytes 0-5, row 1's in 8-13.
  const __m256i pairs = _mm256_setr_epi8(0, 3, 8, 11, 1, 4, 9, 12, 2, 5, 10, 13, -1, -1, -1, -1,  //
                                         0, 3, 8, 11, 1, 4, 9, 12, 2, 5, 10, 13, -1, -1, -1, -1);
  // Broadcasts of pixel 0 and 1 (or 2 and 3) of a 4-pixel vector to lanes 0 and 1: word k, then dword k.
  const __m256i word01 = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,  //
                                          2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
  const __m256i word23 = _mm256_add_epi8(word01, _mm256_set1_epi8(4));
  const __m256i dword01 = _mm256_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3,  //
                                           4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7);
  const __m256i dword23 = _mm256_add_epi8(dword01, _mm256_set1_epi8(8));
  const __m128i compact = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
  const __m256i round = _mm256_set1_epi32(512);
  const __m128i origin = _mm_setr_epi16(static_cast<short>(ox), static_cast<short>(oy), static_cast<short>(ox),
                                        static_cast<short>(oy), static_cast<short>(ox), static_cast<short>(oy),
                                        static_cast<short>(ox), static_cast<short>(oy));
  const __m128i strides = _mm_setr_epi16(3, static_cast<short>(step), 3, static_cast<short>(step), 3,
                                         static_cast<short>(step), 3, static_cast<short>(step));
  const __m128i low5 = _mm_set1_epi16(31), thirty_two = _mm_set1_epi16(32);
  const uint8_t* data = crop.data;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    // (sx - ox) 3 + (sy - oy) step for the four pixels.
    const __m128i offsets = _mm_madd_epi16(
        _mm_sub_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xy + 2 * i)), origin), strides);
    const uint8_t* p0 = data + _mm_cvtsi128_si32(offsets);
    const uint8_t* p1 = data + _mm_extract_epi32(offsets, 1);
    const uint8_t* p2 = data + _mm_extract_epi32(offsets, 2);
    const uint8_t* p3 = data + _mm_extract_epi32(offsets, 3);
    const auto rows = [step](const uint8_t* p) {
      const __m128i top = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
      return _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(top), reinterpret_cast<const double*>(p + step)));
    };
    const __m256i px01 = _mm256_shuffle_epi8(_mm256_inserti128_si256(_mm256_castsi128_si256(rows(p0)), rows(p1), 1), pairs);
    const __m256i px23 = _mm256_shuffle_epi8(_mm256_inserti128_si256(_mm256_castsi128_si256(rows(p2)), rows(p3), 1), pairs);
    // Per pixel: the byte pair (32 - fx, fx) and the word pair (32 - fy, fy).
    const __m128i a = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(alpha + i));
    const __m128i fx = _mm_and_si128(a, low5), fy = _mm_srli_epi16(a, kInterBits);
    const __m256i wx = _mm256_broadcastsi128_si256(_mm_or_si128(_mm_sub_epi16(thirty_two, fx), _mm_slli_epi16(fx, 8)));
    const __m256i wy = _mm256_broadcastsi128_si256(_mm_unpacklo_epi16(_mm_sub_epi16(thirty_two, fy), fy));
    const __m256i s01 = _mm256_madd_epi16(_mm256_maddubs_epi16(px01, _mm256_shuffle_epi8(wx, word01)),
                                          _mm256_shuffle_epi8(wy, dword01));
    const __m256i s23 = _mm256_madd_epi16(_mm256_maddubs_epi16(px23, _mm256_shuffle_epi8(wx, word23)),
                                          _mm256_shuffle_epi8(wy, dword23));
    const __m256i v01 = _mm256_srai_epi32(_mm256_add_epi32(s01, round), 10);
    const __m256i v23 = _mm256_srai_epi32(_mm256_add_epi32(s23, round), 10);
    // Lane 0 holds pixels 0 and 2, lane 1 pixels 1 and 3, as (b, g, r, 0) bytes.
    const __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(v01, v23), _mm256_setzero_si256());
    const __m128i bgr = _mm_shuffle_epi8(
        _mm_unpacklo_epi32(_mm256_castsi256_si128(bytes), _mm256_extracti128_si256(bytes, 1)), compact);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 3 * i), bgr);
    const uint32_t last = static_cast<uint32_t>(_mm_extract_epi32(bgr, 2));
    std::memcpy(out + 3 * i + 8, &last, 4);
  }
  return i;
}
#endif

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
  RowWriter(const VirtualCanvas& canvas, bool monotone, bool avx2)
      : canvas_(canvas), monotone_(monotone), avx2_(avx2) {}

  void Write(const short* xy, const uint16_t* alpha, int width, uint8_t* out) {
    xy_ = xy, alpha_ = alpha, out_ = out;
    WriteSpan(0, width);
  }

 private:
  void WriteSpan(int x, int n) {
    const short* xy = xy_ + 2 * x;
    const SampleBounds bounds = monotone_ ? EndBounds(xy, n) : ScanBounds(xy, n);
    const int reach = ReachOf(canvas_, bounds);
    if (reach == kReachesNone) {
      std::memset(out_ + 3 * x, kPadValue, 3 * n);
    } else if (reach >= 0) {
      const cv::Rect& r = canvas_.rect(reach);
      const cv::Mat& crop = canvas_.crop(reach);
      int done = 0;
#ifdef FFYOLO_HAVE_AVX2
      // The farthest 8-byte load is the bottom row's at the rightmost sample.
      if (avx2_ && LoadFits(crop, crop.ptr<uint8_t>(bounds.y1 + 1 - r.y) + 3 * (bounds.x1 - r.x)))
        done = InterpolateInsideAvx2(crop, r.x, r.y, xy, alpha_ + x, n, out_ + 3 * x);
#endif
      InterpolateInside(crop, r.x, r.y, xy + 2 * done, alpha_ + x + done, n - done, out_ + 3 * (x + done));
    } else if (n > kLeafSpan) {
      WriteSpan(x, n / 2);
      WriteSpan(x + n / 2, n - n / 2);
    } else {
      for (int i = x; i < x + n; ++i) InterpolatePixel(canvas_, xy_[2 * i], xy_[2 * i + 1], alpha_[i], out_ + 3 * i);
    }
  }

  const VirtualCanvas& canvas_;
  const bool monotone_;
  const bool avx2_;
  const short* xy_ = nullptr;
  const uint16_t* alpha_ = nullptr;
  uint8_t* out_ = nullptr;
};

#ifdef FFYOLO_HAVE_AVX2
// H for columns [x, end) of a canvas row held in `row` from canvas column a
// on, four at a time (the rest is left to the caller): two columns per lane,
// each lane's two 8-byte loads shuffled into (left, right) byte pairs per
// channel and multiplied with the columns' (32 - fx, fx) pairs. Returns the
// first column not written. The second half of each group is stored over the
// two unused words after the first, and its own two spill into the next
// column, which is written after it.
__attribute__((target("avx2"))) int HorizontalAvx2(const uint8_t* row, int a, const short* sx,
                                                   const uint64_t* weights, int x, int end, int16_t* h) {
  const __m256i pairs = _mm256_setr_epi8(0, 3, 1, 4, 2, 5, 8, 11, 9, 12, 10, 13, -1, -1, -1, -1,  //
                                         0, 3, 1, 4, 2, 5, 8, 11, 9, 12, 10, 13, -1, -1, -1, -1);
  // Two columns' 6 weight bytes (of 8) next to each other.
  const __m256i packed = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 6, 7, 14, 15,  //
                                          0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 6, 7, 14, 15);
  const auto two = [&](int c) {
    const __m128i left = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + 3 * (sx[c] - a)));
    return _mm_castpd_si128(
        _mm_loadh_pd(_mm_castsi128_pd(left), reinterpret_cast<const double*>(row + 3 * (sx[c + 1] - a))));
  };
  for (; x + 4 <= end; x += 4) {
    const __m256i px = _mm256_shuffle_epi8(_mm256_inserti128_si256(_mm256_castsi128_si256(two(x)), two(x + 2), 1), pairs);
    const __m256i w = _mm256_shuffle_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(weights + x)), packed);
    const __m256i v = _mm256_maddubs_epi16(px, w);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 3 * x), _mm256_castsi256_si128(v));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 3 * x + 6), _mm256_extracti128_si256(v, 1));
  }
  return x;
}

// ((32 - fy) a + fy b + 512) >> 10 for 16 words, with w = (32 - fy, fy).
__attribute__((target("avx2"), always_inline)) inline __m256i Blend16(const int16_t* a, const int16_t* b, __m256i w) {
  const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
  const __m256i round = _mm256_set1_epi32(512);
  const __m256i lo = _mm256_srai_epi32(_mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(va, vb), w), round), 10);
  const __m256i hi = _mm256_srai_epi32(_mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(va, vb), w), round), 10);
  return _mm256_packs_epi32(lo, hi);  // the unpacks' order undone, lane by lane
}

// out[i] = ((32 - fy) h0[i] + fy h1[i] + 512) >> 10 for i < n.
__attribute__((target("avx2"))) void VerticalAvx2(const int16_t* h0, const int16_t* h1, int fy, int n,
                                                  uint8_t* out) {
  const __m256i w = _mm256_set1_epi32((kInterTab - fy) | fy << 16);
  int i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i bytes = _mm256_packus_epi16(Blend16(h0 + i, h1 + i, w), Blend16(h0 + i + 16, h1 + i + 16, w));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_permute4x64_epi64(bytes, 0xd8));
  }
  for (; i < n; ++i) out[i] = static_cast<uint8_t>(((kInterTab - fy) * h0[i] + fy * h1[i] + 512) >> 10);
}

// YOLOv5's default warp (degrees, shear and perspective 0: M^-1 only scales
// and shifts along the axes) in two passes. Every output column then samples
// the same canvas columns (sx, sx + 1) with the same fx on every row, and
// every pixel of an output row the same canvas rows (sy, sy + 1) with the
// same fy. With InterpolateInsideAvx2's factoring the pixel is
// ((32 - fy) H(sy) + fy H(sy + 1) + 512) >> 10, H(r) = (32 - fx) p(sx, r) +
// fx p(sx + 1, r) per channel: a horizontal pass per canvas row, kept for the
// next output row, which samples the same or the next rows, then a blend of
// two of them over contiguous memory.
class SeparableWarp {
 public:
  static bool Applies(const InverseMap& inv) { return inv.affine && inv.m[1] == 0 && inv.m[3] == 0 && inv.m[0] > 0; }

  SeparableWarp(const VirtualCanvas& canvas, const InverseMap& inv, int width, Scratch* scratch)
      : canvas_(canvas), inv_(inv), width_(width), scratch_(*scratch) {
    SourceMap map(inv, width, scratch);
    map.Compute(0);  // M1 = 0: every row's columns
    scratch_.column_sx.resize(width);
    scratch_.column_weights.resize(width);
    for (int x = 0; x < width; ++x) {
      scratch_.column_sx[x] = map.xy()[2 * x];
      const uint64_t fx = map.alpha()[x] & kInterMask, pair = (kInterTab - fx) | fx << 8;
      scratch_.column_weights[x] = pair | pair << 16 | pair << 32;
    }
    for (auto& h : scratch_.horizontal) h.resize(3 * static_cast<size_t>(width) + 8);  // + the kernel's spill
  }

  void WriteRow(int y, uint8_t* out) {
    // M3 = 0: one Y for the whole row, warpAffine's.
    const int Y = SourceMap::AffineRowStart(inv_.m[4], inv_.m[5], y) >> (kAbBits - kInterBits);
    short xy[2];
    uint16_t alpha;
    SourceMap::Store(0, Y, xy, &alpha);
    const int sy = xy[1], fy = alpha >> kInterBits;
    const int16_t* h0 = Horizontal(sy, sy + 1);
    const int16_t* h1 = fy == 0 ? h0 : Horizontal(sy + 1, sy);
    VerticalAvx2(h0, h1, fy, 3 * width_, out);
  }

 private:
  // H of canvas row r, computed unless held; the other row held is kept if it is `keep`.
  const int16_t* Horizontal(int r, int keep) {
    for (int i = 0; i < 2; ++i)
      if (rows_[i] == r) return scratch_.horizontal[i].data();
    const int i = rows_[0] == keep ? 1 : 0;
    rows_[i] = r;
    ComputeHorizontal(r, scratch_.horizontal[i].data());
    return scratch_.horizontal[i].data();
  }

  // Columns by what their two samples on row r touch, left to right: only the
  // fill, the pixels of one tile (the kernel), or both or two tiles (pixel by
  // pixel through the canvas). sx is nondecreasing (M0 > 0), so each is a run.
  void ComputeHorizontal(int r, int16_t* h) {
    const short* sx = scratch_.column_sx.data();
    const auto first_at_least = [&](int v) { return static_cast<int>(std::lower_bound(sx, sx + width_, v) - sx); };
    int x = 0;
    for (int k = canvas_.LeftTileOfRow(r), last = k + 1; k <= last; ++k) {
      const cv::Rect& rect = canvas_.rect(k);
      if (r < rect.y || r >= rect.y + rect.height) continue;  // empty rects included
      const int a = rect.x, b = rect.x + rect.width;
      const int touch_begin = std::max(x, first_at_least(a - 1)), touch_end = first_at_least(b);
      const int inside_begin = first_at_least(a);
      int inside_end = std::max(inside_begin, first_at_least(b - 1));
      const cv::Mat& crop = canvas_.crop(k);
      const uint8_t* row = crop.ptr<uint8_t>(r - rect.y);
      while (inside_end > inside_begin && !LoadFits(crop, row + 3 * (sx[inside_end - 1] - a))) --inside_end;
      Fill(x, touch_begin, h);
      ByPixel(r, touch_begin, inside_begin, h);
      const int done = HorizontalAvx2(row, a, sx, scratch_.column_weights.data(), inside_begin, inside_end, h);
      ByPixel(r, done, touch_end, h);
      x = std::max(x, touch_end);
    }
    Fill(x, width_, h);
  }

  // H of the fill, 114 (32 - fx + fx), for columns [x, end).
  __attribute__((target("avx2"))) static void Fill(int x, int end, int16_t* h) {
    const __m256i fill = _mm256_set1_epi16(kPadValue * kInterTab);
    int i = 3 * x;
    for (; i + 16 <= 3 * end; i += 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(h + i), fill);
    for (; i < 3 * end; ++i) h[i] = kPadValue * kInterTab;
  }

  void ByPixel(int r, int x, int end, int16_t* h) const {
    for (; x < end; ++x) {
      const int sx = scratch_.column_sx[x], fx = static_cast<int>(scratch_.column_weights[x] >> 8 & 0xff);
      const uint8_t *p0 = canvas_.Pixel(sx, r), *p1 = canvas_.Pixel(sx + 1, r);
      for (int c = 0; c < 3; ++c) h[3 * x + c] = static_cast<int16_t>((kInterTab - fx) * p0[c] + fx * p1[c]);
    }
  }

  const VirtualCanvas& canvas_;
  const InverseMap& inv_;
  const int width_;
  Scratch& scratch_;
  int rows_[2] = {INT_MIN, INT_MIN};  // the canvas rows held in scratch_.horizontal
};
#endif

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
                const cv::Matx33d& m, cv::Mat* dst, WarpKernel kernel) {
  for (int k = 0; k < 4; ++k) {
    CV_Assert(plan[k].canvas_rect().empty() || tiles[k].empty() || tiles[k].type() == CV_8UC3);
  }
  dst->create(s, s, CV_8UC3);

  thread_local Scratch scratch;
  const InverseMap inv = InvertAsOpenCV(m);
  const VirtualCanvas canvas(tiles, plan);
  const bool avx2 = kernel == WarpKernel::kBest && OpenCvAvx2();
#ifdef FFYOLO_HAVE_AVX2
  if (avx2 && SeparableWarp::Applies(inv)) {
    SeparableWarp warp(canvas, inv, s, &scratch);
    for (int y = 0; y < s; ++y) warp.WriteRow(y, dst->ptr<uint8_t>(y));
    return;
  }
#endif
  SourceMap map(inv, s, &scratch);
  RowWriter writer(canvas, inv.affine, avx2);
  for (int y = 0; y < s; ++y) {
    map.Compute(y);
    writer.Write(map.xy(), map.alpha(), s, dst->ptr<uint8_t>(y));
  }
}

}  // namespace ffyolo
