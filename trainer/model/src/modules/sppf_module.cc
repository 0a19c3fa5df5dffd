#include "ffyolo/modules/sppf_module.h"

namespace ffyolo {

SPPFImpl::SPPFImpl(const SPPFArgs& args, const torch::nn::AnyModule& act) {
  const SPPFLayers layers = LayersOf(args);
  cv1 = register_module("cv1", Conv(layers.cv1, act));
  cv2 = register_module("cv2", Conv(layers.cv2, act));
  m = register_module("m", torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(args.k).stride(1).padding(args.k / 2)));
}

torch::Tensor SPPFImpl::forward(const torch::Tensor& x) {
  const torch::Tensor y0 = cv1->forward(x);
  const torch::Tensor y1 = m->forward(y0);
  const torch::Tensor y2 = m->forward(y1);
  return cv2->forward(torch::cat({y0, y1, y2, m->forward(y2)}, 1));
}

FeatureShape SPPFImpl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const {
  return cv2->CountOps({cv1->CountOps(inputs, counts)}, counts);
}

std::shared_ptr<torch::nn::Module> MakeModule(const SPPFArgs& args, const torch::nn::AnyModule& act) {
  return SPPF(args, act).ptr();
}

}  // namespace ffyolo
