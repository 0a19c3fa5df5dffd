#include "ffyolo/numa_binding.h"

#include <numaif.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <iterator>
#include <map>
#include <set>

#include "cpu_list.h"
#include "parse_text.h"
#include "sysfs.h"

namespace ffyolo {

using ffr::Status;

namespace {

// The allowed CPUs of one NUMA node, grouped into physical cores.
struct NodeCores {
  int node = -1;
  std::vector<std::vector<int>> cores;  // each sorted; cores ordered by their first CPU
};

std::vector<int> Intersect(const std::vector<int>& sorted_a, const std::vector<int>& sorted_b) {
  std::vector<int> out;
  std::set_intersection(sorted_a.begin(), sorted_a.end(), sorted_b.begin(), sorted_b.end(), std::back_inserter(out));
  return out;
}

// Groups `cpus` (sorted) into physical cores by their hyper-thread siblings; a
// CPU without topology information is a core of its own.
std::vector<std::vector<int>> GroupIntoCores(const std::string& sysfs_root, const std::vector<int>& cpus) {
  std::vector<std::vector<int>> cores;
  std::set<int> taken;
  for (int cpu : cpus) {
    if (taken.count(cpu) != 0) continue;
    std::string text;
    std::vector<int> siblings;
    const std::string path =
        sysfs_root + "/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list";
    if (!ReadSysfsValue(path, &text) || !ParseCpuList(text, &siblings)) siblings.clear();
    std::vector<int> core = Intersect(siblings, cpus);
    if (!std::binary_search(core.begin(), core.end(), cpu)) core = {cpu};
    std::vector<int> untaken;
    for (int c : core)
      if (taken.insert(c).second) untaken.push_back(c);
    cores.push_back(std::move(untaken));
  }
  return cores;
}

// The NUMA nodes with at least one allowed CPU. `why_none` is set instead
// when sysfs has no node directory.
Status ReadNodes(const NumaPlanOptions& options, std::vector<NodeCores>* nodes, std::string* why_none) {
  const std::string dir = options.sysfs_root + "/devices/system/node";
  std::vector<std::string> names;
  if (!ListSysfsDir(dir, &names)) {
    *why_none = dir + " is missing";
    return Status::OK();
  }
  std::vector<int> allowed = options.allowed_cpus;
  std::sort(allowed.begin(), allowed.end());
  for (const std::string& name : names) {
    int node = 0;
    if (name.compare(0, 4, "node") != 0 || !ParseInt(name.substr(4), &node) || node < 0) continue;
    const std::string path = dir + "/" + name + "/cpulist";
    std::string text;
    std::vector<int> cpus;
    if (!ReadSysfsValue(path, &text)) return Status::NotFound(path + ": cannot read the node's CPU list");
    if (!ParseCpuList(text, &cpus)) return Status::Corruption(path + ": '" + text + "' is not a CPU list");
    if (!allowed.empty()) cpus = Intersect(cpus, allowed);
    if (cpus.empty()) continue;
    nodes->push_back({node, GroupIntoCores(options.sysfs_root, cpus)});
  }
  std::sort(nodes->begin(), nodes->end(), [](const NodeCores& a, const NodeCores& b) { return a.node < b.node; });
  return Status::OK();
}

// The NUMA node sysfs reports for a PCI device; -1 when it reports none.
Status ReadPciNumaNode(const std::string& sysfs_root, const std::string& pci_id, int* node) {
  const std::string path = sysfs_root + "/bus/pci/devices/" + pci_id + "/numa_node";
  std::string text;
  if (!ReadSysfsValue(path, &text)) return Status::NotFound(path + ": no such GPU in sysfs");
  if (!ParseInt(text, node) || *node < -1) return Status::Corruption(path + ": '" + text + "' is not a node number");
  return Status::OK();
}

// Gives the workers `ranks` (ascending) on one node consecutive shares of its
// cores, the lowest ranks one core more when they do not divide evenly.
void SplitNode(const NodeCores& node, const std::vector<int>& ranks, std::vector<NumaBinding>* plan) {
  const size_t n = ranks.size();
  const size_t cores = node.cores.size();
  size_t next = 0;
  for (size_t j = 0; j < n; ++j) {
    size_t begin = 0, count = cores;  // too few cores to split: every worker gets the whole node
    if (cores >= n) {
      begin = next;
      count = cores / n + (j < cores % n ? 1 : 0);
      next += count;
    }
    NumaBinding& binding = (*plan)[ranks[j]];
    binding.node = node.node;
    for (size_t c = begin; c < begin + count; ++c)
      binding.cpus.insert(binding.cpus.end(), node.cores[c].begin(), node.cores[c].end());
    std::sort(binding.cpus.begin(), binding.cpus.end());
  }
}

std::string Unbound(const std::string& why) { return "NUMA binding off: " + why; }

}  // namespace

Status PlanNumaBinding(const NumaPlanOptions& options, std::vector<NumaBinding>* plan, std::string* plan_text) {
  const int n = options.local_world_size;
  if (n < 1) return Status::InvalidArgument("NUMA plan for " + std::to_string(n) + " local workers");
  const bool gpu_run = !options.gpu_pci_ids.empty();
  if (gpu_run && static_cast<int>(options.gpu_pci_ids.size()) < n)
    return Status::InvalidArgument("NUMA plan: " + std::to_string(options.gpu_pci_ids.size()) + " GPUs for " +
                                   std::to_string(n) + " local workers");
  plan->assign(n, NumaBinding());

  std::vector<NodeCores> nodes;
  std::string why_none;
  FFR_RETURN_IF_ERROR(ReadNodes(options, &nodes, &why_none));
  if (!why_none.empty()) {
    *plan_text = Unbound(why_none);
    return Status::OK();
  }
  if (nodes.size() <= 1) {
    *plan_text = Unbound(nodes.empty() ? "no NUMA node has CPUs this process may use"
                                       : "only node " + std::to_string(nodes[0].node) +
                                             " has CPUs this process may use");
    return Status::OK();
  }

  // Which node each worker goes to (-1: none usable), then the ranks per node.
  std::vector<int> node_of(n, -1);
  std::vector<std::string> note(n);
  if (gpu_run) {
    bool any_reported = false;
    for (int i = 0; i < n; ++i) {
      FFR_RETURN_IF_ERROR(ReadPciNumaNode(options.sysfs_root, options.gpu_pci_ids[i], &node_of[i]));
      any_reported = any_reported || node_of[i] >= 0;
      node_of[i] = std::max(node_of[i], 0);
      note[i] = " (GPU " + options.gpu_pci_ids[i] + ")";
    }
    if (!any_reported) {
      plan->assign(n, NumaBinding());
      *plan_text = Unbound("the GPUs report no NUMA node (numa_node -1)");
      return Status::OK();
    }
  } else {
    for (int i = 0; i < n; ++i) node_of[i] = nodes[i % nodes.size()].node;
  }
  std::map<int, std::vector<int>> ranks_on_node;
  for (int i = 0; i < n; ++i) ranks_on_node[node_of[i]].push_back(i);
  for (const NodeCores& node : nodes) {
    auto it = ranks_on_node.find(node.node);
    if (it != ranks_on_node.end()) SplitNode(node, it->second, plan);
  }

  plan_text->clear();
  for (int i = 0; i < n; ++i) {
    const NumaBinding& b = (*plan)[i];
    if (i > 0) *plan_text += '\n';
    *plan_text += "local rank " + std::to_string(i) + " -> ";
    *plan_text += b.node < 0 ? "unbound, node " + std::to_string(node_of[i]) + " has no CPUs this process may use"
                             : "node " + std::to_string(b.node) + ", cpus " + FormatCpuList(b.cpus);
    *plan_text += note[i];
  }
  return Status::OK();
}

std::vector<int> AffinityCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

int ApplyNumaBinding(const NumaBinding& binding) {
  int first_error = 0;
  if (!binding.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    int err = 0;
    for (int cpu : binding.cpus) {
      if (cpu < 0 || cpu >= CPU_SETSIZE) {
        err = EINVAL;
        break;
      }
      CPU_SET(cpu, &set);
    }
    if (err == 0 && sched_setaffinity(0, sizeof(set), &set) != 0) err = errno;
    first_error = err;
  }
  if (binding.node >= 0) {
    constexpr int kMaxNodes = 1024;
    constexpr int kBitsPerWord = sizeof(unsigned long) * CHAR_BIT;
    unsigned long mask[kMaxNodes / kBitsPerWord] = {};
    int err = 0;
    if (binding.node >= kMaxNodes) {
      err = EINVAL;
    } else {
      mask[binding.node / kBitsPerWord] = 1UL << (binding.node % kBitsPerWord);
      // The kernel reads maxnode - 1 bits, hence the + 1 (as libnuma does).
      if (syscall(SYS_set_mempolicy, MPOL_PREFERRED, mask, kMaxNodes + 1) != 0) err = errno;
    }
    if (first_error == 0) first_error = err;
  }
  return first_error;
}

}  // namespace ffyolo
