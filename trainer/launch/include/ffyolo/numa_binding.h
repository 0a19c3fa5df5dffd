// Which CPUs and memory node each local worker gets, so that a worker's
// loader and torch threads run next to its GPU and do not fight another
// rank's threads for the same cores. Everything comes from sysfs: no CUDA,
// no libnuma.
#pragma once

#include <string>
#include <vector>

#include "ffyolo/dist_env.h"
#include "ffr/status.h"

namespace ffyolo {

// One worker's binding. node -1 / cpus empty: leave that part as it is.
struct NumaBinding {
  int node = -1;
  std::vector<int> cpus;
};

struct NumaPlanOptions {
  std::string sysfs_root = "/sys";       // tests point this at a fake tree
  int local_world_size = 1;
  std::vector<std::string> gpu_pci_ids;  // per local rank, "0000:3b:00.0"; empty: a CPU-only run
  std::vector<int> allowed_cpus;         // the launcher's affinity; empty: no restriction
};

// Plans one binding per local rank.
// GPU run: worker i goes to the NUMA node of its GPU
// (<sysfs>/bus/pci/devices/<id>/numa_node, -1 read as node 0). CPU run:
// workers go round-robin over the nodes that have allowed CPUs. Either way a
// node's allowed CPUs (<sysfs>/devices/system/node/node<N>/cpulist) are split
// evenly among the workers bound to it, whole physical cores at a time (hyper-
// thread siblings from cpu<K>/topology/thread_siblings_list stay together), in
// CPU order, the lowest ranks taking the remainder; when a node has fewer
// cores than workers, each of them gets all of the node's CPUs. A GPU whose
// node has no allowed CPUs leaves its worker unbound.
// Degrades to "leave every worker as is" when there is no
// <sysfs>/devices/system/node, when at most one node has allowed CPUs, or when
// every GPU reports numa_node -1; `plan_text` then says why. Otherwise
// `plan_text` has one line per worker: "local rank 0 -> node 1, cpus 8-15".
// Errors: fewer GPU ids than workers (InvalidArgument), a GPU missing from
// sysfs (NotFound), unreadable cpulist / numa_node contents (Corruption).
ffr::Status PlanNumaBinding(const NumaPlanOptions& options, std::vector<NumaBinding>* plan,
                            std::string* plan_text);

// The NVIDIA GPUs' PCI ids (vendor 0x10de, class 0x03xxxx under
// <sysfs>/bus/pci/devices) in PCI bus order, which is CUDA's order under
// CUDA_DEVICE_ORDER=PCI_BUS_ID. When CUDA_VISIBLE_DEVICES in `env` is a list of
// indices it selects and reorders them as CUDA does (stopping at the first
// invalid or repeated index; "" hides all); other forms (GPU-<uuid>, MIG-...)
// leave the list as is. No CUDA calls.
std::vector<std::string> ListGpuPciIds(const std::string& sysfs_root, const EnvMap& env);

// The CPUs the calling thread may run on (sched_getaffinity), ascending: what
// NumaPlanOptions::allowed_cpus should hold for the launcher itself.
std::vector<int> AffinityCpus();

// Applies `binding` to the calling thread, and so to threads and programs it
// starts afterwards: sched_setaffinity for the CPUs, a preferred (not strict)
// memory policy for the node. Tries both parts and returns 0 or the errno of
// the first that failed (EINVAL for a CPU or node beyond 1023). Only system
// calls, no allocation: safe between fork and exec.
int ApplyNumaBinding(const NumaBinding& binding);

}  // namespace ffyolo
