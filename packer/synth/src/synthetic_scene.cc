#include "ffyolo/synthetic_scene.h"

#include <algorithm>
#include <cmath>

#include <opencv2/imgproc.hpp>

#include "ffyolo/synthetic_classes.h"
#include "synth_rng.h"

namespace ffyolo {

namespace {

constexpr double kPi = 3.14159265358979323846;
// fillPoly takes fixed-point vertices; 4 fraction bits keep small shapes smooth.
constexpr int kFixedPointBits = 4;
constexpr double kFixedPointScale = 1 << kFixedPointBits;
// An object must keep this share of its pixels when later objects cover it.
constexpr double kMinVisibleFraction = 0.5;
constexpr int kPlacementAttempts = 30;
// Smallest object size in pixels, whatever the image size and fractions ask.
constexpr double kMinObjectPixels = 8.0;
constexpr int kColourJitter = 14;
constexpr int kNoiseAmplitude = 10;

using Outline = std::vector<cv::Point2d>;

Outline Arc(double radius, double from, double to, int steps, double dy = 0.0) {
  Outline points;
  for (int i = 0; i <= steps; ++i) {
    const double a = from + (to - from) * i / steps;
    points.emplace_back(radius * std::cos(a), radius * std::sin(a) + dy);
  }
  return points;
}

// The outlines of a shape in unit coordinates (extent about [-1, 1] on each axis): the
// first is filled, the others are cut out of it.
std::vector<Outline> UnitOutlines(SyntheticShape shape) {
  switch (shape) {
    case SyntheticShape::kRectangle:
      return {{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}}};
    case SyntheticShape::kEllipse:
      return {Arc(1.0, 0.0, 2 * kPi, 72)};
    case SyntheticShape::kTriangle:
      return {{{0, -1}, {1, 1}, {-1, 1}}};
    case SyntheticShape::kCross: {
      const double t = 0.34;  // half the bar thickness
      return {{{-t, -1}, {t, -1}, {t, -t}, {1, -t}, {1, t}, {t, t},
               {t, 1}, {-t, 1}, {-t, t}, {-1, t}, {-1, -t}, {-t, -t}}};
    }
    case SyntheticShape::kRing:
      return {Arc(1.0, 0.0, 2 * kPi, 72), Arc(0.55, 0.0, 2 * kPi, 72)};
    case SyntheticShape::kDiamond:
      return {{{0, -1}, {1, 0}, {0, 1}, {-1, 0}}};
    case SyntheticShape::kStar: {
      Outline points;
      for (int i = 0; i < 10; ++i) {
        const double r = i % 2 == 0 ? 1.0 : 0.45;
        const double a = -kPi / 2 + i * kPi / 5;
        points.emplace_back(r * std::cos(a), r * std::sin(a));
      }
      return {points};
    }
    case SyntheticShape::kSemicircle:
      // The upper half of the unit disc, moved down to centre it vertically.
      return {Arc(1.0, kPi, 2 * kPi, 36, 0.5)};
  }
  return {};
}

// How far a shape's aspect ratio varies, and whether it may turn freely. Rectangles,
// crosses and diamonds only tilt a little, so that a tilted square never reads as a diamond.
struct ShapeStyle {
  double max_aspect;
  bool free_rotation;
};

ShapeStyle StyleOf(SyntheticShape shape) {
  switch (shape) {
    case SyntheticShape::kRectangle:
      return {1.8, false};
    case SyntheticShape::kEllipse:
      return {1.8, true};
    case SyntheticShape::kRing:
    case SyntheticShape::kDiamond:
      return {1.6, shape == SyntheticShape::kRing};
    case SyntheticShape::kCross:
      return {1.25, false};
    case SyntheticShape::kTriangle:
    case SyntheticShape::kStar:
    case SyntheticShape::kSemicircle:
      return {1.25, true};
  }
  return {1.0, true};
}

// A shape drawn into its own small mask (255 inside), with a one-pixel empty margin.
cv::Mat DrawShapeMask(SyntheticShape shape, double size, SynthRng& rng) {
  const ShapeStyle style = StyleOf(shape);
  const double aspect = rng.LogUniform(1.0 / style.max_aspect, style.max_aspect);
  const double half_w = 0.5 * size * std::min(1.0, aspect);
  const double half_h = 0.5 * size * std::min(1.0, 1.0 / aspect);
  const double max_tilt = 12.0 * kPi / 180.0;
  const double angle = style.free_rotation ? rng.Uniform(0.0, 2 * kPi) : rng.Uniform(-max_tilt, max_tilt);
  const double c = std::cos(angle), s = std::sin(angle);

  std::vector<Outline> outlines = UnitOutlines(shape);
  for (Outline& outline : outlines) {
    for (cv::Point2d& p : outline) {
      const double x = p.x * half_w, y = p.y * half_h;
      p = {c * x - s * y, s * x + c * y};
    }
  }
  double min_x = 1e300, min_y = 1e300, max_x = -1e300, max_y = -1e300;
  for (const cv::Point2d& p : outlines.front()) {
    min_x = std::min(min_x, p.x);
    min_y = std::min(min_y, p.y);
    max_x = std::max(max_x, p.x);
    max_y = std::max(max_y, p.y);
  }
  const double origin_x = std::floor(min_x) - 1, origin_y = std::floor(min_y) - 1;
  cv::Mat mask = cv::Mat::zeros(static_cast<int>(std::ceil(max_y) - origin_y) + 2,
                                static_cast<int>(std::ceil(max_x) - origin_x) + 2, CV_8UC1);
  for (size_t i = 0; i < outlines.size(); ++i) {
    std::vector<std::vector<cv::Point>> fixed(1);
    for (const cv::Point2d& p : outlines[i]) {
      fixed[0].emplace_back(cvRound((p.x - origin_x) * kFixedPointScale),
                            cvRound((p.y - origin_y) * kFixedPointScale));
    }
    cv::fillPoly(mask, fixed, cv::Scalar(i == 0 ? 255 : 0), cv::LINE_8, kFixedPointBits);
  }
  return mask;
}

// A muted, blotchy grey background with a few thin distractor lines.
void PaintBackground(cv::Mat& rgb, SynthRng& rng) {
  const int level = rng.UniformInt(70, 160);
  int base[3];
  for (int& b : base) b = level + rng.UniformInt(-15, 15);
  cv::Mat grid(rng.UniformInt(2, 8), rng.UniformInt(2, 8), CV_8UC3);
  for (int y = 0; y < grid.rows; ++y) {
    for (int x = 0; x < grid.cols; ++x) {
      cv::Vec3b& cell = grid.at<cv::Vec3b>(y, x);
      for (int ch = 0; ch < 3; ++ch) cell[ch] = cv::saturate_cast<uint8_t>(base[ch] + rng.UniformInt(-30, 30));
    }
  }
  cv::resize(grid, rgb, rgb.size(), 0, 0, cv::INTER_CUBIC);

  const int lines = rng.UniformInt(0, 4);
  for (int i = 0; i < lines; ++i) {
    const cv::Point from(rng.UniformInt(0, rgb.cols - 1), rng.UniformInt(0, rgb.rows - 1));
    const cv::Point to(rng.UniformInt(0, rgb.cols - 1), rng.UniformInt(0, rgb.rows - 1));
    const int grey = rng.UniformInt(50, 190);
    const cv::Scalar colour(grey + rng.UniformInt(-10, 10), grey + rng.UniformInt(-10, 10),
                            grey + rng.UniformInt(-10, 10));
    cv::line(rgb, from, to, colour, rng.UniformInt(1, 3), cv::LINE_AA);
  }
}

void AddNoise(cv::Mat& rgb, SynthRng& rng) {
  CV_Assert(rgb.isContinuous());
  uint8_t* p = rgb.data;
  const size_t n = rgb.total() * rgb.elemSize();
  for (size_t i = 0; i < n; i += 8) {
    uint64_t bits = rng.Next();
    for (size_t j = i; j < std::min(n, i + 8); ++j, bits >>= 8) {
      const int delta = static_cast<int>((bits & 0xff) % (2 * kNoiseAmplitude + 1)) - kNoiseAmplitude;
      p[j] = cv::saturate_cast<uint8_t>(p[j] + delta);
    }
  }
}

// Tries to place one object of class `class_index`; on success draws it into the scene,
// marks its pixels in the object map and takes them off the objects it covers.
bool PlaceObject(const SyntheticSceneSpec& spec, int class_index, SynthRng& rng, SyntheticScene* scene) {
  const SyntheticClass& cls = GetSyntheticClass(class_index);
  const double side = std::min(spec.width, spec.height);
  const double min_size = std::max(kMinObjectPixels, spec.min_object_fraction * side);
  const double max_size = std::max(min_size, spec.max_object_fraction * side);
  std::vector<SyntheticObject>& objects = scene->objects;

  for (int attempt = 0; attempt < kPlacementAttempts; ++attempt) {
    const cv::Mat mask = DrawShapeMask(cls.shape, rng.LogUniform(min_size, max_size), rng);
    if (mask.cols > spec.width || mask.rows > spec.height) continue;
    const cv::Rect roi(rng.UniformInt(0, spec.width - mask.cols), rng.UniformInt(0, spec.height - mask.rows),
                       mask.cols, mask.rows);
    cv::Mat owners = scene->object_map(roi);

    std::vector<int64_t> covered(objects.size(), 0);
    int64_t drawn = 0;
    for (int y = 0; y < mask.rows; ++y) {
      const uint8_t* m = mask.ptr<uint8_t>(y);
      const uint16_t* o = owners.ptr<uint16_t>(y);
      for (int x = 0; x < mask.cols; ++x) {
        if (!m[x]) continue;
        ++drawn;
        if (o[x]) ++covered[o[x] - 1];
      }
    }
    bool keeps_others_visible = true;
    for (size_t k = 0; k < objects.size(); ++k) {
      if (objects[k].area - covered[k] < kMinVisibleFraction * objects[k].drawn_area) keeps_others_visible = false;
    }
    if (drawn == 0 || !keeps_others_visible) continue;

    for (size_t k = 0; k < objects.size(); ++k) objects[k].area -= covered[k];
    SyntheticObject object;
    object.class_index = class_index;
    object.area = object.drawn_area = drawn;
    objects.push_back(object);
    owners.setTo(cv::Scalar(static_cast<double>(objects.size())), mask);
    cv::Scalar colour;
    for (int ch = 0; ch < 3; ++ch) colour[ch] = std::clamp(cls.rgb[ch] + rng.UniformInt(-kColourJitter, kColourJitter), 0, 255);
    scene->rgb(roi).setTo(colour, mask);
    return true;
  }
  return false;
}

// Sets each object's box and polygons from the pixels it owns in the final object map.
void Annotate(SyntheticScene* scene) {
  std::vector<SyntheticObject>& objects = scene->objects;
  std::vector<cv::Point> lo(objects.size(), cv::Point(scene->object_map.cols, scene->object_map.rows));
  std::vector<cv::Point> hi(objects.size(), cv::Point(-1, -1));
  for (int y = 0; y < scene->object_map.rows; ++y) {
    const uint16_t* o = scene->object_map.ptr<uint16_t>(y);
    for (int x = 0; x < scene->object_map.cols; ++x) {
      if (!o[x]) continue;
      const int k = o[x] - 1;
      lo[k] = {std::min(lo[k].x, x), std::min(lo[k].y, y)};
      hi[k] = {std::max(hi[k].x, x), std::max(hi[k].y, y)};
    }
  }
  for (size_t k = 0; k < objects.size(); ++k) {
    SyntheticObject& object = objects[k];
    object.x = lo[k].x;
    object.y = lo[k].y;
    object.width = hi[k].x - lo[k].x + 1;
    object.height = hi[k].y - lo[k].y + 1;

    const cv::Rect box(object.x, object.y, object.width, object.height);
    cv::Mat visible;
    cv::compare(scene->object_map(box), cv::Scalar(static_cast<double>(k + 1)), visible, cv::CMP_EQ);
    std::vector<std::vector<cv::Point>> contours;
    cv::findContours(visible, contours, cv::RETR_EXTERNAL, cv::CHAIN_APPROX_SIMPLE, box.tl());
    for (const std::vector<cv::Point>& contour : contours) {
      if (contour.size() < 3) continue;  // a sliver; COCO polygons need 3 vertices
      std::vector<double>& polygon = object.polygons.emplace_back();
      for (const cv::Point& p : contour) {
        polygon.push_back(p.x + 0.5);
        polygon.push_back(p.y + 0.5);
      }
    }
    if (object.polygons.empty()) {
      const double x0 = box.x, y0 = box.y, x1 = box.x + box.width, y1 = box.y + box.height;
      object.polygons.push_back({x0, y0, x1, y0, x1, y1, x0, y1});
    }
  }
}

}  // namespace

SyntheticScene RenderSyntheticScene(const SyntheticSceneSpec& spec) {
  SynthRng rng(spec.seed);
  SyntheticScene scene;
  scene.rgb.create(spec.height, spec.width, CV_8UC3);
  scene.object_map = cv::Mat::zeros(spec.height, spec.width, CV_16UC1);
  PaintBackground(scene.rgb, rng);
  if (!spec.background_only) {
    const int wanted = rng.UniformInt(1, spec.max_objects);
    for (int i = 0; i < wanted; ++i) PlaceObject(spec, rng.UniformInt(0, spec.num_classes - 1), rng, &scene);
    Annotate(&scene);
  }
  AddNoise(scene.rgb, rng);
  return scene;
}

}  // namespace ffyolo
