#include "ffyolo/hsv.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>
#include <vector>

#include "avx2.h"
#include "image_view.h"

namespace ffyolo {

namespace {

// numpy's float `%`: the sign follows the divisor, as in Python.
double PyMod(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(0.0, b);
  }
  return mod;
}

// Rows per cvtColor call: a strip's HSV copy (8 x 640 x 3 bytes at s = 640)
// stays in L1 between the two conversions, and OpenCV runs a call this small
// on the calling thread instead of splitting it across its pool.
constexpr int kStripRows = 8;

// OpenCV's 8-bit BGR->HSV: s = diff * 255 / v and h = num * 30 / diff in
// fixed point (hsv_shift = 12), with the reciprocals 255 << 12 / v and
// (180 << 12) / (6 diff) rounded to int from double. Dividing in float and
// rounding to nearest gives the same reciprocal for every divisor 1..255
// (the tests see each one), without a table to look up per pixel.
constexpr int kHsvShift = 12;
constexpr float kSatNumerator = 255 << kHsvShift, kHueNumerator = 30 << kHsvShift;

// OpenCV's HSV->BGR takes h * (6.0f / 180) and s, v * (1.0f / 255.0f), in float.
constexpr float kHueScale = 6.0f / 180, kByteScale = 1.0f / 255.0f;

// x rounded to nearest, ties to even, as cvRound and cvtps2dq round under the
// default rounding mode; for 0 <= x < 2^23.
inline float RoundToNearest(float x) { return (x + 0x1p23f) - 0x1p23f; }

// One pixel as OpenCV's scalar code (kRound) or its SSE vector loop converts
// it, 1 - s*f fused when kFused; the result goes to index `o` of the planes.
// hsv.cc is built with -ffp-contract=off, so that nothing else is fused.
template <bool kRound, bool kFused>
void HsvPixel(const HsvLuts& luts, const uint8_t* p, size_t o, uint8_t* r, uint8_t* g, uint8_t* b) {
  const int pb = p[0], pg = p[1], pr = p[2];
  const int v = std::max({pb, pg, pr});
  const int diff = v - std::min({pb, pg, pr});
  const int sdiv = static_cast<int>(RoundToNearest(kSatNumerator / std::max(v, 1)));
  const int hdiv = static_cast<int>(RoundToNearest(kHueNumerator / std::max(diff, 1)));
  const int s = (diff * sdiv + (1 << (kHsvShift - 1))) >> kHsvShift;
  int h = v == pr ? pg - pb : v == pg ? pb - pr + 2 * diff : pr - pg + 4 * diff;
  h = (h * hdiv + (1 << (kHsvShift - 1))) >> kHsvShift;  // arithmetic shift, as OpenCV's
  if (h < 0) h += 180;
  // HSV->BGR: f is the fraction of h * 6/180, the sector its whole part
  // modulo 6 (OpenCV's fmod by 6, which matters only for table entries of 180
  // and more). With s = 0 every tab equals vf, as OpenCV's special case for
  // greys gives.
  const float hue = luts.h[h] * kHueScale, sf = luts.s[s] * kByteScale, vf = luts.v[v] * kByteScale;
  const int whole = static_cast<int>(hue);
  const float f = hue - whole;
  const int sector = whole % 6;
  const float tab[4] = {vf, vf * (1.f - sf), vf * (kFused ? std::fma(-sf, f, 1.f) : 1.f - sf * f),
                        vf * (1.f - sf * (1.f - f))};
  static constexpr int kPick[6][3] = {{1, 3, 0}, {1, 0, 2}, {3, 0, 1}, {0, 2, 1}, {0, 1, 3}, {2, 1, 0}};
  uint8_t* const out[3] = {b, g, r};
  for (int c = 0; c < 3; ++c) {
    const float x = tab[kPick[sector][c]] * 255.f;  // in [0, 255 + a little]
    out[c][o] = static_cast<uint8_t>(std::min(static_cast<int>(kRound ? RoundToNearest(x) : x), 255));
  }
}

#ifdef FFYOLO_HAVE_AVX2
// The AVX2 path: 32 pixels at a time, without gathers (with five per 8
// pixels, for the reciprocals and the tables, they took over half of the
// time on the Zen 3 measured): the divisions in float, the three tables by
// byte shuffles.
#define FFYOLO_AVX2 __attribute__((target("avx2,fma")))

// pshufb masks gathering channel c of 16 BGR pixels from load k (bytes
// 16k..16k+15): pixel i's byte is 3i + c.
struct Deinterleave {
  alignas(16) int8_t mask[3][3][16];
};
constexpr Deinterleave MakeDeinterleave() {
  Deinterleave d{};
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 3; ++k)
      for (int i = 0; i < 16; ++i) {
        const int byte = 3 * i + c;
        d.mask[c][k][i] = static_cast<int8_t>(byte / 16 == k ? byte % 16 : -128);
      }
  return d;
}
constexpr Deinterleave kDeinterleave = MakeDeinterleave();

