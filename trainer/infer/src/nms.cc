#include "ffyolo/nms.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "ffyolo/box_ops.h"

namespace ffyolo {

namespace {

// Boxes in score order, one array per coordinate, so the greedy scan walks
// memory in the order it visits the boxes.
template <typename T>
struct SortedBoxes {
  std::vector<T> x1, y1, x2, y2, area;
};

template <typename T>
SortedBoxes<T> GatherSorted(const at::Tensor& boxes, const std::vector<int64_t>& order) {
  const T* b = boxes.data_ptr<T>();
  SortedBoxes<T> s;
  const size_t n = order.size();
  for (std::vector<T>* v : {&s.x1, &s.y1, &s.x2, &s.y2, &s.area}) v->resize(n);
  for (size_t k = 0; k < n; ++k) {
    const T* r = b + 4 * order[k];
    s.x1[k] = r[0];
    s.y1[k] = r[1];
    s.x2[k] = r[2];
    s.y2[k] = r[3];
    s.area[k] = (r[2] - r[0]) * (r[3] - r[1]);
  }
  return s;
}

// Splits the sorted positions into groups whose x extents chain-overlap; boxes
// of different groups intersect with zero width, so their IoU is 0 (or NaN for
// empty boxes) and one never suppresses the other when the threshold is >= 0.
// Each group lists its positions in ascending (score) order. With class
// offsets every class falls into groups of its own.
template <typename T>
std::vector<std::vector<int64_t>> OverlapGroups(const SortedBoxes<T>& s) {
  const int64_t n = static_cast<int64_t>(s.x1.size());
  std::vector<int64_t> by_x1(n);
  std::iota(by_x1.begin(), by_x1.end(), 0);
  std::sort(by_x1.begin(), by_x1.end(), [&](int64_t a, int64_t b) { return s.x1[a] < s.x1[b]; });
  std::vector<int64_t> group_of(n);
  int64_t groups = 0;
  T reach = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t p = by_x1[k];
    if (k == 0 || s.x1[p] >= reach) {
      ++groups;
      reach = s.x2[p];
    } else {
      reach = std::max(reach, s.x2[p]);
    }
    group_of[p] = groups - 1;
  }
  std::vector<std::vector<int64_t>> members(groups);
  for (int64_t p = 0; p < n; ++p) members[group_of[p]].push_back(p);
  return members;
}

// A uniform grid over a group's extent, about box-sized cells. Two boxes that
// intersect with positive area share a cell, since the cell of a point is
// monotone in the point.
struct Grid {
  double x0 = 0, y0 = 0, cell_w = 1, cell_h = 1;
  int64_t cols = 1, rows = 1;

  int32_t Col(double x) const { return Clamp(std::floor((x - x0) / cell_w), cols); }
  int32_t Row(double y) const { return Clamp(std::floor((y - y0) / cell_h), rows); }

