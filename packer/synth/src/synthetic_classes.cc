#include "ffyolo/synthetic_classes.h"

#include <vector>

namespace ffyolo {

namespace {

struct ShapeInfo {
  SyntheticShape shape;
  const char* name;
};

struct ColourInfo {
  const char* name;
  std::array<uint8_t, 3> rgb;
};

// Saturated or bright colours: the backgrounds are muted greys, so every object stands out.
constexpr ColourInfo kColours[] = {
    {"red", {220, 40, 40}},     {"green", {40, 190, 60}},    {"blue", {40, 80, 230}},
    {"yellow", {235, 215, 40}}, {"cyan", {40, 210, 220}},    {"magenta", {210, 50, 200}},
    {"orange", {245, 140, 30}}, {"white", {245, 245, 245}},
};

constexpr ShapeInfo kShapes[] = {
    {SyntheticShape::kRectangle, "rectangle"}, {SyntheticShape::kEllipse, "ellipse"},
    {SyntheticShape::kTriangle, "triangle"},   {SyntheticShape::kCross, "cross"},
    {SyntheticShape::kRing, "ring"},           {SyntheticShape::kDiamond, "diamond"},
    {SyntheticShape::kStar, "star"},           {SyntheticShape::kSemicircle, "semicircle"},
};

constexpr int kNumShapes = sizeof(kShapes) / sizeof(kShapes[0]);
constexpr int kNumColours = sizeof(kColours) / sizeof(kColours[0]);
static_assert(kNumShapes == kNumColours, "the Latin-square pairing needs as many colours as shapes");

std::vector<SyntheticClass> BuildCatalogue() {
  std::vector<SyntheticClass> classes;
  for (int index = 0; index < kNumShapes * kNumColours; ++index) {
    // Row r of the Latin square pairs shape s with colour s + r: all pairs are distinct
    // and the first row uses each shape and each colour once.
    const int s = index % kNumShapes;
    const int row = index / kNumShapes;
    const ShapeInfo& shape = kShapes[s];
    const ColourInfo& colour = kColours[(s + row) % kNumColours];
    // Ids 1, 2, 4, 5, 7, ...: every third id is unused, like the gaps of COCO's 91 ids.
    const int category_id = index + 1 + index / 2;
    classes.push_back(SyntheticClass{std::string(colour.name) + "_" + shape.name, shape.name,
                                     shape.shape, colour.rgb, category_id});
  }
  return classes;
}

const std::vector<SyntheticClass>& Catalogue() {
  static const std::vector<SyntheticClass> classes = BuildCatalogue();
  return classes;
}

}  // namespace

int MaxSyntheticClasses() { return static_cast<int>(Catalogue().size()); }

const SyntheticClass& GetSyntheticClass(int index) { return Catalogue().at(index); }

}  // namespace ffyolo