FFYOLO_AVX2 inline __m256i Mask(int c, int k) {
  return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(kDeinterleave.mask[c][k])));
}

// Channel c of 32 BGR pixels; `a` holds pixels 0..15 in its low lanes and
// 16..31 in its high ones.
FFYOLO_AVX2 inline __m256i Channel(const __m256i a[3], int c) {
  return _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(a[0], Mask(c, 0)), _mm256_shuffle_epi8(a[1], Mask(c, 1))),
                         _mm256_shuffle_epi8(a[2], Mask(c, 2)));
}

// table[16 k + lo] for k in [k0, k0 + n), picked by the index's bits 4..7
// (their masks in `high`): a blend tree, evaluated depth first so that few
// values are live at once.
template <int k0, int n>
FFYOLO_AVX2 inline __m256i LutRows(const uint8_t* table, __m256i lo, const __m256i high[4]) {
  if constexpr (n == 1) {
    const __m128i row = _mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * k0));
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(row), lo);
  } else {
    constexpr int bit = n == 2 ? 0 : n == 4 ? 1 : n == 8 ? 2 : 3;
    return _mm256_blendv_epi8(LutRows<k0, n / 2>(table, lo, high), LutRows<k0 + n / 2, n / 2>(table, lo, high),
                              high[bit]);
  }
}

// table[idx] for 32 byte indices: each 16-byte row of the table looked up by
// the low nibble (pshufb), the high nibble choosing among the rows.
FFYOLO_AVX2 inline __attribute__((always_inline)) __m256i Lut(const std::array<uint8_t, 256>& table, __m256i idx) {
  // blendv reads bit 7 of each byte: bits 4..7 of idx moved there.
  const __m256i high[4] = {_mm256_slli_epi16(idx, 3), _mm256_slli_epi16(idx, 2), _mm256_slli_epi16(idx, 1), idx};
  return LutRows<0, 16>(table.data(), _mm256_and_si256(idx, _mm256_set1_epi8(0x0F)), high);
}

// Wider lanes for 32 pixels, in the order AVX2's in-lane unpacks give:
// half i of 32 bytes as int16 holds pixels 8i..8i+7 and 16+8i..16+8i+7,
// quarter q as int32 pixels 4q..4q+3 and 16+4q..16+4q+3. Narrow packs the
// quarters back into bytes in pixel order.
FFYOLO_AVX2 inline __m256i Half(__m256i bytes, int i) {
  const __m256i zero = _mm256_setzero_si256();
  return i == 0 ? _mm256_unpacklo_epi8(bytes, zero) : _mm256_unpackhi_epi8(bytes, zero);
}
// Quarter q of 32 pixels from their int16 half q / 2, `high` its upper 16
// bits (zero, or the sign).
FFYOLO_AVX2 inline __m256i Quarter(__m256i half, __m256i high, int q) {
  return q % 2 == 0 ? _mm256_unpacklo_epi16(half, high) : _mm256_unpackhi_epi16(half, high);
}
FFYOLO_AVX2 inline __m256i Narrow(const __m256i quarter[4]) {
  return _mm256_packus_epi16(_mm256_packus_epi32(quarter[0], quarter[1]), _mm256_packus_epi32(quarter[2], quarter[3]));
}

