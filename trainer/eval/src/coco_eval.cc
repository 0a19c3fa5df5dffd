#include "ffyolo/coco_eval.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <utility>

#include "ffyolo/numpy_math.h"

namespace ffyolo {
namespace {

constexpr int T = CocoEvaluator::kNumIouThresholds;
constexpr int R = CocoEvaluator::kNumRecallThresholds;
constexpr int A = CocoEvaluator::kNumAreaRanges;
constexpr int M = CocoEvaluator::kNumMaxDets;

// pycocotools' areaRng: all, small, medium, large (bounds inclusive).
constexpr double kAreaRanges[A][2] = {{0.0, 1e10}, {0.0, 1024.0}, {1024.0, 9216.0}, {9216.0, 1e10}};
constexpr const char* kAreaLabels[A] = {"all", "small", "medium", "large"};
constexpr int kIou50 = 0;
constexpr int kIou75 = 5;
constexpr int kAllIous = -1;

// What one detection counts as, per area range and IoU threshold.
enum Outcome : uint8_t { kFalsePositive = 0, kTruePositive = 1, kIgnored = 2 };

int IndexOf(const std::vector<int64_t>& sorted_ids, int64_t id) {
  auto it = std::lower_bound(sorted_ids.begin(), sorted_ids.end(), id);
  if (it == sorted_ids.end() || *it != id) return -1;
  return static_cast<int>(it - sorted_ids.begin());
}

std::vector<int64_t> SortedUnique(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

bool OutsideArea(double area, int a) { return area < kAreaRanges[a][0] || area > kAreaRanges[a][1]; }

// maskApi.c bbIou: IoU of a detection with a ground-truth box; for a crowd
// region the union is the detection's own area.
double BoxIou(const std::array<double, 4>& d, const std::array<double, 4>& g, bool crowd) {
  const double w = std::fmin(d[2] + d[0], g[2] + g[0]) - std::fmax(d[0], g[0]);
  if (w <= 0) return 0.0;
  const double h = std::fmin(d[3] + d[1], g[3] + g[1]) - std::fmax(d[1], g[1]);
  if (h <= 0) return 0.0;
  const double inter = w * h;
  const double det_area = d[2] * d[3];
  const double uni = crowd ? det_area : det_area + g[2] * g[3] - inter;
  return inter / uni;
}

// (group key, input index): sorting these groups the inputs and keeps their
// input order within a group.
using KeyedIndex = std::pair<uint64_t, uint32_t>;

}  // namespace

CocoEvaluator::CocoEvaluator(CocoGroundTruth ground_truth, std::vector<CocoDetection> detections)
    : ground_truth_(std::move(ground_truth)), detections_(std::move(detections)) {}

const std::vector<double>& CocoEvaluator::IouThresholds() {
  static const std::vector<double> thresholds = NumpyLinspace(0.5, 0.95, T);
  return thresholds;
}

const std::vector<double>& CocoEvaluator::RecallThresholds() {
  static const std::vector<double> thresholds = NumpyLinspace(0.0, 1.0, R);
  return thresholds;
}

const std::array<int, CocoEvaluator::kNumMaxDets>& CocoEvaluator::MaxDets() {
  static const std::array<int, kNumMaxDets> max_dets = {1, 10, 100};
  return max_dets;
}

void CocoEvaluator::Evaluate() {
  image_ids_ = SortedUnique(ground_truth_.image_ids);
  std::vector<int64_t> categories;
  categories.reserve(ground_truth_.annotations.size());
  for (const CocoAnnotation& ann : ground_truth_.annotations) categories.push_back(ann.category_id);
  category_ids_ = SortedUnique(std::move(categories));

  // Group by (category, image), category-major: the order of pycocotools' evalImgs.
  const uint64_t num_images = image_ids_.size();
  auto group_key = [&](int64_t image_id, int64_t category_id, uint64_t* key) {
    const int image = IndexOf(image_ids_, image_id);
    const int category = IndexOf(category_ids_, category_id);
    if (image < 0 || category < 0) return false;
    *key = static_cast<uint64_t>(category) * num_images + static_cast<uint64_t>(image);
    return true;
  };
  std::vector<KeyedIndex> gt_keys, det_keys;
  uint64_t key = 0;
  for (size_t i = 0; i < ground_truth_.annotations.size(); ++i) {
    const CocoAnnotation& ann = ground_truth_.annotations[i];
    if (group_key(ann.image_id, ann.category_id, &key)) gt_keys.emplace_back(key, static_cast<uint32_t>(i));
  }
  for (size_t i = 0; i < detections_.size(); ++i) {
    const CocoDetection& det = detections_[i];
    if (group_key(det.image_id, det.category_id, &key)) det_keys.emplace_back(key, static_cast<uint32_t>(i));
  }
  std::sort(gt_keys.begin(), gt_keys.end());
  std::sort(det_keys.begin(), det_keys.end());

  image_results_.clear();
  detection_scores_.clear();
  detection_outcomes_.clear();
  std::vector<const CocoAnnotation*> gts;
  std::vector<const CocoDetection*> dets;
  size_t gi = 0, di = 0;
  while (gi < gt_keys.size() || di < det_keys.size()) {
    const uint64_t group = std::min(gi < gt_keys.size() ? gt_keys[gi].first : UINT64_MAX,
                                    di < det_keys.size() ? det_keys[di].first : UINT64_MAX);
    gts.clear();
    dets.clear();
    for (; gi < gt_keys.size() && gt_keys[gi].first == group; ++gi) {
      gts.push_back(&ground_truth_.annotations[gt_keys[gi].second]);
    }
    for (; di < det_keys.size() && det_keys[di].first == group; ++di) {
      dets.push_back(&detections_[det_keys[di].second]);
    }
    EvaluateImage(static_cast<int>(group / num_images), gts, dets);
  }
  evaluated_ = true;
  accumulated_ = false;
  summarized_ = false;
}

// pycocotools evaluateImg for every area range at once.
void CocoEvaluator::EvaluateImage(int category, const std::vector<const CocoAnnotation*>& gts,
                                  std::vector<const CocoDetection*> dets) {
  std::stable_sort(dets.begin(), dets.end(),
                   [](const CocoDetection* a, const CocoDetection* b) { return a->score > b->score; });
  if (dets.size() > static_cast<size_t>(MaxDets().back())) dets.resize(MaxDets().back());
  const size_t G = gts.size();
  const size_t D = dets.size();

  std::vector<double> ious(D * G);
  for (size_t d = 0; d < D; ++d) {
    for (size_t g = 0; g < G; ++g) ious[d * G + g] = BoxIou(dets[d]->bbox, gts[g]->bbox, gts[g]->iscrowd);
  }

  ImageResult result;
  result.category = category;
  result.first_detection = detection_scores_.size();
  result.num_detections = static_cast<int>(D);
  for (const CocoDetection* det : dets) detection_scores_.push_back(det->score);
  const size_t outcomes_begin = detection_outcomes_.size();
  detection_outcomes_.resize(outcomes_begin + D * A * T);
  uint8_t* outcomes = &detection_outcomes_[outcomes_begin];

  std::vector<char> ignored(G);
  std::vector<size_t> order;  // ground truth, counted ones first (stable)
  std::vector<char> gt_taken(G);  // by position in `order`
  const std::vector<double>& iou_thresholds = IouThresholds();
  for (int a = 0; a < A; ++a) {
    order.clear();
    for (size_t g = 0; g < G; ++g) {
      ignored[g] = gts[g]->iscrowd || OutsideArea(gts[g]->area, a);
      if (!ignored[g]) order.push_back(g);
    }
    result.num_counted_gt[a] = static_cast<int>(order.size());
    for (size_t g = 0; g < G; ++g) {
      if (ignored[g]) order.push_back(g);
    }

    for (int t = 0; t < T; ++t) {
      std::fill(gt_taken.begin(), gt_taken.end(), 0);
      for (size_t d = 0; d < D; ++d) {
        double best = std::min(iou_thresholds[t], 1 - 1e-10);
        int match = -1;  // position in `order`
        for (size_t pos = 0; pos < G; ++pos) {
          const size_t g = order[pos];
          if (gt_taken[pos] && !gts[g]->iscrowd) continue;
          // Once matched to a counted object, never fall back to an ignored one.
          if (match > -1 && !ignored[order[match]] && ignored[g]) break;
          const double iou = ious[d * G + g];
          if (iou < best) continue;
          best = iou;
          match = static_cast<int>(pos);
        }
        Outcome outcome;
        if (match == -1) {
          const double det_area = dets[d]->bbox[2] * dets[d]->bbox[3];
          outcome = OutsideArea(det_area, a) ? kIgnored : kFalsePositive;
        } else {
          gt_taken[match] = 1;
          outcome = ignored[order[match]] ? kIgnored : kTruePositive;
        }
        outcomes[(d * A + a) * T + t] = outcome;
      }
    }
  }
  image_results_.push_back(result);
}

size_t CocoEvaluator::PrecisionIndex(int t, int r, int k, int a, int m) const {
  return ((((static_cast<size_t>(t) * R + r) * category_ids_.size() + k) * A + a) * M) + m;
}

size_t CocoEvaluator::RecallIndex(int t, int k, int a, int m) const {
  return (((static_cast<size_t>(t) * category_ids_.size() + k) * A + a) * M) + m;
}

void CocoEvaluator::Accumulate() {
  if (!evaluated_) Evaluate();
  const size_t K = category_ids_.size();
  precision_.assign(static_cast<size_t>(T) * R * K * A * M, -1.0);
  recall_.assign(static_cast<size_t>(T) * K * A * M, -1.0);
  const std::vector<double>& recall_thresholds = RecallThresholds();
  const double eps = std::numeric_limits<double>::epsilon();  // np.spacing(1)

  struct Entry {
    double score;
    size_t detection;
    int rank;  // within its image, best score first
  };
  std::vector<Entry> entries;
  std::vector<uint8_t> sorted_outcomes;  // [area][iou][entry], for sequential scans
  std::vector<size_t> selected;          // entries kept by a max-dets limit
  std::vector<double> rc, pr;
  size_t begin = 0;
  while (begin < image_results_.size()) {
    const int k = image_results_[begin].category;
    size_t end = begin;
    while (end < image_results_.size() && image_results_[end].category == k) ++end;

    // One stable sort serves every max-dets limit: keeping the entries with
    // rank < limit from the full order equals sorting the kept ones.
    entries.clear();
    for (size_t i = begin; i < end; ++i) {
      const ImageResult& result = image_results_[i];
      for (int j = 0; j < result.num_detections; ++j) {
        entries.push_back({detection_scores_[result.first_detection + j], result.first_detection + j, j});
      }
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& a, const Entry& b) { return a.score > b.score; });
    const size_t n = entries.size();
    sorted_outcomes.resize(n * A * T);
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* outcomes = &detection_outcomes_[entries[i].detection * A * T];
      for (int at = 0; at < A * T; ++at) sorted_outcomes[at * n + i] = outcomes[at];
    }

