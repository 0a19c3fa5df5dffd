#include "ffyolo/memory_format.h"

#include <torch/torch.h>

namespace ffyolo {

c10::MemoryFormat TrainingMemoryFormat(bool channels_last) {
  return channels_last ? c10::MemoryFormat::ChannelsLast : c10::MemoryFormat::Contiguous;
}

void ToMemoryFormat(torch::nn::Module& model, c10::MemoryFormat format) {
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : model.parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(format));
}

}  // namespace ffyolo
