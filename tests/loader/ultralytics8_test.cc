// The `ultralytics8` augmentation mode: its operators alone, and against the
// `ultralytics` package 8.4 itself (tests/loader/ultralytics8_reference.py in
// .venv-u8, fed the same uniforms; skipped without it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>

#include "ffyolo/boxes.h"
#include "ffyolo/cutmix.h"
#include "ffyolo/dataset.h"
#include "ffyolo/loader.h"
#include "ffyolo/pack.h"
#include "ffyolo/hsv.h"
#include "ffyolo/letterbox.h"
#include "ffyolo/mosaic_buffer.h"
#include "ffyolo/perspective.h"
#include "ffyolo/random.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

using nlohmann::json;

// Runs ultralytics8_reference.py MODE on `in` in `dir`; its output, or null after a failure.
json RunReferenceIn(const testing::ScratchDir& dir, const std::string& python, const std::string& mode,
                    const json& in) {
  const std::string in_path = dir / (mode + ".json"), out_path = dir / (mode + ".out.json"), log = dir / "log";
  if (!testing::WriteStringToFile(in_path, in.dump())) return json();
  const std::string command = python + " " + testing::SourcePath("tests/loader/ultralytics8_reference.py") + " " +
                              mode + " " + in_path + " " + out_path + " > " + log + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    ADD_FAILURE() << command << " failed:\n" << testing::ReadFileToString(log);
    return json();
  }
  return json::parse(testing::ReadFileToString(out_path));
}

// Runs ultralytics8_reference.py MODE on `in` in a scratch folder; its output, or null after a failure.
json RunReference(const std::string& python, const std::string& mode, const json& in) {
  testing::ScratchDir dir("u8_" + mode);
  return RunReferenceIn(dir, python, mode, in);
}

// The first `n` uniforms of a SampleRandom with `key`.
std::vector<double> Uniforms(std::initializer_list<uint64_t> key, int n) {
  SampleRandom rng(key);
  std::vector<double> u;
  for (int i = 0; i < n; ++i) u.push_back(rng.Uniform());
  return u;
}

TEST(MosaicBufferTest, MaxLengthIsBaseDatasets) {
  EXPECT_EQ(MosaicBuffer::MaxLength(50, 16), 50u);
  EXPECT_EQ(MosaicBuffer::MaxLength(5000, 16), 128u);
  EXPECT_EQ(MosaicBuffer::MaxLength(5000, 256), 1000u);
}

TEST(MosaicBufferTest, HoldsDistinctRecentLoadsOneFewerThanItsLength) {
  MosaicBuffer buffer(4);
  for (int64_t i : {7, 8, 7, 9}) buffer.Load(i);  // 7 again: served from memory, not appended
  EXPECT_EQ(buffer.entries(), (std::deque<int64_t>{7, 8, 9}));
  buffer.Load(10);  // reaches 4: the oldest goes
  EXPECT_EQ(buffer.entries(), (std::deque<int64_t>{8, 9, 10}));
  buffer.Load(7);  // 7 was dropped, so it is read again and appended
  EXPECT_EQ(buffer.entries(), (std::deque<int64_t>{9, 10, 7}));
  EXPECT_EQ(buffer.Choose(0.0), 9);
  EXPECT_EQ(buffer.Choose(0.999), 7);
  MosaicBuffer one(1);  // never empties itself
  one.Load(3);
  one.Load(4);
  EXPECT_EQ(one.entries(), (std::deque<int64_t>{4}));
}

// 400 images in a shuffled order, batches of 4 over 2 workers.
SampleDrawsPlan ShuffledPlanOf400() {
  SampleDrawsPlan plan;
  for (int64_t i = 0; i < 400; ++i) plan.positions.push_back((i * 37) % 400);
  plan.dataset_size = 400;
  plan.batch_size = 4;
  plan.workers = 2;
  return plan;
}

TEST(SampleDrawsTest, TilesComeFromRecentLoadsOfTheSameWorker) {
  SampleDrawsPlan plan = ShuffledPlanOf400();
  const std::vector<SampleDraws> draws = PlanSampleDraws(plan);
  ASSERT_EQ(draws.size(), 400u);
  // Worker w made batches w, w + 2, ...: a tile is an image loaded at most 31 loads back in that worker, where
  // a mosaic loads up to 4 images: within the last 8 of its batches, never another worker's.
  for (size_t p = 0; p < draws.size(); ++p) {
    ASSERT_TRUE(draws[p].mosaic);
    EXPECT_FALSE(draws[p].mixup.applied);
    for (int64_t t : draws[p].partners) {
      bool found = false;
      for (int64_t q = static_cast<int64_t>(p); q >= 0 && q >= static_cast<int64_t>(p) - 64 && !found; --q) {
        if ((q / 4) % 2 != (static_cast<int64_t>(p) / 4) % 2) continue;
        found = plan.positions[q] == t || (q < static_cast<int64_t>(p) &&
                                           std::count(draws[q].partners.begin(), draws[q].partners.end(), t) > 0);
      }
      EXPECT_TRUE(found) << "position " << p << " tile " << t;
    }
  }
}