    for (int a = 0; a < A; ++a) {
      int64_t num_counted = 0;
      for (size_t i = begin; i < end; ++i) num_counted += image_results_[i].num_counted_gt[a];
      if (num_counted == 0) continue;
      const double npig = static_cast<double>(num_counted);
      for (int m = 0; m < M; ++m) {
        selected.clear();
        for (size_t i = 0; i < n; ++i) {
          if (entries[i].rank < MaxDets()[m]) selected.push_back(i);
        }
        const size_t nd = selected.size();
        rc.resize(nd);
        pr.resize(nd);
        for (int t = 0; t < T; ++t) {
          const uint8_t* outcomes = &sorted_outcomes[(static_cast<size_t>(a) * T + t) * n];
          double tp = 0, fp = 0;
          for (size_t i = 0; i < nd; ++i) {
            const uint8_t outcome = outcomes[selected[i]];
            if (outcome == kTruePositive) tp += 1;
            if (outcome == kFalsePositive) fp += 1;
            rc[i] = tp / npig;
            pr[i] = tp / (fp + tp + eps);
          }
          recall_[RecallIndex(t, k, a, m)] = nd > 0 ? rc[nd - 1] : 0.0;
          for (size_t i = nd; i-- > 1;) {
            if (pr[i] > pr[i - 1]) pr[i - 1] = pr[i];
          }
          for (int r = 0; r < R; ++r) {
            const size_t at = static_cast<size_t>(
                std::lower_bound(rc.begin(), rc.end(), recall_thresholds[r]) - rc.begin());
            precision_[PrecisionIndex(t, r, k, a, m)] = at < nd ? pr[at] : 0.0;
          }
        }
      }
    }
    begin = end;
  }
  accumulated_ = true;
  summarized_ = false;
}

