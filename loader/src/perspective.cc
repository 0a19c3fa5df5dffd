#include "ffyolo/perspective.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <opencv2/imgproc.hpp>

#include "ffyolo/letterbox.h"

namespace ffyolo {

namespace {

// box_candidates with numpy's dtypes: box1 comes from the float32 labels (so
// w1 * h1 + eps is float32), box2 from the transformed corners: float64 in
// YOLOv5, float32 in Ultralytics 8 (where eps and every step are float32 too).
template <typename T>
bool IsCandidate(float w1, float h1, T w2, T h2, double wh_thr, double ar_thr, double area_thr) {
  constexpr T kEps = static_cast<T>(1e-16);
  const float area1 = w1 * h1 + static_cast<float>(kEps);
  const T ar = std::max(w2 / (h2 + kEps), h2 / (w2 + kEps));
  return w2 > wh_thr && h2 > wh_thr && w2 * h2 / area1 > area_thr && ar < ar_thr;
}

// a0 * b0 + a1 * b1 + a2 * b2 as numpy's matmul sums it: YOLOv5's float64
// products run plain multiply-adds in order; Ultralytics 8's float32 ones go
// to the BLAS, whose kernels (OpenBLAS on AVX2 and newer CPUs, Debian's
// python3-numpy included) fuse each step into an accumulator that starts at
// 0: fma(a2, b2, fma(a1, b1, fma(a0, b0, 0))).
inline double Dot3(double a0, double b0, double a1, double b1, double a2, double b2) {
  return a0 * b0 + a1 * b1 + a2 * b2;
}
inline float Dot3(float a0, float b0, float a1, float b1, float a2, float b2) {
  return std::fma(a2, b2, std::fma(a1, b1, std::fma(a0, b0, 0.f)));
}

// The corners of each box through M in T's arithmetic (numpy's x @ M.T: a
// sum in column order), min/max, clipped, filtered; kept boxes in place.
template <typename T>
void TransformBoxesIn(const cv::Matx<T, 3, 3>& m, double scale, int out_w, int out_h, std::vector<PixelBox>* boxes) {
  const bool affine = m(2, 0) == 0 && m(2, 1) == 0 && m(2, 2) == 1;
  const float s = static_cast<float>(scale);  // numpy: float32 labels * s stay float32
  const T inf = std::numeric_limits<T>::infinity(), w = static_cast<T>(out_w), h = static_cast<T>(out_h);
  size_t kept = 0;
  for (size_t i = 0; i < boxes->size(); ++i) {
    const PixelBox b = (*boxes)[i];
    const T xs[4] = {b.x1, b.x2, b.x1, b.x2};
    const T ys[4] = {b.y1, b.y2, b.y2, b.y1};
    T x1 = inf, y1 = inf, x2 = -inf, y2 = -inf;
    for (int k = 0; k < 4; ++k) {
      T x = Dot3(xs[k], m(0, 0), ys[k], m(0, 1), T(1), m(0, 2));
      T y = Dot3(xs[k], m(1, 0), ys[k], m(1, 1), T(1), m(1, 2));
      if (!affine) {
        const T z = Dot3(xs[k], m(2, 0), ys[k], m(2, 1), T(1), m(2, 2));
        x /= z;
        y /= z;
      }
      x1 = std::min(x1, x);
      x2 = std::max(x2, x);
      y1 = std::min(y1, y);
      y2 = std::max(y2, y);
    }
    x1 = std::clamp(x1, T(0), w);
    x2 = std::clamp(x2, T(0), w);
    y1 = std::clamp(y1, T(0), h);
    y2 = std::clamp(y2, T(0), h);
    const float w1 = b.x2 * s - b.x1 * s, h1 = b.y2 * s - b.y1 * s;
    if (!IsCandidate<T>(w1, h1, x2 - x1, y2 - y1, 2, 100, 0.1)) continue;
    PixelBox& moved = (*boxes)[kept++];
    moved.cls = b.cls;
    moved.x1 = static_cast<float>(x1);
    moved.y1 = static_cast<float>(y1);
    moved.x2 = static_cast<float>(x2);
    moved.y2 = static_cast<float>(y2);
  }
  boxes->resize(kept);
}

// T * S * R * P * C in T's arithmetic, each factor rounded to T first.
template <typename T>
cv::Matx33d DrawPerspectiveIn(SampleRandom* rng, const PerspectiveHyp& hyp, int in_w, int in_h, int out_w,
                              int out_h, double* scale) {
  using M = cv::Matx<T, 3, 3>;
  M c = M::eye();
  c(0, 2) = static_cast<T>(-in_w / 2.0);
  c(1, 2) = static_cast<T>(-in_h / 2.0);

  M p = M::eye();
  p(2, 0) = static_cast<T>(rng->Uniform(-hyp.perspective, hyp.perspective));
  p(2, 1) = static_cast<T>(rng->Uniform(-hyp.perspective, hyp.perspective));

  M r = M::eye();
  const double angle = rng->Uniform(-hyp.degrees, hyp.degrees);
  const double s = rng->Uniform(1 - hyp.scale, 1 + hyp.scale);
  const cv::Matx23d rotation = cv::getRotationMatrix2D_(cv::Point2f(0, 0), angle, s);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = static_cast<T>(rotation(i, j));

  M shear = M::eye();
  shear(0, 1) = static_cast<T>(std::tan(rng->Uniform(-hyp.shear, hyp.shear) * CV_PI / 180));
  shear(1, 0) = static_cast<T>(std::tan(rng->Uniform(-hyp.shear, hyp.shear) * CV_PI / 180));

  M t = M::eye();
  t(0, 2) = static_cast<T>(rng->Uniform(0.5 - hyp.translate, 0.5 + hyp.translate) * out_w);
  t(1, 2) = static_cast<T>(rng->Uniform(0.5 - hyp.translate, 0.5 + hyp.translate) * out_h);

  *scale = s;
  // Applied right to left, as in YOLOv5; multiplied left to right, as numpy's T @ S @ R @ P @ C.
  M m;
  if constexpr (std::is_same_v<T, double>) {
    m = t * shear * r * p * c;  // cv::Matx sums as YOLOv5's numpy does, from +0 on
  } else {
    const auto product = [](const M& a, const M& b) {
      M out;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) out(i, j) = Dot3(a(i, 0), b(0, j), a(i, 1), b(1, j), a(i, 2), b(2, j));
      return out;
    };
    m = product(product(product(product(t, shear), r), p), c);
  }
  cv::Matx33d out;
  for (int i = 0; i < 9; ++i) out.val[i] = m.val[i];
  return out;
}

}  // namespace