// Without the buffer (Ultralytics' cache='ram'), a tile is any image of the dataset: most were never loaded in
// the last 64 positions, and together they reach far beyond one buffer's 32 images.
TEST(SampleDrawsTest, WithoutTheBufferTilesAreAnyImages) {
  SampleDrawsPlan plan;
  for (int64_t i = 0; i < 400; ++i) plan.positions.push_back(i);
  plan.dataset_size = 400;
  plan.batch_size = 4;
  plan.buffer = false;
  const std::vector<SampleDraws> draws = PlanSampleDraws(plan);
  std::set<int64_t> tiles;
  int64_t ahead = 0;  // tiles not yet loaded at their position: never in a buffer
  for (size_t p = 0; p < draws.size(); ++p) {
    ASSERT_TRUE(draws[p].mosaic);
    for (int64_t t : draws[p].partners) {
      tiles.insert(t);
      ahead += t > static_cast<int64_t>(p);
    }
  }
  EXPECT_GT(tiles.size(), 300u);
  EXPECT_GT(ahead, 400);
}

TEST(Ultralytics8Test, LoadResizeRoundsUpAndAlwaysInterpolatesLinearly) {
  EXPECT_EQ(LoadResizeSize(581, 300, 640), cv::Size(639, 330));  // YOLOv5 truncates 639.99...
  EXPECT_EQ(LoadResizeSize(581, 300, 640, Augmentation::kUltralytics8), cv::Size(640, 331));
  EXPECT_EQ(LoadResizeInterpolation(false, 1280, 960, 640), cv::INTER_AREA);
  EXPECT_EQ(LoadResizeInterpolation(false, 1280, 960, 640, Augmentation::kUltralytics8), cv::INTER_LINEAR);
}

TEST(Ultralytics8Test, ShiftedHueWrapsAndKeepsYolov5sSaturationAndValue) {
  const HsvLuts luts = BuildShiftedHueLuts({-0.01, 0.3, -0.2});
  const HsvLuts v5 = BuildHsvLuts({1, 1.3, 0.8});
  EXPECT_EQ(luts.s, v5.s);
  EXPECT_EQ(luts.v, v5.v);
  EXPECT_EQ(luts.h[0], 178);  // (0 - 1.8) % 180 = 178.2
  EXPECT_EQ(luts.h[2], 0);    // 0.2
  EXPECT_EQ(luts.h[100], 98);
}

TEST(Ultralytics8Test, ZeroAreaBoxesAreRemoved) {
  std::vector<PixelBox> boxes = {{1, 0, 0, 0, 5}, {2, 1, 1, 3, 3}, {3, 4, 4, 4, 4}};
  RemoveZeroAreaBoxes(&boxes);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].cls, 2);
}

// --- Against Ultralytics 8 ---------------------------------------------------------------------------------

TEST(SampleDrawsTest, DecodeSpansJoinAnImagesOverlappingOrCloseRunsFromTheirReads) {
  // Batches of one over two workers: positions 0, 2, 4 in worker 0, 1, 3, 5 in worker 1. Image 7 is read by
  // worker 0 at 0 and loaded again at 2 (held), read by worker 1 at 1 (overlapping: one span), and read again by
  // worker 0 at 4 (after the span: another). Image 8 is read at 0 by worker 0 and first loaded by worker 1 at 5
  // (held there from before, say): two runs apart, two spans. Image 9 once. An empty dataset's buffers have no
  // length, so runs join only where they overlap.
  SampleDrawsPlan plan;
  plan.batch_size = 1;
  plan.workers = 2;
  const std::vector<std::vector<ImageLoad>> loads = {
      {{7, true}, {8, true}}, {{7, true}}, {{7, false}}, {{9, true}}, {{7, true}}, {{8, false}}};
  const auto planned = [&](int64_t first_position, std::vector<SampleDraws>* draws) {
    draws->assign(loads.size(), SampleDraws());
    for (size_t p = 0; p < loads.size(); ++p) (*draws)[p].loads = loads[p];
    return PlanDecodeSpans(plan, first_position, draws);
  };
  std::vector<SampleDraws> d;
  std::vector<int32_t> samples = planned(0, &d);
  ASSERT_EQ(samples.size(), 5u);
  const auto span = [&](int p, int k) { return d[p].loads[k].span; };
  EXPECT_EQ(span(0, 0), span(1, 0));
  EXPECT_EQ(span(0, 0), span(2, 0));
  EXPECT_EQ(samples[span(0, 0)], 3);
  EXPECT_NE(span(4, 0), span(0, 0));
  EXPECT_NE(span(5, 0), span(0, 1));
  EXPECT_EQ(samples[span(4, 0)], 1);
  EXPECT_EQ(d[0].Spans(), (std::vector<int32_t>{span(0, 0), span(0, 1)}));
  EXPECT_EQ(d[3].SpanOf(9), span(3, 0));
  EXPECT_EQ(d[3].SpanOf(7), -1);
  // Resumed at position 2: nothing before is planned, and 7's load at 2 (held since before) opens a run.
  samples = planned(2, &d);
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(span(0, 0), -1);
  EXPECT_EQ(span(1, 0), -1);
  EXPECT_NE(span(2, 0), span(4, 0));
  for (int32_t s : samples) EXPECT_EQ(s, 1);
  // Buffers of length 2 (2 images): 7's read at 4 comes 2 positions after its span's last sample, so it joins it
  // rather than decode 7 again; 8's runs at 0 and 5 are 5 apart and stay two.
  plan.dataset_size = 2;
  samples = planned(0, &d);
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(span(4, 0), span(0, 0));
  EXPECT_EQ(samples[span(0, 0)], 4);
  EXPECT_NE(span(5, 0), span(0, 1));
}

