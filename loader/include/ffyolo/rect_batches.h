// Rectangular batches (YOLOv5 rect=True, always used for validation): images
// sorted by aspect ratio, one padded shape per batch, computed from sizes alone.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace ffyolo {

struct RectBatches {
  std::vector<int64_t> order;  // dataset indices sorted by h/w (stable)
  // (height, width) of each batch of `batch_size` consecutive entries of `order`.
  std::vector<std::pair<int, int>> shapes;
};

// widths/heights: original image sizes. shapes = ceil(shape * img_size / stride + pad) * stride.
RectBatches PlanRectBatches(const std::vector<int>& widths, const std::vector<int>& heights, int batch_size,
                            int img_size, int stride, double pad);

}  // namespace ffyolo