// BGR->HSV's s and h of 32 pixels, as bytes.
FFYOLO_AVX2 inline void SatHue(__m256i pb, __m256i pg, __m256i pr, __m256i vmax, __m256i vdiff, __m256i* s,
                               __m256i* h) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i one = _mm256_set1_epi32(1), half = _mm256_set1_epi32(1 << (kHsvShift - 1));
  __m256i sq[4], hq[4];
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i) {
    const __m256i b = Half(pb, i), g = Half(pg, i), r = Half(pr, i), v = Half(vmax, i), diff = Half(vdiff, i);
    // The hue's numerator by which channel is largest, in int16 (|num| <= 5 * 255).
    const __m256i from_g = _mm256_add_epi16(_mm256_sub_epi16(b, r), _mm256_slli_epi16(diff, 1));
    const __m256i from_b = _mm256_add_epi16(_mm256_sub_epi16(r, g), _mm256_slli_epi16(diff, 2));
    __m256i num = _mm256_blendv_epi8(from_b, from_g, _mm256_cmpeq_epi16(v, g));
    num = _mm256_blendv_epi8(num, _mm256_sub_epi16(g, b), _mm256_cmpeq_epi16(v, r));
    const __m256i num_sign = _mm256_srai_epi16(num, 15);
#pragma GCC unroll 2
    for (int q = 2 * i; q < 2 * i + 2; ++q) {
      const __m256i v32 = Quarter(v, zero, q), diff32 = Quarter(diff, zero, q);
      const __m256i sdiv = _mm256_cvtps_epi32(
          _mm256_div_ps(_mm256_set1_ps(kSatNumerator), _mm256_cvtepi32_ps(_mm256_max_epi32(v32, one))));
      const __m256i hdiv = _mm256_cvtps_epi32(
          _mm256_div_ps(_mm256_set1_ps(kHueNumerator), _mm256_cvtepi32_ps(_mm256_max_epi32(diff32, one))));
      sq[q] = _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(diff32, sdiv), half), kHsvShift);
      const __m256i x =
          _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(Quarter(num, num_sign, q), hdiv), half), kHsvShift);
      hq[q] = _mm256_add_epi32(x, _mm256_and_si256(_mm256_cmpgt_epi32(zero, x), _mm256_set1_epi32(180)));
    }
  }
  *s = Narrow(sq);
  *h = Narrow(hq);
}

// Quarter q of 32 bytes as float, times `scale`.
FFYOLO_AVX2 inline __m256 ToFloat(__m256i bytes, int q, float scale) {
  const __m256i x = Quarter(Half(bytes, q / 2), _mm256_setzero_si256(), q);
  return _mm256_mul_ps(_mm256_cvtepi32_ps(x), _mm256_set1_ps(scale));
}

// Bytes x >= k, x and k unsigned, from x offset by 128 (`xs`): a signed compare.
FFYOLO_AVX2 inline __m256i AtLeast(__m256i xs, int k) {
  return _mm256_cmpgt_epi8(xs, _mm256_set1_epi8(static_cast<char>((k - 1) ^ 0x80)));
}