 private:
  static int32_t Clamp(double cell, int64_t cells) {
    return static_cast<int32_t>(std::min(std::max(cell, 0.0), static_cast<double>(cells - 1)));
  }
};

template <typename T>
Grid FitGrid(const SortedBoxes<T>& s, const std::vector<int64_t>& group) {
  double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY, sum_w = 0, sum_h = 0;
  for (int64_t p : group) {
    x0 = std::min<double>(x0, s.x1[p]);
    y0 = std::min<double>(y0, s.y1[p]);
    x1 = std::max<double>(x1, s.x2[p]);
    y1 = std::max<double>(y1, s.y2[p]);
    sum_w += std::max<double>(0, s.x2[p] - s.x1[p]);
    sum_h += std::max<double>(0, s.y2[p] - s.y1[p]);
  }
  const double m = static_cast<double>(group.size());
  const auto cells = [](double extent, double size) {
    return size > 0 && extent > 0 ? std::ceil(extent / size) : 1.0;
  };
  // Sparse groups of small boxes: at most ~2 cells per box.
  double cols = std::min(cells(x1 - x0, sum_w / m), 2 * m);
  double rows = std::min(cells(y1 - y0, sum_h / m), 2 * m);
  const double excess = std::sqrt(cols * rows / (2 * m));
  if (excess > 1) {
    cols = std::max(1.0, std::floor(cols / excess));
    rows = std::max(1.0, std::floor(rows / excess));
  }
  Grid g;
  g.x0 = x0;
  g.y0 = y0;
  g.cols = static_cast<int64_t>(cols);
  g.rows = static_cast<int64_t>(rows);
  if (x1 > x0) g.cell_w = (x1 - x0) / cols;
  if (y1 > y0) g.cell_h = (y1 - y0) / rows;
  return g;
}

// Greedy suppression over one group in score order. A box is kept unless a
// box kept before it has IoU > iou_threshold with it: torchvision's rule seen
// from the suppressed side, with its arithmetic (the kept box's area first).
// With `spatial`, kept boxes are bucketed in a grid and a box meets only those
// sharing one of its cells, which is exact for thresholds >= 0 (a box without
// cells, x2 < x1 or y2 < y1, intersects nothing); without it, every kept box.
template <typename T>
void KeepGroup(const SortedBoxes<T>& s, const std::vector<int64_t>& group, bool spatial,
               double iou_threshold, std::vector<uint8_t>* kept) {
  // A kept box as its cells hold it: a copy, so a scan reads memory in order,
  // and its first cell, so a pair sharing several cells is compared once (in
  // the first cell both cover).
  struct Entry {
    T x1, y1, x2, y2, area;
    int32_t row, col;
  };
  const Grid grid = spatial ? FitGrid(s, group) : Grid{};
  std::vector<std::vector<Entry>> cells(grid.cols * grid.rows);
  for (int64_t p : group) {
    int32_t c0 = 0, c1 = 0, r0 = 0, r1 = 0;
    if (spatial) {
      c0 = grid.Col(s.x1[p]);
      c1 = grid.Col(s.x2[p]);
      r0 = grid.Row(s.y1[p]);
      r1 = grid.Row(s.y2[p]);
    }
    const T x1 = s.x1[p], y1 = s.y1[p], x2 = s.x2[p], y2 = s.y2[p], area = s.area[p];
    bool suppressed = false;
    for (int32_t r = r0; r <= r1 && !suppressed; ++r) {
      for (int32_t c = c0; c <= c1 && !suppressed; ++c) {
        for (const Entry& k : cells[r * grid.cols + c]) {
          if (std::max(r0, k.row) != r || std::max(c0, k.col) != c) continue;
          const T w = std::max(static_cast<T>(0), std::min(k.x2, x2) - std::max(k.x1, x1));
          const T h = std::max(static_cast<T>(0), std::min(k.y2, y2) - std::max(k.y1, y1));
          const T inter = w * h;
          if (inter / (k.area + area - inter) > iou_threshold) {
            suppressed = true;
            break;
          }
        }
      }
    }
    if (suppressed) continue;
    (*kept)[p] = 1;
    for (int32_t r = r0; r <= r1; ++r) {
      for (int32_t c = c0; c <= c1; ++c) {
        cells[r * grid.cols + c].push_back({x1, y1, x2, y2, area, r0, c0});
      }
    }
  }
}

template <typename T>
std::vector<int64_t> KeepInScoreOrder(const at::Tensor& boxes, const std::vector<int64_t>& order,
                                      double iou_threshold) {
  const SortedBoxes<T> s = GatherSorted<T>(boxes, order);
  const auto finite = [](const std::vector<T>& v) {
    return std::all_of(v.begin(), v.end(),
                       [](T x) { return std::isfinite(static_cast<double>(x)); });
  };
  // Only boxes that intersect can suppress each other when the threshold is >= 0.
  const bool spatial =
      iou_threshold >= 0 && finite(s.x1) && finite(s.y1) && finite(s.x2) && finite(s.y2);
  std::vector<std::vector<int64_t>> groups;
  if (spatial) {
    groups = OverlapGroups(s);
  } else {
    groups.emplace_back(order.size());
    std::iota(groups[0].begin(), groups[0].end(), 0);
  }
  std::vector<uint8_t> kept(order.size(), 0);
  for (const std::vector<int64_t>& group : groups) {
    KeepGroup(s, group, spatial, iou_threshold, &kept);
  }
  std::vector<int64_t> keep;
  for (size_t p = 0; p < order.size(); ++p) {
    if (kept[p]) keep.push_back(order[p]);
  }
  return keep;
}

// The indices of the `limit` highest scores, by decreasing score, equal scores
// in index order: what a stable descending sort truncated to `limit` gives,
// without sorting all of a large candidate set. Scores are never NaN here
// (they passed a > comparison).
at::Tensor BestByScore(const at::Tensor& score, int64_t limit) {
  at::Tensor pick;
  if (score.size(0) <= limit) {
    pick = at::arange(score.size(0), score.options().dtype(at::kLong));
  } else {
    const at::Tensor kth =
        std::get<0>(score.topk(limit, 0, /*largest=*/true, /*sorted=*/false)).min();
    const at::Tensor above = (score > kth).nonzero().squeeze(1);
    const at::Tensor at_kth =
        (score == kth).nonzero().squeeze(1).narrow(0, 0, limit - above.size(0));
    pick = std::get<0>(at::sort(at::cat({above, at_kth})));
  }
  const at::Tensor order =
      std::get<1>(at::sort(score.index_select(0, pick), /*stable=*/true, 0, /*descending=*/true));
  return pick.index_select(0, order);
}

}  // namespace