TEST(SampleDrawsTest, DecodeSpansCountTheSamplesThatLoadThem) {
  SampleDrawsPlan plan = ShuffledPlanOf400();
  plan.mixup = 0.3;
  std::vector<SampleDraws> draws = PlanSampleDraws(plan);
  const std::vector<int32_t> samples = PlanDecodeSpans(plan, 0, &draws);
  std::vector<int32_t> counted(samples.size(), 0);
  std::vector<int64_t> image(samples.size(), -1);
  int64_t reads = 0;
  for (const SampleDraws& d : draws) {
    for (const ImageLoad& l : d.loads) {
      ASSERT_GE(l.span, 0);
      if (image[l.span] < 0) image[l.span] = l.index;
      EXPECT_EQ(image[l.span], l.index);  // a span is one image's
      reads += l.read;
    }
    for (int32_t s : d.Spans()) ++counted[s];
  }
  EXPECT_EQ(counted, samples);
  // From empty buffers a run starts at a read: no more spans than Ultralytics' reads, and far fewer than loads.
  EXPECT_LE(static_cast<int64_t>(samples.size()), reads);
  EXPECT_LT(static_cast<double>(samples.size()), 0.5 * 4 * draws.size());
}

TEST(Ultralytics8ReferenceTest, MosaicBufferMixUpAndCutMixNameTheImagesUltralyticsLoads) {
  FFYOLO_REQUIRE_ULTRALYTICS8(python);
  SampleRandom sizes_rng({11});
  std::vector<std::vector<int>> sizes;
  const int n = 30;
  for (int i = 0; i < n; ++i)
    sizes.push_back({20 + static_cast<int>(sizes_rng.Below(120)), 20 + static_cast<int>(sizes_rng.Below(120))});
  SampleDrawsPlan plan;
  plan.dataset_size = n;
  plan.batch_size = 3;  // max length 24 < n: the buffer drops images
  plan.workers = 2;
  plan.mosaic = 0.8;
  plan.mixup = 0.4;
  plan.cutmix = 0.4;
  plan.seed = 5;
  plan.epoch = 1;
  for (int64_t i = 0; i < n; ++i) {
    plan.previous_positions.push_back((i * 7) % n);
    plan.positions.push_back((i * 11 + 3) % n);
  }
  json epochs = json::array();
  for (int64_t e : {plan.epoch - 1, plan.epoch}) {
    const std::vector<int64_t>& positions = e == plan.epoch ? plan.positions : plan.previous_positions;
    json uniforms = json::array();
    for (size_t p = 0; p < positions.size(); ++p)
      uniforms.push_back(Uniforms({plan.seed, static_cast<uint64_t>(e), plan.rank, p, kSampleDrawsStream}, 24));
    epochs.push_back({{"positions", positions}, {"uniforms", uniforms}});
  }
  const json ref = RunReference(python, "draws",
                                {{"sizes", sizes}, {"imgsz", 64}, {"batch", plan.batch_size},
                                 {"workers", plan.workers}, {"mosaic", plan.mosaic}, {"mixup", plan.mixup},
                                 {"cutmix", plan.cutmix},
                                 {"max_buffer_length", MosaicBuffer::MaxLength(n, plan.batch_size)},
                                 {"epochs", epochs}});
  ASSERT_FALSE(ref.is_null());
  const std::vector<SampleDraws> draws = PlanSampleDraws(plan);
  int mosaics = 0, mixups = 0, cutmixes = 0, reads = 0, loaded = 0;
  for (size_t p = 0; p < draws.size(); ++p) {
    const SampleDraws& d = draws[p];
    std::vector<int64_t> named = {plan.positions[p]};
    if (d.mosaic) named.insert(named.end(), d.partners.begin(), d.partners.end());
    for (const MixedImage* m : {&d.mixup, &d.cutmix}) {
      if (m->applied) named.push_back(m->index);
      if (m->mosaic) named.insert(named.end(), m->partners.begin(), m->partners.end());
    }
    // The loads, whether each read its image (what the decoded image store plans from), and the images named.
    json loads = json::array();
    for (const ImageLoad& l : d.loads) loads.push_back({l.index, l.read});
    EXPECT_EQ(loads, ref["epochs"][1][p]) << "position " << p;
    ASSERT_EQ(d.loads.size(), named.size()) << "position " << p;
    for (size_t k = 0; k < named.size(); ++k) EXPECT_EQ(d.loads[k].index, named[k]) << "position " << p;
    mosaics += d.mosaic;
    mixups += d.mixup.applied;
    cutmixes += d.cutmix.applied;
    for (const ImageLoad& l : d.loads) reads += l.read;
    loaded += static_cast<int>(d.loads.size());
  }
  EXPECT_GT(reads, 0);  // loads of both kinds
  EXPECT_LT(reads, loaded);
  EXPECT_GT(mosaics, 10);  // the case exercises both branches of both
  EXPECT_LT(mosaics, n);
  EXPECT_GT(mixups, 3);
  EXPECT_LT(mixups, n);
  EXPECT_GT(cutmixes, 3);
  EXPECT_LT(cutmixes, n);
  for (int i = 0; i < n; ++i) {
    if (ref["sizes"][i].is_null()) continue;  // never loaded
    EXPECT_EQ(LoadResizeSize(sizes[i][0], sizes[i][1], 64, Augmentation::kUltralytics8),
              cv::Size(ref["sizes"][i][0].get<int>(), ref["sizes"][i][1].get<int>()))
        << sizes[i][0] << "x" << sizes[i][1];
  }
}

