// The in-memory scenes: boxes and areas checked against the drawn object map, before
// any JPEG loss, plus the class catalogue the scenes draw from.
#include "ffyolo/synthetic_scene.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <utility>

#include "ffyolo/synthetic_classes.h"

namespace ffyolo {
namespace {

SyntheticSceneSpec SpecForSeed(uint64_t seed) {
  SyntheticSceneSpec spec;
  spec.width = 72 + static_cast<int>(seed % 5) * 23;
  spec.height = 64 + static_cast<int>(seed % 3) * 31;
  spec.num_classes = MaxSyntheticClasses();
  spec.max_objects = 10;
  spec.seed = seed;
  return spec;
}

TEST(SyntheticClassesTest, ClassesAreDistinctShapeColourPairsWithGappedIds) {
  ASSERT_GE(MaxSyntheticClasses(), 20);
  std::set<std::string> names;
  std::set<std::pair<SyntheticShape, std::array<uint8_t, 3>>> pairs;
  for (int c = 0; c < MaxSyntheticClasses(); ++c) {
    const SyntheticClass& cls = GetSyntheticClass(c);
    EXPECT_TRUE(names.insert(cls.name).second) << cls.name;
    EXPECT_TRUE(pairs.insert({cls.shape, cls.rgb}).second) << cls.name;
    EXPECT_EQ(cls.name.substr(cls.name.size() - cls.shape_name.size()), cls.shape_name);
    if (c > 0) {
      EXPECT_GT(cls.category_id, GetSyntheticClass(c - 1).category_id);
    }
  }
  EXPECT_GT(GetSyntheticClass(7).category_id, 8) << "ids of the default 8 classes must have gaps";
  std::set<SyntheticShape> shapes;
  std::set<std::array<uint8_t, 3>> colours;
  for (int c = 0; c < 8; ++c) {
    shapes.insert(GetSyntheticClass(c).shape);
    colours.insert(GetSyntheticClass(c).rgb);
  }
  EXPECT_EQ(shapes.size(), 8u);
  EXPECT_EQ(colours.size(), 8u);
}

TEST(SyntheticSceneTest, BoxesAndAreasAreExactOnTheObjectMap) {
  int objects = 0;
  for (uint64_t seed = 0; seed < 25; ++seed) {
    const SyntheticSceneSpec spec = SpecForSeed(seed);
    const SyntheticScene scene = RenderSyntheticScene(spec);
    ASSERT_EQ(scene.rgb.type(), CV_8UC3);
    ASSERT_EQ(scene.object_map.type(), CV_16UC1);
    ASSERT_EQ(scene.rgb.size(), cv::Size(spec.width, spec.height));
    ASSERT_EQ(scene.object_map.size(), scene.rgb.size());

    const size_t n = scene.objects.size();
    std::vector<int64_t> count(n, 0);
    std::vector<int> min_x(n, spec.width), min_y(n, spec.height), max_x(n, -1), max_y(n, -1);
    for (int y = 0; y < spec.height; ++y) {
      for (int x = 0; x < spec.width; ++x) {
        const int owner = scene.object_map.at<uint16_t>(y, x);
        if (owner == 0) continue;
        ASSERT_LE(owner, static_cast<int>(n)) << "seed " << seed;
        const int k = owner - 1;
        ++count[k];
        min_x[k] = std::min(min_x[k], x);
        min_y[k] = std::min(min_y[k], y);
        max_x[k] = std::max(max_x[k], x);
        max_y[k] = std::max(max_y[k], y);
      }
    }
    for (size_t k = 0; k < n; ++k) {
      const SyntheticObject& o = scene.objects[k];
      SCOPED_TRACE("seed " + std::to_string(seed) + " object " + std::to_string(k));
      ++objects;
      EXPECT_GE(o.class_index, 0);
      EXPECT_LT(o.class_index, spec.num_classes);
      EXPECT_EQ(o.area, count[k]);
      EXPECT_GE(2 * o.area, o.drawn_area) << "occluded by more than half";
      // The visible pixels lie inside the box and touch each of its four edges.
      EXPECT_EQ(o.x, min_x[k]);
      EXPECT_EQ(o.y, min_y[k]);
      EXPECT_EQ(o.x + o.width - 1, max_x[k]);
      EXPECT_EQ(o.y + o.height - 1, max_y[k]);
      ASSERT_FALSE(o.polygons.empty());
      for (const std::vector<double>& polygon : o.polygons) {
        ASSERT_GE(polygon.size(), 6u);
        ASSERT_EQ(polygon.size() % 2, 0u);
        for (size_t i = 0; i < polygon.size(); i += 2) {
          EXPECT_GE(polygon[i], o.x);
          EXPECT_LE(polygon[i], o.x + o.width);
          EXPECT_GE(polygon[i + 1], o.y);
          EXPECT_LE(polygon[i + 1], o.y + o.height);
        }
      }
    }
  }
  EXPECT_GE(objects, 50) << "scenes asking for up to 10 objects came out nearly empty";
}

TEST(SyntheticSceneTest, ObjectsCarryTheirClassColour) {
  for (uint64_t seed = 0; seed < 10; ++seed) {
    const SyntheticScene scene = RenderSyntheticScene(SpecForSeed(seed));
    for (size_t k = 0; k < scene.objects.size(); ++k) {
      cv::Mat visible;
      cv::compare(scene.object_map, cv::Scalar(static_cast<double>(k + 1)), visible, cv::CMP_EQ);
      const cv::Scalar mean = cv::mean(scene.rgb, visible);
      const SyntheticClass& cls = GetSyntheticClass(scene.objects[k].class_index);
      for (int ch = 0; ch < 3; ++ch) {
        EXPECT_NEAR(mean[ch], cls.rgb[ch], 20.0) << "seed " << seed << " object " << k << " " << cls.name;
      }
    }
  }
}

TEST(SyntheticSceneTest, ObjectSizesSpanTheRequestedRange) {
  SyntheticSceneSpec spec;
  spec.width = spec.height = 200;
  double smallest = 1.0, largest = 0.0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    spec.seed = seed;
    for (const SyntheticObject& o : RenderSyntheticScene(spec).objects) {
      const double side = std::max(o.width, o.height) / 200.0;
      smallest = std::min(smallest, side);
      largest = std::max(largest, side);
    }
  }
  EXPECT_LT(smallest, 0.1);
  EXPECT_GT(largest, 0.35);
  EXPECT_LE(largest, 0.5 * 1.5) << "a rotated object spans at most its size times sqrt(2)";
}

TEST(SyntheticSceneTest, SameSpecGivesSamePixelsAndOtherSeedsDiffer) {
  const SyntheticScene a = RenderSyntheticScene(SpecForSeed(3));
  const SyntheticScene b = RenderSyntheticScene(SpecForSeed(3));
  SyntheticSceneSpec other_spec = SpecForSeed(3);
  other_spec.seed = 4;
  const SyntheticScene other = RenderSyntheticScene(other_spec);
  EXPECT_EQ(cv::norm(a.rgb, b.rgb, cv::NORM_INF), 0.0);
  EXPECT_EQ(cv::norm(a.object_map, b.object_map, cv::NORM_INF), 0.0);
  ASSERT_EQ(a.objects.size(), b.objects.size());
  for (size_t k = 0; k < a.objects.size(); ++k) EXPECT_EQ(a.objects[k].polygons, b.objects[k].polygons);
  EXPECT_GT(cv::norm(a.rgb, other.rgb, cv::NORM_L1), 0.0);
}

TEST(SyntheticSceneTest, BackgroundOnlySceneHasNoObjects) {
  SyntheticSceneSpec spec = SpecForSeed(1);
  spec.background_only = true;
  const SyntheticScene scene = RenderSyntheticScene(spec);
  EXPECT_TRUE(scene.objects.empty());
  EXPECT_EQ(cv::countNonZero(scene.object_map), 0);
  cv::Scalar mean, stddev;
  cv::meanStdDev(scene.rgb, mean, stddev);
  EXPECT_GT(stddev[0], 2.0) << "the background is textured and noisy, not flat";
}

}  // namespace
}  // namespace ffyolo
