#include "ffyolo/modules/bottleneck_module.h"

namespace ffyolo {

BottleneckImpl::BottleneckImpl(const BottleneckArgs& args, const torch::nn::AnyModule& act)
    : add_(args.shortcut && args.c1 == args.c2) {
  const BottleneckLayers layers = LayersOf(args);
  cv1 = register_module("cv1", Conv(layers.cv1, act));
  cv2 = register_module("cv2", Conv(layers.cv2, act));
}

torch::Tensor BottleneckImpl::forward(const torch::Tensor& x) {
  torch::Tensor y = cv2->forward(cv1->forward(x));
  return add_ ? x + y : y;
}

FeatureShape BottleneckImpl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const {
  return cv2->CountOps({cv1->CountOps(inputs, counts)}, counts);
}

std::shared_ptr<torch::nn::Module> MakeModule(const BottleneckArgs& args, const torch::nn::AnyModule& act) {
  return Bottleneck(args, act).ptr();
}

}  // namespace ffyolo
