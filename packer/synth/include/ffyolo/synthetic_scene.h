// One synthetic image rendered in memory with its exact annotations: shapes of the
// class catalogue on a textured, noisy background. The dataset generator encodes these
// scenes; tests check the boxes against the drawn pixels before any JPEG loss.
#pragma once

#include <cstdint>
#include <vector>

#include <opencv2/core.hpp>

namespace ffyolo {

struct SyntheticSceneSpec {
  int width = 320;   // >= 1
  int height = 320;  // >= 1
  int num_classes = 8;  // classes 0..num_classes-1 of the catalogue, <= MaxSyntheticClasses()
  int max_objects = 8;  // the scene asks for 1..max_objects objects
  bool background_only = false;  // no objects at all
  // Object size (its longer side before rotation) relative to min(width, height).
  double min_object_fraction = 0.05;
  double max_object_fraction = 0.5;
  uint64_t seed = 0;
};

struct SyntheticObject {
  int class_index = 0;  // index into the catalogue (GetSyntheticClass)
  // Tight box of the visible pixels: columns [x, x + width), rows [y, y + height).
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
  int64_t area = 0;         // visible pixels, after occlusion by later objects
  int64_t drawn_area = 0;   // pixels of the shape before any occlusion
  // COCO polygons [x1, y1, x2, y2, ...] through the centres of the outline pixels of
  // each visible part (holes, as in a ring, are not cut out).
  std::vector<std::vector<double>> polygons;
};

struct SyntheticScene {
  cv::Mat rgb;         // CV_8UC3, channels in R, G, B order
  cv::Mat object_map;  // CV_16UC1: 0 for background, k + 1 where objects[k] is visible
  std::vector<SyntheticObject> objects;  // in drawing order, later ones on top
};

// Renders the scene that `spec` describes; the result depends on `spec` only.
// Objects are placed so that every one keeps at least half of its pixels visible;
// a requested object that finds no such place within a few tries is left out.
SyntheticScene RenderSyntheticScene(const SyntheticSceneSpec& spec);

}  // namespace ffyolo
