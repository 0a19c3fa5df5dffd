#include "ffyolo/quad_collate.h"

#include <torch/torch.h>

#include "ffyolo/random.h"

namespace ffyolo {

std::vector<bool> DrawQuadUpsample(uint64_t seed, int64_t epoch, int rank, int64_t batch, int groups) {
  std::vector<bool> out(groups);
  for (int g = 0; g < groups; ++g) {
    SampleRandom rng({seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(rank), static_cast<uint64_t>(batch),
                      static_cast<uint64_t>(g), 0x9ad4ull});
    out[g] = rng.Uniform() < 0.5;
  }
  return out;
}

void QuadCollate(const at::Tensor& images, const at::Tensor& targets, const std::vector<bool>& upsample,
                 at::Tensor* quad_images, at::Tensor* quad_targets) {
  namespace F = torch::nn::functional;
  const int64_t groups = images.size(0) / 4;
  // collate_fn4 works on the uint8 images: back to whole pixel values (exact in float) for the interpolation
  // and its truncation, then / 255 as the batch was.
  const torch::Tensor pixels = (images * 255).round_();
  const torch::Tensor image_of = targets.select(1, 0);
  const auto targets_of = [&](int64_t i) { return targets.index({image_of == static_cast<double>(i)}); };
  const torch::Tensor ho = torch::tensor({0.0, 0.0, 0.0, 1.0, 0.0, 0.0}, targets.options()).view({1, 6});
  const torch::Tensor wo = torch::tensor({0.0, 0.0, 1.0, 0.0, 0.0, 0.0}, targets.options()).view({1, 6});
  const torch::Tensor s = torch::tensor({1.0, 1.0, 0.5, 0.5, 0.5, 0.5}, targets.options()).view({1, 6});
  std::vector<torch::Tensor> im4, label4;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t i = 4 * g;
    torch::Tensor im, lb;
    if (upsample[g]) {
      im = F::interpolate(pixels.narrow(0, i, 1),
                          F::InterpolateFuncOptions()
                              .scale_factor(std::vector<double>{2.0, 2.0})
                              .mode(torch::kBilinear)
                              .align_corners(false))[0]
               .trunc_();
      lb = targets_of(i).clone();
    } else {
      im = torch::cat({torch::cat({pixels[i], pixels[i + 1]}, 1), torch::cat({pixels[i + 2], pixels[i + 3]}, 1)}, 2);
      lb = torch::cat({targets_of(i), targets_of(i + 1) + ho, targets_of(i + 2) + wo, targets_of(i + 3) + ho + wo}, 0) *
           s;
    }
    lb.select(1, 0).fill_(static_cast<double>(g));
    im4.push_back(im);
    label4.push_back(lb);
  }
  *quad_images = torch::stack(im4, 0).div_(255);
  *quad_targets = label4.empty() ? targets.new_zeros({0, 6}) : torch::cat(label4, 0);
}

}  // namespace ffyolo
