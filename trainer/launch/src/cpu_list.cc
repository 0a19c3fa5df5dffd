#include "cpu_list.h"

#include <algorithm>

#include "parse_text.h"

namespace ffyolo {

// Far beyond any machine; stops a corrupt "0-2000000000" from filling memory.
constexpr int kMaxCpus = 1 << 16;

bool ParseCpuList(const std::string& text, std::vector<int>* cpus) {
  const size_t first = text.find_first_not_of(" \t\n");
  const size_t last = text.find_last_not_of(" \t\n");
  std::vector<int> out;
  if (first != std::string::npos) {
    for (const std::string& range : SplitCommas(text.substr(first, last - first + 1))) {
      const size_t dash = range.find('-');
      int lo = 0, hi = 0;
      if (dash == std::string::npos) {
        if (!ParseInt(range, &lo)) return false;
        hi = lo;
      } else if (!ParseInt(range.substr(0, dash), &lo) || !ParseInt(range.substr(dash + 1), &hi)) {
        return false;
      }
      if (lo < 0 || hi < lo || hi >= kMaxCpus) return false;
      for (int cpu = lo; cpu <= hi; ++cpu) out.push_back(cpu);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  *cpus = std::move(out);
  return true;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace ffyolo