TEST(Ultralytics8ReferenceTest, PerspectiveMatrixAndBoxesAreRandomPerspectives) {
  FFYOLO_REQUIRE_ULTRALYTICS8(python);
  struct Case {
    PerspectiveHyp hyp;
    int in_w, in_h, out_w, out_h;
  };
  std::vector<Case> cases;
  SampleRandom pick({21});
  for (int i = 0; i < 60; ++i) {
    Case c;
    c.hyp.translate = 0.1;
    c.hyp.scale = 0.5;
    if (i % 3 == 1) c.hyp.degrees = 30, c.hyp.shear = 10;
    if (i % 3 == 2) c.hyp.degrees = 10, c.hyp.perspective = 0.0005;
    c.out_w = c.out_h = i % 2 ? 640 : 320;
    c.in_w = i % 4 < 2 ? 2 * c.out_w : 100 + static_cast<int>(pick.Below(600));  // mosaic canvas, or one image
    c.in_h = i % 4 < 2 ? 2 * c.out_h : 100 + static_cast<int>(pick.Below(600));
    cases.push_back(c);
  }
  json in = json::array();
  std::vector<std::vector<PixelBox>> boxes(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::vector<float> flat;
    for (int k = 0; k < 40; ++k) {
      PixelBox b;
      b.cls = k;
      b.x1 = static_cast<float>(pick.Uniform(-20, c.in_w));
      b.y1 = static_cast<float>(pick.Uniform(-20, c.in_h));
      b.x2 = b.x1 + static_cast<float>(pick.Uniform(0, k % 5 == 0 ? 4 : 200));
      b.y2 = b.y1 + static_cast<float>(pick.Uniform(0, k % 7 == 0 ? 4 : 200));
      boxes[i].push_back(b);
      flat.insert(flat.end(), {b.x1, b.y1, b.x2, b.y2});
    }
    in.push_back({{"hyp",
                   {{"degrees", c.hyp.degrees}, {"translate", c.hyp.translate}, {"scale", c.hyp.scale},
                    {"shear", c.hyp.shear}, {"perspective", c.hyp.perspective}}},
                  {"in_w", c.in_w}, {"in_h", c.in_h}, {"out_w", c.out_w}, {"out_h", c.out_h},
                  {"uniforms", Uniforms({31, i}, 8)}, {"boxes", flat}});
  }
  const json ref = RunReference(python, "perspective", {{"cases", in}});
  ASSERT_FALSE(ref.is_null());
  int kept = 0, dropped = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SampleRandom rng({31, i});
    double scale = 0;
    const cv::Matx33d m = DrawPerspective(&rng, c.hyp, c.in_w, c.in_h, c.out_w, c.out_h, &scale,
                                          Augmentation::kUltralytics8);
    for (int k = 0; k < 9; ++k) EXPECT_EQ(m.val[k], ref[i]["m"][k].get<double>()) << "case " << i << " M[" << k << "]";
    TransformBoxes(m, scale, c.out_w, c.out_h, &boxes[i], Augmentation::kUltralytics8);
    const auto ref_kept = ref[i]["kept"].get<std::vector<int>>();
    const auto ref_boxes = ref[i]["boxes"].get<std::vector<double>>();
    ASSERT_EQ(boxes[i].size(), ref_kept.size()) << "case " << i;
    for (size_t k = 0; k < boxes[i].size(); ++k) {
      const PixelBox& b = boxes[i][k];
      EXPECT_EQ(b.cls, ref_kept[k]);
      EXPECT_EQ(b.x1, static_cast<float>(ref_boxes[4 * k])) << "case " << i << " box " << k;
      EXPECT_EQ(b.y1, static_cast<float>(ref_boxes[4 * k + 1])) << "case " << i << " box " << k;
      EXPECT_EQ(b.x2, static_cast<float>(ref_boxes[4 * k + 2])) << "case " << i << " box " << k;
      EXPECT_EQ(b.y2, static_cast<float>(ref_boxes[4 * k + 3])) << "case " << i << " box " << k;
    }
    kept += static_cast<int>(ref_kept.size());
    dropped += 40 - static_cast<int>(ref_kept.size());
  }
  EXPECT_GT(kept, 300);
  EXPECT_GT(dropped, 300);
}

