#include "ffyolo/hsv.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

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

// A rows x cols CV_8UC3 view into this thread's scratch bytes, which only grow:
// no allocation once the largest image has been seen.
cv::Mat ThreadScratch(cv::Size size) {
  thread_local cv::Mat storage;
  const size_t bytes = static_cast<size_t>(size.area()) * 3;
  if (storage.total() < bytes) storage.create(1, static_cast<int>(bytes), CV_8U);
  return cv::Mat(size, CV_8UC3, storage.data);
}

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

void ApplyHsv(const HsvLuts& luts, cv::Mat* bgr) {
  CV_Assert(bgr->type() == CV_8UC3);
  // One interleaved table maps all three channels in a single pass: no split or merge.
  uint8_t table[256 * 3];
  for (int i = 0; i < 256; ++i) {
    table[3 * i] = luts.h[i];
    table[3 * i + 1] = luts.s[i];
    table[3 * i + 2] = luts.v[i];
  }
  const cv::Mat lut(1, 256, CV_8UC3, table);
  cv::Mat hsv = ThreadScratch(bgr->size());
  cv::cvtColor(*bgr, hsv, cv::COLOR_BGR2HSV);
  cv::LUT(hsv, lut, hsv);  // element-wise, so in place is safe
  cv::cvtColor(hsv, *bgr, cv::COLOR_HSV2BGR);
}

}  // namespace ffyolo
