// The class catalogue of the synthetic shapes dataset. Every class is a distinct
// (shape, colour) pair, so that a small detector trained from scratch learns it in
// minutes, and category ids have gaps, as in COCO, so that a packer must map them.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace ffyolo {

enum class SyntheticShape {
  kRectangle,
  kEllipse,
  kTriangle,
  kCross,
  kRing,
  kDiamond,
  kStar,
  kSemicircle,
};

struct SyntheticClass {
  std::string name;        // "<colour>_<shape>", e.g. "red_rectangle"
  std::string shape_name;  // "rectangle"; the COCO supercategory
  SyntheticShape shape;
  std::array<uint8_t, 3> rgb;  // nominal colour, before the per-object jitter
  int category_id;             // COCO category id: increasing with the index, with gaps
};

// How many classes the catalogue holds (shapes x colours).
int MaxSyntheticClasses();

// Class `index`, 0 <= index < MaxSyntheticClasses(). Among the first 8 classes every
// shape and every colour occurs once, so a small class count is separable by either cue.
const SyntheticClass& GetSyntheticClass(int index);

}  // namespace ffyolo
