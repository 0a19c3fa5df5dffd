#include "ffyolo/modules/c3_module.h"

#include "ffyolo/modules/bottleneck_module.h"

namespace ffyolo {

C3Impl::C3Impl(const C3Args& args, const torch::nn::AnyModule& act) {
  const C3Layers layers = LayersOf(args);
  cv1 = register_module("cv1", Conv(layers.cv1, act));
  cv2 = register_module("cv2", Conv(layers.cv2, act));
  cv3 = register_module("cv3", Conv(layers.cv3, act));
  m = register_module("m", torch::nn::Sequential());
  for (int64_t i = 0; i < args.n; ++i) m->push_back(Bottleneck(layers.m, act));
}

torch::Tensor C3Impl::forward(const torch::Tensor& x) {
  return cv3->forward(torch::cat({m->forward(cv1->forward(x)), cv2->forward(x)}, 1));
}

FeatureShape C3Impl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const {
  FeatureShape inner = cv1->CountOps(inputs, counts);
  for (size_t i = 0; i < m->size(); ++i) inner = m->at<BottleneckImpl>(i).CountOps({inner}, counts);
  cv2->CountOps(inputs, counts);
  return cv3->CountOps({inner}, counts);
}

std::shared_ptr<torch::nn::Module> MakeModule(const C3Args& args, const torch::nn::AnyModule& act) {
  return C3(args, act).ptr();
}

}  // namespace ffyolo