TEST(Ultralytics8ReferenceTest, HsvTablesAreRandomHsvs) {
  FFYOLO_REQUIRE_ULTRALYTICS8(python);
  std::vector<std::array<double, 3>> gains = {{0.015, 0.7, 0.4}, {0.5, 0.9, 0.9}, {1, 0, 0.2}};
  json in = json::array();
  for (size_t i = 0; i < 30; ++i)
    in.push_back({{"gains", gains[i % gains.size()]}, {"uniforms", Uniforms({41, i}, 3)}});
  const json ref = RunReference(python, "hsv", {{"cases", in}});
  ASSERT_FALSE(ref.is_null());
  for (size_t i = 0; i < 30; ++i) {
    SampleRandom rng({41, i});
    const auto& g = gains[i % gains.size()];
    const HsvLuts luts = BuildShiftedHueLuts(DrawHsv(&rng, g[0], g[1], g[2]));
    const auto expected = ref[i].get<std::vector<std::vector<int>>>();
    for (int x = 0; x < 256; ++x) {
      EXPECT_EQ(luts.h[x], expected[0][x]) << "case " << i << " hue " << x;
      EXPECT_EQ(luts.s[x], expected[1][x]) << "case " << i << " saturation " << x;
      EXPECT_EQ(luts.v[x], expected[2][x]) << "case " << i << " value " << x;
    }
  }
}

TEST(Ultralytics8ReferenceTest, TargetsAreFormatsAfterRandomFlip) {
  FFYOLO_REQUIRE_ULTRALYTICS8(python);
  SampleRandom pick({51});
  json in = json::array();
  std::vector<std::vector<PixelBox>> boxes(16);
  for (size_t i = 0; i < boxes.size(); ++i) {
    const int w = 320 + 32 * static_cast<int>(i % 5), h = 640 - 32 * static_cast<int>(i % 3);
    std::vector<float> flat;
    for (int k = 0; k < 50; ++k) {
      PixelBox b;
      b.x1 = static_cast<float>(pick.Uniform(0, w - 1));
      b.y1 = static_cast<float>(pick.Uniform(0, h - 1));
      b.x2 = static_cast<float>(pick.Uniform(b.x1, w));
      b.y2 = static_cast<float>(pick.Uniform(b.y1, h));
      boxes[i].push_back(b);
      flat.insert(flat.end(), {b.x1, b.y1, b.x2, b.y2});
    }
    in.push_back({{"w", w}, {"h", h}, {"flipud", i % 2 == 1}, {"fliplr", i % 4 >= 2}, {"boxes", flat}});
  }
  const json ref = RunReference(python, "flips", {{"cases", in}});
  ASSERT_FALSE(ref.is_null());
  for (size_t i = 0; i < boxes.size(); ++i) {
    const std::vector<NormBox> t = ToNormalizedAfterFlips(boxes[i], in[i]["w"], in[i]["h"], in[i]["flipud"],
                                                          in[i]["fliplr"]);
    const auto r = ref[i].get<std::vector<double>>();
    ASSERT_EQ(r.size(), 4 * t.size());
    for (size_t k = 0; k < t.size(); ++k) {
      EXPECT_EQ(t[k].cx, static_cast<float>(r[4 * k])) << "case " << i << " box " << k;
      EXPECT_EQ(t[k].cy, static_cast<float>(r[4 * k + 1])) << "case " << i << " box " << k;
      EXPECT_EQ(t[k].w, static_cast<float>(r[4 * k + 2])) << "case " << i << " box " << k;
      EXPECT_EQ(t[k].h, static_cast<float>(r[4 * k + 3])) << "case " << i << " box " << k;
    }
  }
}

