// The memory format a run trains in: NCHW, or NHWC with --channels-last, where the GPU's tensor-core
// convolutions read their operands without a layout change (docs/gpu.md). The format is the weights'
// and the batches' (BatchTransfer writes them in it); every layer keeps the format of its input.
#pragma once

#include <c10/core/MemoryFormat.h>

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace ffyolo {

// Contiguous (NCHW) or ChannelsLast (NHWC).
c10::MemoryFormat TrainingMemoryFormat(bool channels_last);

// Every 4-d parameter of `model` in `format`, in place: before the optimizer and the EMA take them
// (torch::nn::Module::to takes no memory format).
void ToMemoryFormat(torch::nn::Module& model, c10::MemoryFormat format);

}  // namespace ffyolo
