#include "ffyolo/hsv.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>
#include <vector>

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

}  // namespace

HsvGains DrawHsvGains(SampleRandom* rng, double hgain, double sgain, double vgain) {
  HsvGains gains;
  gains.h = rng->Uniform(-1, 1) * hgain + 1;
  gains.s = rng->Uniform(-1, 1) * sgain + 1;
  gains.v = rng->Uniform(-1, 1) * vgain + 1;
  return gains;
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

void ApplyHsv(const HsvLuts& luts, const cv::Mat& src, cv::Mat* dst) {
  CV_Assert(src.type() == CV_8UC3 && dst->type() == CV_8UC3 && src.size() == dst->size());
  const uint8_t* const tables[3] = {luts.h.data(), luts.s.data(), luts.v.data()};
  thread_local std::vector<uint8_t> strip;
  for (int y0 = 0; y0 < src.rows; y0 += kStripRows) {
    const int rows = std::min(kStripRows, src.rows - y0);
    cv::Mat hsv = ImageView(&strip, rows, src.cols);
    // cvtColor converts row by row (CvtColorLoop), so strips give the whole image's result.
    cv::cvtColor(src.rowRange(y0, y0 + rows), hsv, cv::COLOR_BGR2HSV);
    uint8_t* p = hsv.data;  // continuous
    for (size_t i = 0, n = hsv.total(); i < n; ++i, p += 3) {
      p[0] = tables[0][p[0]];
      p[1] = tables[1][p[1]];
      p[2] = tables[2][p[2]];
    }
    cv::Mat out = dst->rowRange(y0, y0 + rows);
    cv::cvtColor(hsv, out, cv::COLOR_HSV2BGR);
  }
}

void ApplyHsv(const HsvLuts& luts, cv::Mat* bgr) { ApplyHsv(luts, *bgr, bgr); }

}  // namespace ffyolo
