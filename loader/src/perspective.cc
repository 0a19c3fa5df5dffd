#include "ffyolo/perspective.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <opencv2/imgproc.hpp>

#include "ffyolo/letterbox.h"

namespace ffyolo {

namespace {

// box_candidates with numpy's dtypes: box1 comes from the float32 labels (so
// w1 * h1 + eps is float32), box2 from the float64 transformed corners.
bool IsCandidate(float w1, float h1, double w2, double h2, double wh_thr, double ar_thr, double area_thr) {
  constexpr double kEps = 1e-16;
  const float area1 = w1 * h1 + static_cast<float>(kEps);
  const double ar = std::max(w2 / (h2 + kEps), h2 / (w2 + kEps));
  return w2 > wh_thr && h2 > wh_thr && w2 * h2 / area1 > area_thr && ar < ar_thr;
}

}  // namespace

cv::Matx33d DrawPerspective(SampleRandom* rng, const PerspectiveHyp& hyp, int in_w, int in_h, int out_w, int out_h,
                            double* scale) {
  cv::Matx33d c = cv::Matx33d::eye();
  c(0, 2) = -in_w / 2.0;
  c(1, 2) = -in_h / 2.0;

  cv::Matx33d p = cv::Matx33d::eye();
  p(2, 0) = rng->Uniform(-hyp.perspective, hyp.perspective);
  p(2, 1) = rng->Uniform(-hyp.perspective, hyp.perspective);

  cv::Matx33d r = cv::Matx33d::eye();
  const double angle = rng->Uniform(-hyp.degrees, hyp.degrees);
  const double s = rng->Uniform(1 - hyp.scale, 1 + hyp.scale);
  const cv::Matx23d rotation = cv::getRotationMatrix2D_(cv::Point2f(0, 0), angle, s);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = rotation(i, j);

  cv::Matx33d shear = cv::Matx33d::eye();
  shear(0, 1) = std::tan(rng->Uniform(-hyp.shear, hyp.shear) * CV_PI / 180);
  shear(1, 0) = std::tan(rng->Uniform(-hyp.shear, hyp.shear) * CV_PI / 180);

  cv::Matx33d t = cv::Matx33d::eye();
  t(0, 2) = rng->Uniform(0.5 - hyp.translate, 0.5 + hyp.translate) * out_w;
  t(1, 2) = rng->Uniform(0.5 - hyp.translate, 0.5 + hyp.translate) * out_h;

  *scale = s;
  return t * shear * r * p * c;  // applied right to left, as in YOLOv5
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

void TransformBoxes(const cv::Matx33d& m, double scale, int out_w, int out_h, std::vector<PixelBox>* boxes) {
  const bool affine = IsAffine(m);
  const float s = static_cast<float>(scale);  // numpy: float32 labels * s stay float32
  size_t kept = 0;
  for (size_t i = 0; i < boxes->size(); ++i) {
    const PixelBox b = (*boxes)[i];
    const double xs[4] = {b.x1, b.x2, b.x1, b.x2};
    const double ys[4] = {b.y1, b.y2, b.y2, b.y1};
    double x1 = std::numeric_limits<double>::infinity(), y1 = x1, x2 = -x1, y2 = -x1;
    for (int k = 0; k < 4; ++k) {
      double x = xs[k] * m(0, 0) + ys[k] * m(0, 1) + m(0, 2);
      double y = xs[k] * m(1, 0) + ys[k] * m(1, 1) + m(1, 2);
      if (!affine) {
        const double z = xs[k] * m(2, 0) + ys[k] * m(2, 1) + m(2, 2);
        x /= z;
        y /= z;
      }
      x1 = std::min(x1, x);
      x2 = std::max(x2, x);
      y1 = std::min(y1, y);
      y2 = std::max(y2, y);
    }
    x1 = std::clamp(x1, 0.0, static_cast<double>(out_w));
    x2 = std::clamp(x2, 0.0, static_cast<double>(out_w));
    y1 = std::clamp(y1, 0.0, static_cast<double>(out_h));
    y2 = std::clamp(y2, 0.0, static_cast<double>(out_h));
    const float w1 = b.x2 * s - b.x1 * s, h1 = b.y2 * s - b.y1 * s;
    if (!IsCandidate(w1, h1, x2 - x1, y2 - y1, 2, 100, 0.1)) continue;
    PixelBox& moved = (*boxes)[kept++];
    moved.cls = b.cls;
    moved.x1 = static_cast<float>(x1);
    moved.y1 = static_cast<float>(y1);
    moved.x2 = static_cast<float>(x2);
    moved.y2 = static_cast<float>(y2);
  }
  boxes->resize(kept);
}

bool BoxCandidate(const PixelBox& before, const PixelBox& after, double wh_thr, double ar_thr, double area_thr) {
  return IsCandidate(before.x2 - before.x1, before.y2 - before.y1, static_cast<double>(after.x2) - after.x1,
                     static_cast<double>(after.y2) - after.y1, wh_thr, ar_thr, area_thr);
}

}  // namespace ffyolo
