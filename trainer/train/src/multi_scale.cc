#include "ffyolo/multi_scale.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ffyolo/random.h"

namespace ffyolo {
namespace {

// Keeps the sizes' stream apart from the loader's, which is keyed by the same seed.
constexpr uint64_t kMultiScaleStream = 0x6d756c74692d7363ull;

}  // namespace

int MultiScaleSize(int img_size, int gs, uint64_t seed, int64_t ni) {
  const int lo = img_size / 2, hi = img_size + img_size / 2 + gs;  // randrange's [start, stop)
  SampleRandom random({kMultiScaleStream, seed, static_cast<uint64_t>(ni)});
  const int size = lo + static_cast<int>(random.Below(static_cast<uint64_t>(hi - lo)));
  return size / gs * gs;
}

at::Tensor MultiScaleResize(const at::Tensor& images, int size, int gs) {
  const double sf = static_cast<double>(size) / std::max(images.size(2), images.size(3));
  if (sf == 1) return images;
  std::vector<int64_t> shape;
  for (int d : {2, 3}) shape.push_back(static_cast<int64_t>(std::ceil(images.size(d) * sf / gs)) * gs);
  namespace F = torch::nn::functional;
  return F::interpolate(images, F::InterpolateFuncOptions().size(shape).mode(torch::kBilinear).align_corners(false));
}

}  // namespace ffyolo
