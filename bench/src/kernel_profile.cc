#include "ffyolo/kernel_profile.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <tuple>
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

// Text for a Markdown cell: at most `width` characters, no column separator.
std::string Cell(std::string text, size_t width) {
  if (text.size() > width) text = text.substr(0, width - 3) + "...";
  std::replace(text.begin(), text.end(), '|', '/');
  return text;
}

// The launcher with the most calls, and how many others there are.
std::string MostCalls(const std::map<std::string, int64_t>& launchers) {
  if (launchers.empty()) return "";
  const auto most = std::max_element(launchers.begin(), launchers.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  const size_t others = launchers.size() - 1;
  return Cell(most->first, 80) + (others > 0 ? " (+" + std::to_string(others) + " more)" : "");
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

KernelLaunchers::KernelLaunchers(std::vector<HostOp> ops) {
  // By thread, then start; an enclosing operator before those it encloses.
  std::sort(ops.begin(), ops.end(), [](const HostOp& a, const HostOp& b) {
    return std::tie(a.thread, a.start_ns, b.end_ns) < std::tie(b.thread, b.start_ns, a.end_ns);
  });
  std::vector<const HostOp*> open;  // the operators running around the current one, outermost first
  for (const HostOp& op : ops) {
    while (!open.empty() && (open.back()->thread != op.thread || open.back()->end_ns <= op.start_ns)) open.pop_back();
    const HostOp* outermost = open.empty() ? &op : open.front();
    chains_[op.correlation] = outermost == &op ? op.name : outermost->name + " > " + op.name;
    open.push_back(&op);
  }
}

std::string KernelLaunchers::Of(uint64_t correlation) const {
  const auto it = chains_.find(correlation);
  return it == chains_.end() ? "" : it->second;
}

void AddKernelTime(const std::string& name, double seconds, std::vector<KernelTime>* kernels,
                   const std::string& launcher) {
  auto it = std::find_if(kernels->begin(), kernels->end(), [&](const KernelTime& k) { return k.name == name; });
  if (it == kernels->end()) it = kernels->insert(kernels->end(), KernelTime{name, 0, 0, {}});
  ++it->calls;
  it->seconds += seconds;
  if (!launcher.empty()) ++it->launchers[launcher];
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
  out += "\n| kernel | kind | calls per step | ms per step | share | launched by |\n|---|---|---|---|---|---|\n";
  for (const KernelTime& k : sorted) {
    out += "| `" + Cell(k.name, 100) + "` | " + KernelCategory(k.name) + " | " +
           Format("%.1f | %.3f", static_cast<double>(k.calls) / std::max(steps, 1), k.seconds * per_step) +
           Format(" | %.1f %% | ", share(k.seconds)) + MostCalls(k.launchers) + " |\n";
  }
  // Each kernel's time shared among its launchers by their calls.
  std::map<std::string, double> by_launcher;
  for (const KernelTime& k : kernels)
    for (const auto& [launcher, calls] : k.launchers)
      by_launcher[launcher] += k.seconds * static_cast<double>(calls) / static_cast<double>(k.calls);
  if (by_launcher.empty()) return out;
  std::vector<std::pair<std::string, double>> launchers(by_launcher.begin(), by_launcher.end());
  std::sort(launchers.begin(), launchers.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  launchers.resize(std::min(top, launchers.size()));
  out += "\n| launched by | ms per step | share |\n|---|---|---|\n";
  for (const auto& [launcher, seconds] : launchers)
    out += "| " + Cell(launcher, 120) + Format(" | %.3f | %.1f %% |\n", seconds * per_step, share(seconds));
  return out;
}

}  // namespace ffyolo
