#include "ffyolo/nms.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/tensor.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <random>
#include <vector>

namespace ffyolo {
namespace {

using Xyxy = std::array<double, 4>;

// Operands in torchvision's order (the kept box first), which matters for NaN.
double PlainIou(const Xyxy& a, const Xyxy& b) {
  const double w = std::max(0.0, std::min(a[2], b[2]) - std::max(a[0], b[0]));
  const double h = std::max(0.0, std::min(a[3], b[3]) - std::max(a[1], b[1]));
  const double inter = w * h;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
}

// Brute force: visit by decreasing score (ties in input order), keep a box
// unless a box of its class kept before it overlaps it by more than the threshold.
std::vector<int64_t> ReferenceNms(const std::vector<Xyxy>& boxes, const std::vector<float>& scores,
                                  const std::vector<int>& classes, double iou_thres) {
  std::vector<int64_t> order(boxes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  std::vector<int64_t> kept;
  std::map<int, std::vector<int64_t>> kept_by_class;
  for (int64_t i : order) {
    std::vector<int64_t>& same_class = kept_by_class[classes[i]];
    const bool overlapped = std::any_of(same_class.begin(), same_class.end(), [&](int64_t k) {
      return PlainIou(boxes[k], boxes[i]) > iou_thres;
    });
    if (overlapped) continue;
    same_class.push_back(i);
    kept.push_back(i);
  }
  return kept;
}

// Integer corners (so float and double geometry agree exactly), sizes 1..max_size.
std::vector<Xyxy> RandomBoxes(std::mt19937* rng, int n, int extent, int max_size) {
  std::uniform_int_distribution<int> pos(0, extent), size(1, max_size);
  std::vector<Xyxy> boxes;
  for (int k = 0; k < n; ++k) {
    const double x = pos(*rng), y = pos(*rng);
    boxes.push_back({x, y, x + size(*rng), y + size(*rng)});
  }
  return boxes;
}

at::Tensor ToTensor(const std::vector<Xyxy>& boxes) {
  std::vector<float> flat;
  for (const Xyxy& b : boxes) flat.insert(flat.end(), b.begin(), b.end());
  return at::tensor(flat).view({static_cast<int64_t>(boxes.size()), 4});
}

std::vector<int64_t> ToVector(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

TEST(NmsTest, MatchesBruteForceOnRandomBoxes) {
  std::mt19937 rng(11);
  const std::vector<Xyxy> boxes = RandomBoxes(&rng, 600, 200, 60);
  // Few distinct scores, so ties are common.
  std::uniform_int_distribution<int> level(0, 40);
  std::vector<float> scores;
  for (size_t k = 0; k < boxes.size(); ++k) scores.push_back(level(rng) / 40.f);
  const std::vector<int> one_class(boxes.size(), 0);
  // Thresholds whose float rounding lies below them, as IoU ratios of integers can hit them.
  for (double thres : {0.45, 0.5, 0.65, 0.7}) {
    const std::vector<int64_t> want = ReferenceNms(boxes, scores, one_class, thres);
    ASSERT_GT(want.size(), 10u);
    ASSERT_LT(want.size(), boxes.size());
    EXPECT_EQ(ToVector(Nms(ToTensor(boxes), at::tensor(scores), thres)), want)
        << "iou_thres " << thres;
  }
}

TEST(NmsTest, DegenerateBoxesAndNegativeThresholdsMatchBruteForce) {
  std::mt19937 rng(3);
  std::vector<Xyxy> boxes = RandomBoxes(&rng, 300, 100, 30);
  for (int k = 0; k < 300; k += 10) {
    Xyxy& b = boxes[k];
    switch (k % 30) {
      case 0:
        b[2] = b[0];
        break;  // zero width
      case 10:
        std::swap(b[1], b[3]);
        break;  // inverted: negative area
      case 20:
        b[0] = b[2] = b[1] = b[3];
        break;  // a point
    }
  }
  std::uniform_real_distribution<float> unit(0.f, 1.f);
  std::vector<float> scores;
  for (size_t k = 0; k < boxes.size(); ++k) scores.push_back(unit(rng));
  const std::vector<int> one_class(boxes.size(), 0);
  for (bool with_nan : {false, true}) {
    if (with_nan) boxes[5][1] = NAN;
    for (double thres : {-0.25, 0.0, 0.5}) {
      EXPECT_EQ(ToVector(Nms(ToTensor(boxes), at::tensor(scores), thres)),
                ReferenceNms(boxes, scores, one_class, thres))
          << "iou_thres " << thres << " with_nan " << with_nan;
    }
  }
}

TEST(NmsTest, EmptyInput) {
  EXPECT_EQ(Nms(ToTensor({}), at::tensor(std::vector<float>{}), 0.5).numel(), 0);
}

// A (bs, N, 5 + nc) prediction built row by row: xyxy box, objectness, class scores.
struct Row {
  Xyxy box;
  float obj;
  std::vector<float> cls;
};

at::Tensor Prediction(const std::vector<std::vector<Row>>& images) {
  const int64_t bs = images.size(), n = images[0].size(), nc = images[0][0].cls.size();
  std::vector<float> flat;
  for (const auto& rows : images) {
    for (const Row& r : rows) {
      flat.push_back((r.box[0] + r.box[2]) / 2);
      flat.push_back((r.box[1] + r.box[3]) / 2);
      flat.push_back(r.box[2] - r.box[0]);
      flat.push_back(r.box[3] - r.box[1]);
      flat.push_back(r.obj);
      flat.insert(flat.end(), r.cls.begin(), r.cls.end());
    }
  }
  return at::tensor(flat).view({bs, n, 5 + nc});
}

struct Detection {
  Xyxy box;
  float conf;
  int cls;
  bool operator==(const Detection& o) const {
    return box == o.box && conf == o.conf && cls == o.cls;
  }
};

std::ostream& operator<<(std::ostream& os, const Detection& d) {
  return os << "[" << d.box[0] << "," << d.box[1] << "," << d.box[2] << "," << d.box[3] << " conf "
            << d.conf << " cls " << d.cls << "]";
}

std::vector<Detection> ToDetections(const at::Tensor& out) {
  EXPECT_EQ(out.dim(), 2);
  EXPECT_EQ(out.size(1), 6);
  std::vector<Detection> dets;
  const at::Tensor c = out.contiguous();
  const float* p = c.data_ptr<float>();
  for (int64_t k = 0; k < c.size(0); ++k, p += 6) {
    dets.push_back({{p[0], p[1], p[2], p[3]}, p[4], static_cast<int>(p[5])});
  }
  return dets;
}

// non_max_suppression spelled out for one image: thresholds compared in float
// as torch compares a float tensor with a Python number.
std::vector<Detection> ReferenceNonMaxSuppression(const std::vector<Row>& rows,
                                                  const NmsOptions& o) {
  const float conf_thres = static_cast<float>(o.conf_thres);
  const bool multi_label = o.multi_label && rows[0].cls.size() > 1;
  std::vector<Detection> cands;
  for (const Row& r : rows) {
    if (!(r.obj > conf_thres)) continue;
    std::vector<float> conf;
    for (float c : r.cls) conf.push_back(c * r.obj);
    if (multi_label) {
      for (size_t c = 0; c < conf.size(); ++c) {
        if (conf[c] > conf_thres) cands.push_back({r.box, conf[c], static_cast<int>(c)});
      }
    } else {
      const size_t best = std::max_element(conf.begin(), conf.end()) - conf.begin();
      if (conf[best] > conf_thres) cands.push_back({r.box, conf[best], static_cast<int>(best)});
    }
  }
  if (!o.classes.empty()) {  // --classes: a filter on the candidates
    std::vector<Detection> wanted;
    for (const Detection& d : cands)
      if (std::find(o.classes.begin(), o.classes.end(), d.cls) != o.classes.end()) wanted.push_back(d);
    cands = wanted;
  }
  std::vector<Xyxy> boxes;
  std::vector<float> scores;
  std::vector<int> classes;
  for (const Detection& d : cands) {
    boxes.push_back(d.box);
    scores.push_back(d.conf);
    classes.push_back(o.agnostic ? 0 : d.cls);
  }
  // Keep the max_nms best first (stable), as the implementation does before NMS.
  std::vector<int64_t> order(cands.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  if (order.size() > static_cast<size_t>(kNmsMaxBoxes)) order.resize(kNmsMaxBoxes);
  std::vector<Xyxy> top_boxes;
  std::vector<float> top_scores;
  std::vector<int> top_classes;
  for (int64_t k : order) {
    top_boxes.push_back(boxes[k]);
    top_scores.push_back(scores[k]);
    top_classes.push_back(classes[k]);
  }
  std::vector<Detection> out;
  for (int64_t k : ReferenceNms(top_boxes, top_scores, top_classes, o.iou_thres)) {
    if (static_cast<int64_t>(out.size()) == o.max_det) break;
    out.push_back(cands[order[k]]);
  }
  return out;
}

std::vector<std::vector<Row>> RandomImages(std::mt19937* rng, int bs, int n, int nc, int extent) {
  std::uniform_real_distribution<float> unit(0.f, 1.f);
  std::vector<std::vector<Row>> images(bs);
  for (auto& rows : images) {
    // Even corners keep the centres exact.
    for (Xyxy b : RandomBoxes(rng, n, extent / 2, 25)) {
      for (double& v : b) v *= 2;
      Row r{b, unit(*rng), {}};
      for (int c = 0; c < nc; ++c) r.cls.push_back(unit(*rng));
      rows.push_back(r);
    }
  }
  return images;
}

TEST(NonMaxSuppressionTest, MatchesReferenceOnRandomPredictions) {
  std::mt19937 rng(5);
  const auto images = RandomImages(&rng, 2, 400, 4, 150);
  const at::Tensor prediction = Prediction(images);
  for (bool multi_label : {false, true}) {
    for (bool agnostic : {false, true}) {
      NmsOptions o;
      o.conf_thres = 0.1;
      o.iou_thres = 0.45;
      o.multi_label = multi_label;
      o.agnostic = agnostic;
      o.max_det = 150;
      const std::vector<at::Tensor> out = NonMaxSuppression(prediction, o);
      ASSERT_EQ(out.size(), 2u);
      for (size_t i = 0; i < images.size(); ++i) {
        const std::vector<Detection> want = ReferenceNonMaxSuppression(images[i], o);
        ASSERT_GT(want.size(), 20u);
        EXPECT_EQ(ToDetections(out[i]), want)
            << "image " << i << " multi_label " << multi_label << " agnostic " << agnostic;
      }
    }
  }
}

TEST(NonMaxSuppressionTest, ClassesFilterMatchesReference) {
  std::mt19937 rng(7);
  const auto images = RandomImages(&rng, 2, 400, 5, 150);
  const at::Tensor prediction = Prediction(images);
  for (bool multi_label : {false, true}) {
    NmsOptions o;
    o.conf_thres = 0.1;
    o.multi_label = multi_label;
    o.classes = {1, 3};
    const std::vector<at::Tensor> out = NonMaxSuppression(prediction, o);
    for (size_t i = 0; i < images.size(); ++i) {
      const std::vector<Detection> got = ToDetections(out[i]);
      ASSERT_GT(got.size(), 10u);
      for (const Detection& d : got) EXPECT_TRUE(d.cls == 1 || d.cls == 3) << d;
      EXPECT_EQ(got, ReferenceNonMaxSuppression(images[i], o)) << "image " << i << " multi_label " << multi_label;
    }
  }
}

TEST(NonMaxSuppressionTest, ManyCandidatesAreCappedAndMatchReference) {
  // val.py's setting on a 640 model's worth of rows: more than kNmsMaxBoxes candidates.
  std::mt19937 rng(9);
  const auto images = RandomImages(&rng, 1, 25200 / 8, 80, 600);
  NmsOptions o;
  o.conf_thres = 0.001;
  o.iou_thres = 0.65;
  o.multi_label = true;
  const std::vector<Detection> got = ToDetections(NonMaxSuppression(Prediction(images), o)[0]);
  EXPECT_EQ(got, ReferenceNonMaxSuppression(images[0], o));
  EXPECT_EQ(got.size(), 300u);
}

TEST(NonMaxSuppressionTest, CapKeepsEqualConfidencesInCandidateOrder) {
  // 31000 disjoint boxes, every 1000th more confident: those first, then the
  // first of the equal ones in input order up to kNmsMaxBoxes.
  std::vector<Row> rows;
  for (int k = 0; k < 31000; ++k) {
    const double x = (k % 200) * 4, y = (k / 200) * 4;
    rows.push_back({{x, y, x + 2, y + 2}, k % 1000 == 999 ? 0.75f : 0.5f, {1.f}});
  }
  NmsOptions o;
  o.max_det = 40000;
  const std::vector<Detection> got = ToDetections(NonMaxSuppression(Prediction({rows}), o)[0]);
  std::vector<int> want;
  for (int k = 999; k < 31000; k += 1000) want.push_back(k);
  for (int k = 0; static_cast<int64_t>(want.size()) < kNmsMaxBoxes; ++k) {
    if (k % 1000 != 999) want.push_back(k);
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got[k].box, rows[want[k]].box) << "detection " << k << " should be row " << want[k];
  }
}

TEST(NonMaxSuppressionTest, MultiLabelGivesARowPerClassAboveThreshold) {
  const at::Tensor prediction = Prediction({{{{10, 10, 50, 30}, 0.5f, {0.75f, 0.625f, 0.25f}}}});
  NmsOptions o;
  o.conf_thres = 0.25;
  o.multi_label = true;
  const std::vector<Detection> multi = ToDetections(NonMaxSuppression(prediction, o)[0]);
  const std::vector<Detection> want_multi = {{{10, 10, 50, 30}, 0.375f, 0},
                                             {{10, 10, 50, 30}, 0.3125f, 1}};
  EXPECT_EQ(multi, want_multi);
  o.multi_label = false;
  const std::vector<Detection> best = ToDetections(NonMaxSuppression(prediction, o)[0]);
  const std::vector<Detection> want_best = {{{10, 10, 50, 30}, 0.375f, 0}};
  EXPECT_EQ(best, want_best);
}

TEST(NonMaxSuppressionTest, ClassOffsetKeepsOverlappingBoxesOfOtherClasses) {
  // IoU 0.8 between the two boxes.
  const Xyxy a = {0, 0, 100, 100}, b = {0, 0, 100, 80};
  NmsOptions o;
  o.conf_thres = 0.1;
  o.iou_thres = 0.45;
  const auto count = [&](const std::vector<float>& cls_a, const std::vector<float>& cls_b) {
    return NonMaxSuppression(Prediction({{{a, 0.9f, cls_a}, {b, 0.8f, cls_b}}}), o)[0].size(0);
  };
  EXPECT_EQ(count({1, 0}, {0, 1}), 2);
  EXPECT_EQ(count({1, 0}, {1, 0}), 1);
  o.agnostic = true;
  EXPECT_EQ(count({1, 0}, {0, 1}), 1);
}

TEST(NonMaxSuppressionTest, MaxDetKeepsTheMostConfident) {
  std::vector<Row> rows;
  for (int k = 0; k < 400; ++k) {  // disjoint boxes on a 20 x 20 lattice
    const double x = (k % 20) * 30, y = (k / 20) * 30;
    rows.push_back({{x, y, x + 20, y + 20}, 0.5f + k / 1000.f, {1.f}});
  }
  NmsOptions o;
  o.conf_thres = 0.25;
  const std::vector<Detection> got = ToDetections(NonMaxSuppression(Prediction({rows}), o)[0]);
  ASSERT_EQ(got.size(), 300u);
  for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k].conf, rows[399 - k].obj) << k;
}

TEST(NonMaxSuppressionTest, ConfidenceThresholdIsStrict) {
  NmsOptions o;
  o.conf_thres = 0.25;
  const auto survivors = [&](float obj, float cls) {
    return NonMaxSuppression(Prediction({{{{0, 0, 10, 10}, obj, {cls, 0.f}}}}), o)[0].size(0);
  };
  EXPECT_EQ(survivors(0.25f, 1.f), 0);  // obj == conf_thres
  EXPECT_EQ(survivors(0.5f, 0.5f), 0);  // obj * cls == conf_thres
  EXPECT_EQ(survivors(0.5f, 0.51f), 1);
  o.multi_label = true;
  EXPECT_EQ(survivors(0.5f, 0.5f), 0);
  EXPECT_EQ(survivors(0.5f, 0.51f), 1);
}

TEST(NonMaxSuppressionTest, ImagesWithoutCandidatesAreEmpty) {
  const at::Tensor prediction =
      Prediction({{{{0, 0, 10, 10}, 0.01f, {0.9f, 0.1f}}}, {{{0, 0, 10, 10}, 0.9f, {0.9f, 0.1f}}}});
  const std::vector<at::Tensor> out = NonMaxSuppression(prediction, NmsOptions{});
  EXPECT_EQ(out[0].size(0), 0);
  EXPECT_EQ(out[0].size(1), 6);
  EXPECT_EQ(out[1].size(0), 1);
}

}  // namespace
}  // namespace ffyolo