TEST(Ultralytics8ReferenceTest, CutMixIsUltralyticsCutMix) {
  FFYOLO_REQUIRE_ULTRALYTICS8(python);
  // A black image with 0 to 3 boxes, CutMix's other a white one with 1 to 8: its paste shows in the pixels.
  SampleRandom pick({71});
  const auto random_boxes = [&](int n, int w, int h, int cls) {
    std::vector<PixelBox> boxes;
    for (int k = 0; k < n; ++k) {
      PixelBox b;
      b.cls = cls + k;
      b.x1 = static_cast<float>(pick.Uniform(-4, w - 2));
      b.y1 = static_cast<float>(pick.Uniform(-4, h - 2));
      b.x2 = std::min(b.x1 + static_cast<float>(pick.Uniform(0.5, w / 2.0)), static_cast<float>(w));
      b.y2 = std::min(b.y1 + static_cast<float>(pick.Uniform(0.5, h / 2.0)), static_cast<float>(h));
      boxes.push_back(b);
    }
    return boxes;
  };
  const auto flat = [](const std::vector<PixelBox>& boxes) {
    std::vector<float> v;
    for (const PixelBox& b : boxes) v.insert(v.end(), {b.x1, b.y1, b.x2, b.y2});
    return v;
  };
  struct Case {
    int w, h;
    std::vector<PixelBox> boxes, other;
  };
  std::vector<Case> cases;
  json in = json::array();
  for (uint64_t i = 0; i < 300; ++i) {
    Case c;
    c.w = 48 + static_cast<int>(pick.Below(80));
    c.h = 48 + static_cast<int>(pick.Below(80));
    c.boxes = random_boxes(static_cast<int>(pick.Below(4)), c.w, c.h, 0);
    c.other = random_boxes(1 + static_cast<int>(pick.Below(8)), c.w, c.h, 100);
    in.push_back({{"w", c.w}, {"h", c.h}, {"boxes", flat(c.boxes)}, {"other", flat(c.other)},
                  {"uniforms", Uniforms({73, i}, 10)}});
    cases.push_back(std::move(c));
  }
  const json ref = RunReference(python, "cutmix", {{"cases", in}});
  ASSERT_FALSE(ref.is_null());
  int pasted = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SampleRandom rng({73, i});
    cv::Mat img(c.h, c.w, CV_8UC3, cv::Scalar::all(0));
    const cv::Mat other(c.h, c.w, CV_8UC3, cv::Scalar::all(255));
    std::vector<PixelBox> boxes = c.boxes;
    ApplyCutMix(&rng, other, c.other, &img, &boxes);
    std::vector<cv::Point> white;
    cv::Mat channel;
    cv::extractChannel(img, channel, 0);
    cv::findNonZero(channel, white);
    const json& r = ref[i];
    if (white.empty()) {
      EXPECT_TRUE(r["pasted"].is_null()) << "case " << i;
    } else {
      const cv::Rect rect = cv::boundingRect(white);
      EXPECT_EQ(std::vector<int>({rect.x, rect.y, rect.x + rect.width, rect.y + rect.height}), r["pasted"])
          << "case " << i;
      EXPECT_EQ(cv::countNonZero(channel), rect.area()) << "case " << i;
      ++pasted;
    }
    const auto ref_cls = r["cls"].get<std::vector<int>>();
    const auto ref_boxes = r["boxes"].get<std::vector<double>>();
    ASSERT_EQ(boxes.size(), ref_cls.size()) << "case " << i;
    for (size_t k = 0; k < boxes.size(); ++k) {
      EXPECT_EQ(boxes[k].cls, ref_cls[k]) << "case " << i << " box " << k;
      const float xyxy[4] = {boxes[k].x1, boxes[k].y1, boxes[k].x2, boxes[k].y2};
      for (int j = 0; j < 4; ++j)
        EXPECT_EQ(xyxy[j], static_cast<float>(ref_boxes[4 * k + j])) << "case " << i << " box " << k;
    }
  }
  EXPECT_GT(pasted, 50);  // pasted, and skipped (no free area, or no box of the other's in it)
  EXPECT_LT(pasted, 250);
}