double CocoEvaluator::precision(int iou_index, int recall_index, int category, AreaRange area,
                                int max_dets_index) const {
  return precision_[PrecisionIndex(iou_index, recall_index, category, area, max_dets_index)];
}

double CocoEvaluator::recall(int iou_index, int category, AreaRange area, int max_dets_index) const {
  return recall_[RecallIndex(iou_index, category, area, max_dets_index)];
}

// np.mean(s[s > -1]) over precision[t, :, :, area, m], in NumPy's element order.
double CocoEvaluator::SummarizeAp(int iou_index, AreaRange area, int max_dets_index) const {
  std::vector<double> values;
  const int t_begin = iou_index == kAllIous ? 0 : iou_index;
  const int t_end = iou_index == kAllIous ? T : iou_index + 1;
  for (int t = t_begin; t < t_end; ++t) {
    for (int r = 0; r < R; ++r) {
      for (size_t k = 0; k < category_ids_.size(); ++k) {
        const double v = precision_[PrecisionIndex(t, r, static_cast<int>(k), area, max_dets_index)];
        if (v > -1) values.push_back(v);
      }
    }
  }
  if (values.empty()) return -1.0;
  return NumpyPairwiseSum(values.data(), values.size()) / static_cast<double>(values.size());
}

double CocoEvaluator::SummarizeAr(AreaRange area, int max_dets_index) const {
  std::vector<double> values;
  for (int t = 0; t < T; ++t) {
    for (size_t k = 0; k < category_ids_.size(); ++k) {
      const double v = recall_[RecallIndex(t, static_cast<int>(k), area, max_dets_index)];
      if (v > -1) values.push_back(v);
    }
  }
  if (values.empty()) return -1.0;
  return NumpyPairwiseSum(values.data(), values.size()) / static_cast<double>(values.size());
}

