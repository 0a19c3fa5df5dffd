// A profile of the training step by kernel: each kernel's time summed over the
// profiled steps, grouped into the kinds of work the step's cost is argued in
// (docs/gpu.md), so that each change to the step is a prediction checked
// against where the time went.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ffyolo {

struct KernelTime {
  std::string name;     // as the profiler names it (a CUDA kernel's, or an operator's on the CPU)
  int64_t calls = 0;    // over all profiled steps
  double seconds = 0;   // device time over all profiled steps
  std::map<std::string, int64_t> launchers;  // calls by the operators that launched it, where known
};

// An operator as the profiler saw it on a host thread.
struct HostOp {
  std::string name;
  uint64_t thread = 0;
  int64_t start_ns = 0, end_ns = 0;
  uint64_t correlation = 0;  // what the kernels it launched link to
};

// Which operators launched a kernel: the outermost operator running on its thread around the one that
// launched it, then that one ("aten::contiguous > aten::copy_"; the name alone when it is the outermost).
class KernelLaunchers {
 public:
  explicit KernelLaunchers(std::vector<HostOp> ops);
  // "" for a correlation no operator has (a CUDA graph's kernels, launched by its replay).
  std::string Of(uint64_t correlation) const;

 private:
  std::map<uint64_t, std::string> chains_;
};

// The kind of work a kernel does, from its name: "convolution", "layout change",
// "batch norm", "elementwise", "reduction", "multi-tensor" (the optimizer, EMA
// and clipping), "copy", or "other".
const char* KernelCategory(const std::string& name);

// Adds one event to `kernels` (by name), keeping the list's order of first appearance; `launcher`
// (KernelLaunchers::Of), when not empty, is counted among the kernel's launchers.
void AddKernelTime(const std::string& name, double seconds, std::vector<KernelTime>* kernels,
                   const std::string& launcher = "");

// Markdown: what was profiled (`what`), the time per step by category, then the
// `top` kernels by time, each with its calls and milliseconds per step, its
// share of all kernel time and the operators that launched it most, then, where
// launchers are known, the `top` launchers by the kernel time they launched.
std::string KernelProfileMarkdown(const std::vector<KernelTime>& kernels, const std::string& what, int steps,
                                  size_t top);

}  // namespace ffyolo
