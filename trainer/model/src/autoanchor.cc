#include "ffyolo/autoanchor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>

namespace ffyolo {
namespace {

constexpr double kRecallToKeep = 0.98;  // check_anchors recomputes at or below this BPR
constexpr int kKmeansRestarts = 30;
constexpr double kKmeansThreshold = 1e-5;
constexpr double kMutationProbability = 0.9, kMutationSigma = 0.1;

// min over w and h of min(r, 1/r): 1 for a perfect fit, toward 0 for a poor one.
float Ratio(const AnchorWh& box, const AnchorWh& anchor) {
  const float rw = box.w / anchor.w, rh = box.h / anchor.h;
  return std::min(std::min(rw, 1 / rw), std::min(rh, 1 / rh));
}

float BestRatio(const AnchorWh& box, const std::vector<AnchorWh>& anchors) {
  float best = 0;
  for (const AnchorWh& a : anchors) best = std::max(best, Ratio(box, a));
  return best;
}

// anchor_fitness: the mean best ratio, counting only boxes some anchor fits.
double Fitness(const std::vector<AnchorWh>& wh, const std::vector<AnchorWh>& anchors, float thr) {
  double sum = 0;
  for (const AnchorWh& box : wh) {
    const float best = BestRatio(box, anchors);
    if (best > thr) sum += best;
  }
  return wh.empty() ? 0 : sum / static_cast<double>(wh.size());
}

void SortByArea(std::vector<AnchorWh>* k) {
  std::sort(k->begin(), k->end(), [](const AnchorWh& a, const AnchorWh& b) { return a.w * a.h < b.w * b.h; });
}

using Point = std::array<double, 2>;

double Distance(const Point& a, const Point& b) { return std::hypot(a[0] - b[0], a[1] - b[1]); }

// scipy.cluster.vq._kmeans from one start: Lloyd iterations until the mean
// distortion stops falling by more than the threshold; empty clusters are
// dropped. Returns the last assignment's mean distortion.
double Lloyd(const std::vector<Point>& obs, std::vector<Point>* book) {
  double previous = std::numeric_limits<double>::infinity(), distortion = previous;
  std::vector<size_t> code(obs.size());
  while (true) {
    double total = 0;
    for (size_t i = 0; i < obs.size(); ++i) {
      double best = std::numeric_limits<double>::infinity();
      for (size_t c = 0; c < book->size(); ++c) {
        const double d = Distance(obs[i], (*book)[c]);
        if (d < best) best = d, code[i] = c;
      }
      total += best;
    }
    distortion = total / static_cast<double>(obs.size());
    std::vector<Point> sums(book->size(), Point{0, 0});
    std::vector<size_t> members(book->size(), 0);
    for (size_t i = 0; i < obs.size(); ++i) {
      sums[code[i]][0] += obs[i][0];
      sums[code[i]][1] += obs[i][1];
      ++members[code[i]];
    }
    std::vector<Point> next;
    for (size_t c = 0; c < book->size(); ++c)
      if (members[c] > 0) next.push_back({sums[c][0] / members[c], sums[c][1] / members[c]});
    *book = std::move(next);
    if (!(std::abs(previous - distortion) > kKmeansThreshold)) return distortion;
    previous = distortion;
  }
}

// scipy.cluster.vq.kmeans(obs, n, iter=30): the best of 30 random starts.
std::vector<Point> Kmeans(const std::vector<Point>& obs, size_t n, std::mt19937_64* rng) {
  std::vector<Point> best;
  double best_distortion = std::numeric_limits<double>::infinity();
  std::vector<size_t> order(obs.size());
  for (int restart = 0; restart < kKmeansRestarts; ++restart) {
    std::iota(order.begin(), order.end(), 0);
    std::vector<Point> book;
    for (size_t c = 0; c < n; ++c) {  // n distinct observations (a partial Fisher-Yates shuffle)
      std::uniform_int_distribution<size_t> pick(c, order.size() - 1);
      std::swap(order[c], order[pick(*rng)]);
      book.push_back(obs[order[c]]);
    }
    const double distortion = Lloyd(obs, &book);
    if (distortion < best_distortion) best_distortion = distortion, best = book;
  }
  return best;
}

std::string Format(const char* fmt, double a, double b) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), fmt, a, b);
  return buf;
}

}  // namespace

std::vector<AnchorWh> LabelSizes(const LabelIndex& index, int img_size, const std::vector<double>* scales) {
  std::vector<AnchorWh> wh;
  for (size_t i = 0; i < index.size(); ++i) {
    const double longest = std::max(index.width(i), index.height(i));
    if (longest <= 0) continue;
    const double s = scales ? (*scales)[i] : 1.0;
    const double sw = img_size * index.width(i) / longest * s, sh = img_size * index.height(i) / longest * s;
    const Box* boxes = index.boxes(i);
    for (size_t b = 0; b < index.box_count(i); ++b)
      if (!boxes[b].iscrowd)
        wh.push_back({static_cast<float>(boxes[b].w * sw), static_cast<float>(boxes[b].h * sh)});
  }
  return wh;
}

AnchorFit FitAnchors(const std::vector<AnchorWh>& wh, const std::vector<AnchorWh>& anchors, double anchor_t) {
  AnchorFit fit;
  if (wh.empty()) return fit;
  const float thr = static_cast<float>(1 / anchor_t);
  double recalled = 0, above = 0;
  for (const AnchorWh& box : wh) {
    float best = 0;
    for (const AnchorWh& a : anchors) {
      const float x = Ratio(box, a);
      best = std::max(best, x);
      above += x > thr;
    }
    recalled += best > thr;
  }
  fit.bpr = recalled / static_cast<double>(wh.size());
  fit.anchors_per_target = above / static_cast<double>(wh.size());
  return fit;
}