// Writes (through the reference, with OpenCV) a YOLO-txt dataset of `n` noisy PNGs of random sizes, 1 to 4
// boxes each, files 0000.png on, into dir/src, and packs it: PNGs decode exactly as OpenCV reads them, and the
// pack's sample i is file i.
std::unique_ptr<Dataset> MakePngDataset(const std::string& python, const testing::ScratchDir& dir, int n) {
  SampleRandom pick({61});
  std::vector<std::vector<int>> sizes;
  json boxes = json::array();
  const auto round4 = [](double v) { return std::round(v * 1e4) / 1e4; };
  for (int i = 0; i < n; ++i) {
    sizes.push_back({40 + static_cast<int>(pick.Below(160)), 40 + static_cast<int>(pick.Below(160))});
    json image = json::array();
    for (uint64_t k = 0, m = 1 + pick.Below(4); k < m; ++k) {
      const double w = 0.05 + 0.4 * pick.Uniform(), h = 0.05 + 0.4 * pick.Uniform();
      image.push_back({pick.Below(3), round4(w / 2 + (1 - w) * pick.Uniform()),
                       round4(h / 2 + (1 - h) * pick.Uniform()), round4(w), round4(h)});
    }
    boxes.push_back(image);
  }
  if (RunReferenceIn(dir, python, "write", {{"root", dir / "src"}, {"seed", 3}, {"sizes", sizes}, {"boxes", boxes}})
          .is_null())
    return nullptr;
  PackOptions po;
  po.source = dir / "src";
  po.output = dir / "data.ffr";
  po.threads = 2;
  PackSummary ps;
  const Status st = Pack(po, &ps);
  EXPECT_TRUE(st.ok()) << st.ToString();
  std::unique_ptr<Dataset> dataset;
  EXPECT_TRUE(st.ok() && Dataset::Open(po.output, &dataset).ok());
  return dataset;
}

// One epoch of a loader, sample by sample.
struct Samples {
  std::vector<int64_t> indices;
  std::vector<std::string> images;           // RGB planes
  std::vector<std::vector<float>> targets;   // class, cx, cy, w, h per box
  std::vector<ImageMeta> meta;
  DecodeStats stats;  // the loader's after the epoch
};
Samples DrainSamples(const Dataset& dataset, const LoaderOptions& o, int64_t epoch) {
  Samples out;
  std::unique_ptr<Loader> loader;
  const Status st = Loader::Open(dataset, o, &loader);
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (!st.ok() || !loader->Start(epoch).ok()) return out;
  const Batch* b = nullptr;
  while (loader->Next(&b).ok() && b) {
    const size_t plane = 3 * static_cast<size_t>(b->height) * b->width;
    for (int k = 0; k < b->size; ++k) {
      out.indices.push_back(b->meta[k].dataset_index);
      out.meta.push_back(b->meta[k]);
      out.images.emplace_back(reinterpret_cast<const char*>(b->images) + k * plane, plane);
      out.targets.emplace_back();
      for (size_t t = 0; t < b->targets.size(); t += 6)
        if (b->targets[t] == k)
          out.targets.back().insert(out.targets.back().end(), b->targets.begin() + t + 1, b->targets.begin() + t + 6);
    }
    loader->Release(b);
  }
  out.stats = loader->decode_stats();
  return out;
}

// Sample k of `s` against the reference's `ref` (its Format output), bit for bit.
void ExpectSample(const Samples& s, size_t k, const json& ref, const std::string& what) {
  const auto pixels = ref["image"].get<std::vector<int>>();
  ASSERT_EQ(pixels.size(), s.images[k].size()) << what;
  size_t differ = 0;
  for (size_t i = 0; i < pixels.size(); ++i) differ += static_cast<uint8_t>(s.images[k][i]) != pixels[i];
  EXPECT_EQ(differ, 0u) << what << ": pixels differ";
  const auto cls = ref["cls"].get<std::vector<double>>();
  const auto xywh = ref["bboxes"].get<std::vector<double>>();
  ASSERT_EQ(s.targets[k].size(), 5 * cls.size()) << what;
  for (size_t b = 0; b < cls.size(); ++b) {
    EXPECT_EQ(s.targets[k][5 * b], static_cast<float>(cls[b])) << what << " box " << b;
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(s.targets[k][5 * b + 1 + c], static_cast<float>(xywh[4 * b + c])) << what << " box " << b;
  }
}

