#include "ffyolo/orientation.h"

#include <algorithm>

#include "ffyolo/exif.h"

namespace ffyolo {

namespace {

// Where stored pixel p of an image of size s is seen: the transposes and flips of OrientImage, pixel by pixel.
cv::Point ViewedPoint(cv::Point p, cv::Size s, int orientation) {
  const int w = s.width - 1, h = s.height - 1;
  switch (orientation) {
    case 2: return {w - p.x, p.y};
    case 3: return {w - p.x, h - p.y};
    case 4: return {p.x, h - p.y};
    case 5: return {p.y, p.x};
    case 6: return {h - p.y, p.x};
    case 7: return {h - p.y, w - p.x};
    case 8: return {p.y, w - p.x};
    default: return p;
  }
}

// The rectangle whose corners a point map sends the rectangle's corners to.
template <typename Map>
cv::Rect MapRect(const cv::Rect& r, Map map) {
  if (r.empty()) return r;
  const cv::Point a = map(r.tl()), b = map(r.br() - cv::Point(1, 1));
  const cv::Point tl(std::min(a.x, b.x), std::min(a.y, b.y)), br(std::max(a.x, b.x), std::max(a.y, b.y));
  return cv::Rect(tl, br + cv::Point(1, 1));
}

}  // namespace

int InverseOrientation(int orientation) { return orientation == 6 ? 8 : orientation == 8 ? 6 : orientation; }

cv::Size ViewedSize(cv::Size stored, int orientation) {
  return OrientationSwapsSides(orientation) ? cv::Size(stored.height, stored.width) : stored;
}

cv::Rect StoredRegion(const cv::Rect& viewed, cv::Size stored, int orientation) {
  // The view turned back: the inverse orientation, from the viewed size.
  const cv::Size viewed_size = ViewedSize(stored, orientation);
  const int back = InverseOrientation(orientation);
  return MapRect(viewed, [&](cv::Point p) { return ViewedPoint(p, viewed_size, back); });
}

cv::Rect ViewedRegion(const cv::Rect& stored, cv::Size stored_size, int orientation) {
  return MapRect(stored, [&](cv::Point p) { return ViewedPoint(p, stored_size, orientation); });
}

void OrientImage(const cv::Mat& stored, int orientation, cv::Mat* viewed) {
  if (!OrientationTurns(orientation)) {
    stored.copyTo(*viewed);
    return;
  }
  // OpenCV's own order (imgcodecs' ExifTransform): the transpose first, then the flip.
  const cv::Mat* unflipped = &stored;
  if (OrientationSwapsSides(orientation)) {
    cv::transpose(stored, *viewed);
    unflipped = viewed;
  }
  switch (orientation) {
    case 2: case 6: cv::flip(*unflipped, *viewed, 1); break;   // about the vertical axis
    case 3: case 7: cv::flip(*unflipped, *viewed, -1); break;  // about both
    case 4: case 8: cv::flip(*unflipped, *viewed, 0); break;   // about the horizontal axis
    default: break;                                            // 5: the transpose alone
  }
}

}  // namespace ffyolo