at::Tensor Nms(const at::Tensor& boxes, const at::Tensor& scores, double iou_threshold) {
  TORCH_CHECK(boxes.dim() == 2 && boxes.size(1) == 4, "Nms: boxes must be (N, 4), got ",
              boxes.sizes());
  TORCH_CHECK(scores.dim() == 1 && scores.size(0) == boxes.size(0),
              "Nms: scores must be (N,) with N = ", boxes.size(0), ", got ", scores.sizes());
  const at::Tensor order_t =
      std::get<1>(at::sort(scores.to(at::kCPU), /*stable=*/true, /*dim=*/0, /*descending=*/true))
          .contiguous();
  const std::vector<int64_t> order(order_t.data_ptr<int64_t>(),
                                   order_t.data_ptr<int64_t>() + order_t.numel());
  const bool in_double = boxes.scalar_type() == at::kDouble;
  const at::Tensor cpu_boxes =
      boxes.to(at::kCPU, in_double ? at::kDouble : at::kFloat).contiguous();
  std::vector<int64_t> keep = in_double ? KeepInScoreOrder<double>(cpu_boxes, order, iou_threshold)
                                        : KeepInScoreOrder<float>(cpu_boxes, order, iou_threshold);
  return at::from_blob(keep.data(), {static_cast<int64_t>(keep.size())}, at::kLong)
      .clone()
      .to(boxes.device());
}

std::vector<at::Tensor> NonMaxSuppression(const at::Tensor& prediction, const NmsOptions& options) {
  TORCH_CHECK(prediction.dim() == 3 && prediction.size(2) > 5,
              "NonMaxSuppression: prediction must be (bs, N, 5 + nc), got ", prediction.sizes());
  const int64_t bs = prediction.size(0);
  const int64_t nc = prediction.size(2) - 5;
  const bool multi_label = options.multi_label && nc > 1;
  const at::Tensor candidates = prediction.select(2, 4) > options.conf_thres;

  std::vector<at::Tensor> output(bs, at::zeros({0, 6}, prediction.options()));
  for (int64_t xi = 0; xi < bs; ++xi) {
    const at::Tensor x = prediction[xi].index_select(0, candidates[xi].nonzero().squeeze(1));
    if (x.size(0) == 0) continue;
    const at::Tensor conf = x.narrow(1, 5, nc) * x.narrow(1, 4, 1);  // obj * cls

    // Detections as (row of x, class, conf), in x's row-major order.
    at::Tensor row, cls, score;
    if (multi_label) {
      const at::Tensor ij = (conf > options.conf_thres).nonzero();
      row = ij.select(1, 0);
      cls = ij.select(1, 1);
      score = conf.view(-1).index_select(0, row * nc + cls);
    } else {
      at::Tensor best;
      std::tie(best, cls) = conf.max(1);
      row = (best > options.conf_thres).nonzero().squeeze(1);
      cls = cls.index_select(0, row);
      score = best.index_select(0, row);
    }
    if (!options.classes.empty()) {  // before the kNmsMaxBoxes cut, as v7.0 filters
      const at::Tensor wanted = at::tensor(options.classes, cls.options());
      const at::Tensor kept = (cls.unsqueeze(1) == wanted.unsqueeze(0)).any(1).nonzero().squeeze(1);
      row = row.index_select(0, kept);
      cls = cls.index_select(0, kept);
      score = score.index_select(0, kept);
    }
    if (row.size(0) == 0) continue;

    const at::Tensor by_conf = BestByScore(score, kNmsMaxBoxes);
    const at::Tensor det =
        at::cat({XywhToXyxy(x.narrow(1, 0, 4).index_select(0, row.index_select(0, by_conf))),
                 score.index_select(0, by_conf).unsqueeze(1),
                 cls.index_select(0, by_conf).unsqueeze(1).to(x.scalar_type())},
                1);
    const at::Tensor offset = det.narrow(1, 5, 1) * (options.agnostic ? 0 : kNmsMaxWh);
    at::Tensor keep = Nms(det.narrow(1, 0, 4) + offset, det.select(1, 4), options.iou_thres);
    if (keep.size(0) > options.max_det) keep = keep.narrow(0, 0, options.max_det);
    output[xi] = det.index_select(0, keep);
  }
  return output;
}

}  // namespace ffyolo