TEST(Ultralytics8ReferenceTest, TrainingSamplesAreYoloDatasets) {
  FFYOLO_REQUIRE_ULTRALYTICS8(python);
  // The loader's samples against YOLODataset's through v8_transforms and Format, every draw fed from the
  // loader's own keys: tiles and MixUp from the plan's, the rest from the sample's in SampleBuilder's order.
  testing::ScratchDir dir("u8_samples");
  const int n = 24;
  const std::unique_ptr<Dataset> dataset = MakePngDataset(python, dir, n);
  ASSERT_TRUE(dataset);
  LoaderOptions o;
  o.img_size = 96;
  o.batch_size = 4;
  o.seed = 9;
  o.workers = 2;
  o.augmentation = Augmentation::kUltralytics8;
  o.ultralytics_workers = 1;
  int cutmixes = 0, bgr = 0;
  for (int config = 0; config < 5; ++config) {
    // Epoch 0 from empty buffers; epoch 1 with buffers the first filled, and a perspective warp; rect training
    // (mosaic and MixUp off, the warp straight into each batch's shape); epoch 1 with CutMix and bgr; rect
    // training with bgr.
    const int64_t epoch = config == 1 || config == 3;
    o.rect = config == 2 || config == 4;
    o.rect_pad = 0;
    o.hyp.mosaic = config == 0 ? 0.7 : 0.5;
    o.hyp.mixup = config == 0 ? 0.5 : 0.3;
    o.hyp.degrees = config == 0 ? 10 : 5;
    o.hyp.shear = 2;
    o.hyp.perspective = config == 0 || config == 3 ? 0 : 0.0005;
    o.hyp.flipud = 0.5;
    o.ultralytics8_hyp.cutmix = config == 3 ? 0.8 : 0;
    o.ultralytics8_hyp.bgr = config >= 3 ? 0.5 : 0;
    json epochs = json::array();
    Samples samples;
    for (int64_t e = 0; e <= epoch; ++e) {
      samples = DrainSamples(*dataset, o, e);
      ASSERT_EQ(samples.indices.size(), static_cast<size_t>(n));
      json uniforms = json::array(), geometry = json::array();
      for (uint64_t p = 0; p < samples.indices.size(); ++p) {
        uniforms.push_back(Uniforms({o.seed, static_cast<uint64_t>(e), 0, p, kSampleDrawsStream}, 24));
        geometry.push_back(Uniforms({o.seed, static_cast<uint64_t>(e), 0, p, 0}, 200));  // its first attempt's
      }
      epochs.push_back({{"positions", samples.indices}, {"uniforms", uniforms},
                        {"geometry", e == epoch ? geometry : json()}});
    }
    const json hyp = {{"mosaic", o.hyp.mosaic}, {"mixup", o.hyp.mixup}, {"degrees", o.hyp.degrees},
                      {"shear", o.hyp.shear}, {"perspective", o.hyp.perspective}, {"flipud", o.hyp.flipud},
                      {"cutmix", o.ultralytics8_hyp.cutmix}, {"bgr", o.ultralytics8_hyp.bgr}};
    const json ref = RunReferenceIn(dir, python, "samples",
                                    {{"root", dir / "src"}, {"imgsz", o.img_size}, {"batch", o.batch_size},
                                     {"hyp", hyp}, {"epochs", epochs}, {"rect", o.rect}});
    ASSERT_FALSE(ref.is_null());
    ASSERT_EQ(ref.size(), samples.indices.size());
    for (size_t p = 0; p < samples.indices.size(); ++p) {
      const json& r = ref[std::to_string(p)];
      ExpectSample(samples, p, r, "config " + std::to_string(config) + " position " + std::to_string(p));
      cutmixes += r["cutmixed"].get<bool>();
      bgr += r["bgr"].get<bool>();
    }
    if (!o.rect) {
      EXPECT_GT(samples.stats.store_hits, 0) << "config " << config;  // tiles came from the store too
    }
  }
  // The cases exercise both: CutMix pasting (not only skipping) and BGR planes.
  EXPECT_GT(cutmixes, 2);
  EXPECT_GT(bgr, 10);
}

TEST(Ultralytics8ReferenceTest, ValidationSamplesAreTheRectYoloDatasets) {
  FFYOLO_REQUIRE_ULTRALYTICS8(python);
  testing::ScratchDir dir("u8_val");
  const int n = 24;
  const std::unique_ptr<Dataset> dataset = MakePngDataset(python, dir, n);
  ASSERT_TRUE(dataset);
  LoaderOptions o;
  o.training = false;
  o.img_size = 96;
  o.batch_size = 4;
  o.augmentation = Augmentation::kUltralytics8;
  const Samples samples = DrainSamples(*dataset, o, 0);
  ASSERT_EQ(samples.indices.size(), static_cast<size_t>(n));
  const json ref = RunReferenceIn(dir, python, "samples",
                                  {{"root", dir / "src"}, {"imgsz", o.img_size}, {"batch", o.batch_size},
                                   {"hyp", json::object()}, {"validation", true}});
  ASSERT_FALSE(ref.is_null());
  for (size_t k = 0; k < samples.indices.size(); ++k) {
    const json& r = ref[std::to_string(samples.indices[k])];
    ExpectSample(samples, k, r, "image " + std::to_string(samples.indices[k]));
    EXPECT_EQ(samples.meta[k].pad_w, r["ratio_pad"][1][0].get<double>());
    EXPECT_EQ(samples.meta[k].pad_h, r["ratio_pad"][1][1].get<double>());
  }
}

}  // namespace
}  // namespace ffyolo
