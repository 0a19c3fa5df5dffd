// A profile of the training step by kernel: each kernel's time summed over the
// profiled steps, grouped into the kinds of work the step's cost is argued in
// (docs/gpu.md), so that each change to the step is a prediction checked
// against where the time went.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ffyolo {

struct KernelTime {
  std::string name;     // as the profiler names it (a CUDA kernel's, or an operator's on the CPU)
  int64_t calls = 0;    // over all profiled steps
  double seconds = 0;   // device time over all profiled steps
};

// The kind of work a kernel does, from its name: "convolution", "layout change",
// "batch norm", "elementwise", "reduction", "multi-tensor" (the optimizer, EMA
// and clipping), "copy", or "other".
const char* KernelCategory(const std::string& name);

// Adds one event to `kernels` (by name), keeping the list's order of first appearance.
void AddKernelTime(const std::string& name, double seconds, std::vector<KernelTime>* kernels);

// Markdown: what was profiled (`what`), the time per step by category, then the
// `top` kernels by time, each with its calls and milliseconds per step and its
// share of all kernel time.
std::string KernelProfileMarkdown(const std::vector<KernelTime>& kernels, const std::string& what, int steps,
                                  size_t top);

}  // namespace ffyolo