// HSV->BGR of the tables' outputs for 32 pixels, as OpenCV's AVX2 vector
// loop computes it (with its compiler's fused 1 - s*f and 1 - s*(1 - f)).
FFYOLO_AVX2 inline void Bgr(__m256i hb, __m256i sb, __m256i vb, __m256i* ob, __m256i* og, __m256i* or_) {
  const __m256 one = _mm256_set1_ps(1.f), k255 = _mm256_set1_ps(255.f);
  // The four candidates of OpenCV's tab[], times 255 and truncated, per quarter.
  __m256i tab[4][4];
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    const __m256 hue = ToFloat(hb, q, kHueScale), sf = ToFloat(sb, q, kByteScale), vf = ToFloat(vb, q, kByteScale);
    const __m256 f = _mm256_sub_ps(hue, _mm256_round_ps(hue, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    tab[0][q] = _mm256_cvttps_epi32(_mm256_mul_ps(vf, k255));
    tab[1][q] = _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_mul_ps(vf, _mm256_sub_ps(one, sf)), k255));
    tab[2][q] = _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_mul_ps(vf, _mm256_fnmadd_ps(sf, f, one)), k255));
    tab[3][q] =
        _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_mul_ps(vf, _mm256_fnmadd_ps(sf, _mm256_sub_ps(one, f), one)), k255));
  }
  const __m256i t0 = Narrow(tab[0]), t1 = Narrow(tab[1]), t2 = Narrow(tab[2]), t3 = Narrow(tab[3]);
  // The sector, trunc(h * 6/180) mod 6, is h / 30 for h < 180 and (h - 180) / 30 above.
  const __m256i h = _mm256_min_epu8(hb, _mm256_sub_epi8(hb, _mm256_set1_epi8(static_cast<char>(180))));
  const __m256i hs = _mm256_xor_si256(h, _mm256_set1_epi8(static_cast<char>(0x80)));
  const __m256i s1 = AtLeast(hs, 30), s2 = AtLeast(hs, 60), s3 = AtLeast(hs, 90), s4 = AtLeast(hs, 120),
                s5 = AtLeast(hs, 150);
  // Sectors 0..5 take (B, G, R) = (1,3,0) (1,0,2) (3,0,1) (0,2,1) (0,1,3) (2,1,0) of tab[].
  *ob = _mm256_blendv_epi8(_mm256_blendv_epi8(_mm256_blendv_epi8(t1, t3, s2), t0, s3), t2, s5);
  *og = _mm256_blendv_epi8(_mm256_blendv_epi8(_mm256_blendv_epi8(t3, t0, s1), t2, s3), t1, s4);
  *or_ = _mm256_blendv_epi8(_mm256_blendv_epi8(_mm256_blendv_epi8(_mm256_blendv_epi8(t0, t2, s1), t1, s2), t3, s4), t0,
                            s5);
}

FFYOLO_AVX2 inline void Store(uint8_t* dst, __m256i x, bool mirror) {
  if (mirror) {
    const __m256i reverse = _mm256_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,  //
                                             15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    x = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(x, reverse), 0x4E);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), x);
}

// Pixels [0, end) of a row, end a multiple of 32, as OpenCV's AVX2 build
// converts pixels in its vector loop.
FFYOLO_AVX2 void HsvVectorPixels(const HsvLuts& luts, const uint8_t* bgr, int end, int width, bool mirror, uint8_t* r,
                                 uint8_t* g, uint8_t* b) {
  for (int x = 0; x < end; x += 32) {
    const uint8_t* p = bgr + 3 * x;
    __m256i a[3];
#pragma GCC unroll 3
    for (int k = 0; k < 3; ++k)
      a[k] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(p + 48 + 16 * k),
                                 reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m256i pb = Channel(a, 0), pg = Channel(a, 1), pr = Channel(a, 2);
    const __m256i vmax = _mm256_max_epu8(pb, _mm256_max_epu8(pg, pr));
    const __m256i diff = _mm256_sub_epi8(vmax, _mm256_min_epu8(pb, _mm256_min_epu8(pg, pr)));
    __m256i sb, hb, ob, og, or_;
    SatHue(pb, pg, pr, vmax, diff, &sb, &hb);
    Bgr(Lut(luts.h, hb), Lut(luts.s, sb), Lut(luts.v, vmax), &ob, &og, &or_);
    const int o = mirror ? width - 32 - x : x;
    Store(b + o, ob, mirror);
    Store(g + o, og, mirror);
    Store(r + o, or_, mirror);
  }
}
#endif  // FFYOLO_HAVE_AVX2

}  // namespace