const CocoEvaluator::Stats& CocoEvaluator::Summarize() {
  if (summarized_) return stats_;
  if (!accumulated_) Accumulate();
  stats_ = {
      SummarizeAp(kAllIous, kAreaAll, 2),   SummarizeAp(kIou50, kAreaAll, 2),
      SummarizeAp(kIou75, kAreaAll, 2),     SummarizeAp(kAllIous, kAreaSmall, 2),
      SummarizeAp(kAllIous, kAreaMedium, 2), SummarizeAp(kAllIous, kAreaLarge, 2),
      SummarizeAr(kAreaAll, 0),             SummarizeAr(kAreaAll, 1),
      SummarizeAr(kAreaAll, 2),             SummarizeAr(kAreaSmall, 2),
      SummarizeAr(kAreaMedium, 2),          SummarizeAr(kAreaLarge, 2),
  };
  summarized_ = true;
  return stats_;
}

std::vector<std::string> CocoEvaluator::SummaryLines(const Stats& stats) {
  struct Line {
    bool ap;
    const char* iou;
    int area;
    int max_dets;
  };
  static constexpr Line kLines[12] = {
      {true, "0.50:0.95", kAreaAll, 100},     {true, "0.50", kAreaAll, 100},
      {true, "0.75", kAreaAll, 100},          {true, "0.50:0.95", kAreaSmall, 100},
      {true, "0.50:0.95", kAreaMedium, 100},  {true, "0.50:0.95", kAreaLarge, 100},
      {false, "0.50:0.95", kAreaAll, 1},      {false, "0.50:0.95", kAreaAll, 10},
      {false, "0.50:0.95", kAreaAll, 100},    {false, "0.50:0.95", kAreaSmall, 100},
      {false, "0.50:0.95", kAreaMedium, 100}, {false, "0.50:0.95", kAreaLarge, 100},
  };
  std::vector<std::string> lines;
  char buf[160];
  for (int i = 0; i < 12; ++i) {
    const Line& l = kLines[i];
    // Python: ' {:<18} {} @[ IoU={:<9} | area={:>6s} | maxDets={:>3d} ] = {:0.3f}'
    std::snprintf(buf, sizeof(buf), " %-18s %s @[ IoU=%-9s | area=%6s | maxDets=%3d ] = %0.3f",
                  l.ap ? "Average Precision" : "Average Recall", l.ap ? "(AP)" : "(AR)", l.iou,
                  kAreaLabels[l.area], l.max_dets, stats[i]);
    lines.emplace_back(buf);
  }
  return lines;
}

}  // namespace ffyolo