cv::Matx33d DrawPerspective(SampleRandom* rng, const PerspectiveHyp& hyp, int in_w, int in_h, int out_w, int out_h,
                            double* scale, Augmentation mode) {
  return mode == Augmentation::kYolov5 ? DrawPerspectiveIn<double>(rng, hyp, in_w, in_h, out_w, out_h, scale)
                                       : DrawPerspectiveIn<float>(rng, hyp, in_w, in_h, out_w, out_h, scale);
}

bool IsAffine(const cv::Matx33d& m) { return m(2, 0) == 0 && m(2, 1) == 0 && m(2, 2) == 1; }

void WarpImage(const cv::Mat& src, const cv::Matx33d& m, cv::Mat* dst) {
  CV_Assert(src.type() == CV_8UC3 && dst->type() == CV_8UC3 && !dst->empty());
  // dst has its final size and type, so OpenCV writes through a view instead of reallocating.
  const cv::Scalar border = cv::Scalar::all(kPadValue);
  if (IsAffine(m)) {
    cv::warpAffine(src, *dst, cv::Matx23d(m.val), dst->size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT, border);
  } else {
    cv::warpPerspective(src, *dst, m, dst->size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT, border);
  }
}

void TransformBoxes(const cv::Matx33d& m, double scale, int out_w, int out_h, std::vector<PixelBox>* boxes,
                    Augmentation mode) {
  if (mode == Augmentation::kYolov5) return TransformBoxesIn<double>(m, scale, out_w, out_h, boxes);
  // Ultralytics 8's M is float32 already (DrawPerspective), so this narrowing is exact.
  TransformBoxesIn<float>(cv::Matx33f(m), scale, out_w, out_h, boxes);
}

bool BoxCandidate(const PixelBox& before, const PixelBox& after, double wh_thr, double ar_thr, double area_thr) {
  return IsCandidate<double>(before.x2 - before.x1, before.y2 - before.y1, static_cast<double>(after.x2) - after.x1,
                     static_cast<double>(after.y2) - after.y1, wh_thr, ar_thr, area_thr);
}

}  // namespace ffyolo
