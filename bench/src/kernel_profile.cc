#include "ffyolo/kernel_profile.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <utility>

namespace ffyolo {
namespace {

// Checked in order: a layout change inside cuDNN is a layout change, not a convolution.
constexpr std::pair<const char*, const char*> kCategories[] = {
    {"layout change", "nchwtonhwc"},   {"layout change", "nhwctonchw"},  {"layout change", "transpose"},
    {"batch norm", "batch_norm"},      {"batch norm", "batchnorm"},      {"batch norm", "bn_fw"},
    {"batch norm", "bn_bw"},           {"batch norm", "welford"},        {"multi-tensor", "multi_tensor_apply"},
    {"multi-tensor", "foreach"},       {"convolution", "conv"},          {"convolution", "xmma"},
    {"convolution", "gemm"},           {"convolution", "cudnn"},         {"convolution", "cutlass"},
    {"convolution", "dgrad"},          {"convolution", "wgrad"},         {"reduction", "reduce"},
    {"copy", "copy"},                  {"copy", "memcpy"},               {"copy", "memset"},
    {"copy", "catarray"},              {"elementwise", "elementwise"},   {"elementwise", "silu"},
    {"elementwise", "sigmoid"},
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

template <class... Numbers>
std::string Format(const char* format, Numbers... numbers) {
  char line[64];
  std::snprintf(line, sizeof line, format, numbers...);
  return line;
}

}  // namespace

const char* KernelCategory(const std::string& name) {
  const std::string lower = Lower(name);
  for (const auto& [category, pattern] : kCategories)
    if (lower.find(pattern) != std::string::npos) return category;
  return "other";
}

void AddKernelTime(const std::string& name, double seconds, std::vector<KernelTime>* kernels) {
  auto it = std::find_if(kernels->begin(), kernels->end(), [&](const KernelTime& k) { return k.name == name; });
  if (it == kernels->end()) it = kernels->insert(kernels->end(), KernelTime{name, 0, 0});
  ++it->calls;
  it->seconds += seconds;
}

std::string KernelProfileMarkdown(const std::vector<KernelTime>& kernels, const std::string& what, int steps,
                                  size_t top) {
  double total = 0;
  std::map<std::string, std::pair<int64_t, double>> by_category;
  for (const KernelTime& k : kernels) {
    total += k.seconds;
    auto& [calls, seconds] = by_category[KernelCategory(k.name)];
    calls += k.calls;
    seconds += k.seconds;
  }
  const double per_step = 1e3 / std::max(steps, 1);
  const auto share = [&](double seconds) { return total > 0 ? 100 * seconds / total : 0.0; };
  std::string out = "Profiled: " + what + Format(", %.2f ms per step over %d steps.\n\n", total * per_step, steps);
  out += "| kind | kernels per step | ms per step | share |\n|---|---|---|---|\n";
  std::vector<std::pair<std::string, std::pair<int64_t, double>>> categories(by_category.begin(), by_category.end());
  std::sort(categories.begin(), categories.end(),
            [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  for (const auto& [category, sums] : categories)
    out += "| " + category + " | " + Format("%.0f | %.2f", static_cast<double>(sums.first) / std::max(steps, 1),
                                            sums.second * per_step) +
           Format(" | %.1f %% |\n", share(sums.second));
  std::vector<KernelTime> sorted = kernels;
  std::sort(sorted.begin(), sorted.end(), [](const KernelTime& a, const KernelTime& b) { return a.seconds > b.seconds; });
  sorted.resize(std::min(top, sorted.size()));
  out += "\n| kernel | kind | calls per step | ms per step | share |\n|---|---|---|---|---|\n";
  for (const KernelTime& k : sorted) {
    std::string name = k.name.size() > 100 ? k.name.substr(0, 97) + "..." : k.name;
    std::replace(name.begin(), name.end(), '|', '/');
    out += "| `" + name + "` | " + KernelCategory(k.name) + " | " +
           Format("%.1f | %.3f", static_cast<double>(k.calls) / std::max(steps, 1), k.seconds * per_step) +
           Format(" | %.1f %% |\n", share(k.seconds));
  }
  return out;
}

}  // namespace ffyolo