HsvDraw DrawHsv(SampleRandom* rng, double hgain, double sgain, double vgain) {
  HsvDraw draw;
  draw.h = rng->Uniform(-1, 1) * hgain;
  draw.s = rng->Uniform(-1, 1) * sgain;
  draw.v = rng->Uniform(-1, 1) * vgain;
  return draw;
}

HsvGains DrawHsvGains(SampleRandom* rng, double hgain, double sgain, double vgain) {
  const HsvDraw draw = DrawHsv(rng, hgain, sgain, vgain);
  return {draw.h + 1, draw.s + 1, draw.v + 1};
}

HsvLuts BuildHsvLuts(const HsvGains& gains) {
  HsvLuts luts;
  for (int i = 0; i < 256; ++i) {
    const double x = i;
    luts.h[i] = static_cast<uint8_t>(PyMod(x * gains.h, 180));
    luts.s[i] = static_cast<uint8_t>(std::clamp(x * gains.s, 0.0, 255.0));
    luts.v[i] = static_cast<uint8_t>(std::clamp(x * gains.v, 0.0, 255.0));
  }
  return luts;
}

HsvLuts BuildShiftedHueLuts(const HsvDraw& draw) {
  HsvLuts luts = BuildHsvLuts({1, draw.s + 1, draw.v + 1});
  for (int i = 0; i < 256; ++i) luts.h[i] = static_cast<uint8_t>(PyMod(i + draw.h * 180, 180));
  return luts;
}

void ApplyHsv(const HsvLuts& luts, cv::Mat* bgr) {
  CV_Assert(bgr->type() == CV_8UC3);
  const uint8_t* const tables[3] = {luts.h.data(), luts.s.data(), luts.v.data()};
  thread_local std::vector<uint8_t> strip;
  for (int y0 = 0; y0 < bgr->rows; y0 += kStripRows) {
    const int rows = std::min(kStripRows, bgr->rows - y0);
    cv::Mat hsv = ImageView(&strip, rows, bgr->cols);
    cv::Mat band = bgr->rowRange(y0, y0 + rows);
    // cvtColor converts row by row (CvtColorLoop), so strips give the whole image's result.
    cv::cvtColor(band, hsv, cv::COLOR_BGR2HSV);
    uint8_t* p = hsv.data;  // continuous
    for (size_t i = 0, n = hsv.total(); i < n; ++i, p += 3) {
      p[0] = tables[0][p[0]];
      p[1] = tables[1][p[1]];
      p[2] = tables[2][p[2]];
    }
    cv::cvtColor(hsv, band, cv::COLOR_HSV2BGR);
  }
}

void HsvToPlanes(const HsvLuts& luts, const uint8_t* bgr, int width, bool mirror, uint8_t* r, uint8_t* g, uint8_t* b) {
  // OpenCV's vector loop takes 4 float vectors of pixels at a time, the
  // scalar code the rest of the row. Its AVX2 build's compiler fused
  // multiply-subtracts: in the vector loop both 1 - s*f and 1 - s*(1 - f), in
  // the scalar code only the first (found by comparing every HSV triple; the
  // tests compare every colour).
  const bool avx2 = OpenCvAvx2();
  const int vector_end = width - width % (avx2 ? 32 : 16);
  const auto at = [&](int x) { return static_cast<size_t>(mirror ? width - 1 - x : x); };
  int x = 0;
#ifdef FFYOLO_HAVE_AVX2
  if (avx2) {
    HsvVectorPixels(luts, bgr, vector_end, width, mirror, r, g, b);
    x = vector_end;
  }
#endif
  for (; x < vector_end; ++x) HsvPixel</*kRound=*/false, /*kFused=*/false>(luts, bgr + 3 * x, at(x), r, g, b);
  for (; x < width; ++x) {
    if (avx2)
      HsvPixel</*kRound=*/true, /*kFused=*/true>(luts, bgr + 3 * x, at(x), r, g, b);
    else
      HsvPixel</*kRound=*/true, /*kFused=*/false>(luts, bgr + 3 * x, at(x), r, g, b);
  }
}

}  // namespace ffyolo
