#include "ffyolo/rect_batches.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ffyolo {

namespace {

// np.ceil(shape * img_size / stride + pad).astype(int) * stride, in the same order of operations.
int BatchSide(double shape, int img_size, int stride, double pad) {
  return static_cast<int>(std::ceil(shape * img_size / stride + pad)) * stride;
}

}  // namespace

RectBatches PlanRectBatches(const std::vector<int>& widths, const std::vector<int>& heights, int batch_size,
                            int img_size, int stride, double pad) {
  const size_t n = widths.size();
  std::vector<double> ar(n);
  for (size_t i = 0; i < n; ++i) ar[i] = static_cast<double>(heights[i]) / widths[i];

  RectBatches out;
  out.order.resize(n);
  std::iota(out.order.begin(), out.order.end(), int64_t{0});
  // numpy's argsort is not stable; ties have equal ratios, so the batch shapes
  // do not depend on how they are broken, and a stable sort makes it deterministic.
  std::stable_sort(out.order.begin(), out.order.end(), [&](int64_t a, int64_t b) { return ar[a] < ar[b]; });

  const size_t bs = static_cast<size_t>(batch_size);
  for (size_t first = 0; first < n; first += bs) {
    const size_t last = std::min(n, first + bs) - 1;
    const double mini = ar[out.order[first]], maxi = ar[out.order[last]];
    double shape_h = 1, shape_w = 1;
    if (maxi < 1) {
      shape_h = maxi;
    } else if (mini > 1) {
      shape_w = 1 / mini;
    }
    out.shapes.emplace_back(BatchSide(shape_h, img_size, stride, pad), BatchSide(shape_w, img_size, stride, pad));
  }
  return out;
}

RectBatches RankShare(const RectBatches& plan, int batch_size, int rank, int world_size) {
  RectBatches out;
  const size_t bs = static_cast<size_t>(batch_size);
  for (size_t b = static_cast<size_t>(rank); b < plan.shapes.size(); b += static_cast<size_t>(world_size)) {
    const size_t first = b * bs, end = std::min(plan.order.size(), first + bs);
    out.order.insert(out.order.end(), plan.order.begin() + static_cast<std::ptrdiff_t>(first),
                     plan.order.begin() + static_cast<std::ptrdiff_t>(end));
    out.shapes.push_back(plan.shapes[b]);
  }
  return out;
}

RectBatches ContiguousRankShare(const RectBatches& plan, int batch_size, int rank, int world_size) {
  const int64_t n = static_cast<int64_t>(plan.order.size());
  // ContiguousDistributedSampler: unit batches when one batch spans the split, each rank a run of whole batches,
  // the first (batches mod ranks) ranks one more.
  const int64_t unit = batch_size >= n ? 1 : batch_size;
  const int64_t batches = (n + unit - 1) / unit, base = batches / world_size, extra = batches % world_size;
  const int64_t first_batch = rank * base + std::min<int64_t>(rank, extra);
  const int64_t end_batch = first_batch + base + (rank < extra ? 1 : 0);
  const int64_t first = std::min(first_batch * unit, n), end = std::min(end_batch * unit, n);
  RectBatches out;
  out.order.assign(plan.order.begin() + first, plan.order.begin() + end);
  for (int64_t k = first; k < end; k += batch_size) out.shapes.push_back(plan.shapes[k / batch_size]);
  return out;
}

}  // namespace ffyolo