std::vector<AnchorWh> EvolveAnchors(const std::vector<AnchorWh>& all, size_t n, int img_size, double anchor_t,
                                    int generations, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const float thr = static_cast<float>(1 / anchor_t);
  std::vector<AnchorWh> wh;
  for (const AnchorWh& b : all)
    if (b.w >= 2 || b.h >= 2) wh.push_back(b);

  // K-means on sizes whitened by their standard deviations.
  std::vector<AnchorWh> k;
  if (n <= wh.size() && !wh.empty()) {
    Point mean{0, 0}, sigma{0, 0};
    for (const AnchorWh& b : wh) mean[0] += b.w, mean[1] += b.h;
    mean[0] /= wh.size(), mean[1] /= wh.size();
    for (const AnchorWh& b : wh) sigma[0] += (b.w - mean[0]) * (b.w - mean[0]), sigma[1] += (b.h - mean[1]) * (b.h - mean[1]);
    sigma[0] = std::sqrt(sigma[0] / wh.size()), sigma[1] = std::sqrt(sigma[1] / wh.size());
    if (sigma[0] > 0 && sigma[1] > 0) {
      std::vector<Point> obs;
      for (const AnchorWh& b : wh) obs.push_back({b.w / sigma[0], b.h / sigma[1]});
      for (const Point& p : Kmeans(obs, n, &rng))
        k.push_back({static_cast<float>(p[0] * sigma[0]), static_cast<float>(p[1] * sigma[1])});
    }
  }
  if (k.size() != n) {  // too few distinct sizes: YOLOv5's random start instead
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<double> v(2 * n);
    for (double& x : v) x = u(rng);
    std::sort(v.begin(), v.end());
    k.clear();
    for (size_t i = 0; i < n; ++i)
      k.push_back({static_cast<float>(v[2 * i] * img_size), static_cast<float>(v[2 * i + 1] * img_size)});
  }
  SortByArea(&k);

  // Genetic evolution: multiplicative mutations, kept when the fitness rises.
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> normal(0, 1);
  double f = Fitness(wh, k, thr);
  std::vector<AnchorWh> kg(k.size());
  for (int g = 0; g < generations; ++g) {
    std::vector<double> v(2 * n, 1.0);
    while (std::all_of(v.begin(), v.end(), [](double x) { return x == 1.0; })) {
      const double strength = u(rng);
      for (double& x : v) {
        const bool mutate = u(rng) < kMutationProbability;
        x = std::clamp((mutate ? 1.0 : 0.0) * strength * normal(rng) * kMutationSigma + 1, 0.3, 3.0);
      }
    }
    for (size_t i = 0; i < n; ++i)
      kg[i] = {std::max(2.0f, static_cast<float>(k[i].w * v[2 * i])),
               std::max(2.0f, static_cast<float>(k[i].h * v[2 * i + 1]))};
    const double fg = Fitness(wh, kg, thr);
    if (fg > f) f = fg, k = kg;
  }
  SortByArea(&k);
  return k;
}

AutoAnchorResult CheckAnchors(const LabelIndex& index, int img_size, double anchor_t, uint64_t seed,
                              std::vector<AnchorWh>* anchors) {
  AutoAnchorResult result;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(0.9, 1.1);  // the augmentation's scale range, roughly
  std::vector<double> scales(index.size());
  for (double& s : scales) s = jitter(rng);
  const std::vector<AnchorWh> wh = LabelSizes(index, img_size, &scales);
  if (wh.empty()) {
    result.report = "AutoAnchor: no boxes in the training split; anchors kept\n";
    return result;
  }
  result.before = result.after = FitAnchors(wh, *anchors, anchor_t);
  result.report = Format("AutoAnchor: %.2f anchors/target, %.3f Best Possible Recall (BPR). ",
                         result.before.anchors_per_target, result.before.bpr);
  if (result.before.bpr > kRecallToKeep) {
    result.report += "Current anchors are a good fit to dataset\n";
    return result;
  }
  result.report += "Anchors are a poor fit to dataset, attempting to improve...\n";
  const std::vector<AnchorWh> sizes = LabelSizes(index, img_size);
  const size_t tiny = std::count_if(sizes.begin(), sizes.end(), [](const AnchorWh& b) { return b.w < 3 || b.h < 3; });
  if (tiny > 0)
    result.report += "AutoAnchor: WARNING extremely small objects found: " + std::to_string(tiny) + " of " +
                     std::to_string(sizes.size()) + " labels are < 3 pixels in size\n";
  const std::vector<AnchorWh> proposed = EvolveAnchors(sizes, anchors->size(), img_size, anchor_t, 1000, seed + 1);
  const AnchorFit fit = FitAnchors(wh, proposed, anchor_t);
  if (fit.bpr > result.before.bpr) {
    *anchors = proposed;
    result.after = fit;
    result.replaced = true;
    result.report += Format("AutoAnchor: new anchors: %.2f anchors/target, %.3f BPR. Done (optional: update the "
                            "model YAML to use these anchors in the future)\n", fit.anchors_per_target, fit.bpr);
  } else {
    result.report += "AutoAnchor: Done (original anchors better than new anchors, proceeding with original anchors)\n";
  }
  return result;
}

}  // namespace ffyolo
