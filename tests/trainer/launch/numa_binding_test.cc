#include "ffyolo/numa_binding.h"

#include <gtest/gtest.h>
#include <numaif.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <filesystem>
#include <functional>

#include "testing/test_env.h"

namespace ffyolo {

bool operator==(const NumaBinding& a, const NumaBinding& b) { return a.node == b.node && a.cpus == b.cpus; }

void PrintTo(const NumaBinding& b, std::ostream* os) {
  *os << "{node " << b.node << ", cpus";
  for (int c : b.cpus) *os << " " << c;
  *os << "}";
}

namespace {

using testing::ScratchDir;
using testing::WriteStringToFile;

std::vector<int> Range(int first, int last) {
  std::vector<int> cpus;
  for (int c = first; c <= last; ++c) cpus.push_back(c);
  return cpus;
}

NumaBinding Bound(int node, std::vector<int> cpus) { return NumaBinding{node, std::move(cpus)}; }

const NumaBinding kUnbound;

// A sysfs tree in a scratch directory with just the files the planner reads.
class FakeSysfs {
 public:
  FakeSysfs() : dir_("sysfs") {}
  const std::string& root() const { return dir_.path(); }

  void AddNode(int node, const std::string& cpulist) {
    Write("devices/system/node/node" + std::to_string(node) + "/cpulist", cpulist);
  }
  void AddSiblings(int cpu, const std::string& siblings) {
    Write("devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list", siblings);
  }
  void AddPciDevice(const std::string& id, const std::string& vendor, const std::string& device_class,
                    int numa_node) {
    const std::string dir = "bus/pci/devices/" + id + "/";
    Write(dir + "vendor", vendor);
    Write(dir + "class", device_class);
    Write(dir + "numa_node", std::to_string(numa_node));
  }
  void AddGpu(const std::string& id, int numa_node) { AddPciDevice(id, "0x10de", "0x030200", numa_node); }
  // Two nodes of eight CPUs (0-7, 8-15), plus the non-node entries real sysfs has.
  void AddTwoNodes() {
    AddNode(0, "0-7");
    AddNode(1, "8-15");
    Write("devices/system/node/online", "0-1");
    Write("devices/system/node/possible", "0-1");
  }

 private:
  void Write(const std::string& relative, const std::string& text) {
    const std::string path = dir_ / relative;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    ASSERT_TRUE(WriteStringToFile(path, text + "\n")) << path;
  }

  ScratchDir dir_;
};

struct Plan {
  ffr::Status status;
  std::vector<NumaBinding> bindings;
  std::string text;
};

Plan MakePlan(const FakeSysfs& sysfs, int workers, std::vector<std::string> gpus = {},
              std::vector<int> allowed = {}) {
  NumaPlanOptions options;
  options.sysfs_root = sysfs.root();
  options.local_world_size = workers;
  options.gpu_pci_ids = std::move(gpus);
  options.allowed_cpus = std::move(allowed);
  Plan plan;
  plan.status = PlanNumaBinding(options, &plan.bindings, &plan.text);
  return plan;
}

void ExpectUnbound(const Plan& plan, int workers, const std::string& why) {
  ASSERT_TRUE(plan.status.ok()) << plan.status.ToString();
  EXPECT_EQ(plan.bindings, std::vector<NumaBinding>(workers, kUnbound));
  EXPECT_NE(plan.text.find(why), std::string::npos) << plan.text;
}

TEST(PlanNumaBindingTest, TwoGpusPerNodeSplitTheirNode) {
  FakeSysfs sysfs;
  sysfs.AddTwoNodes();
  sysfs.AddGpu("0000:1a:00.0", 0);
  sysfs.AddGpu("0000:3b:00.0", 0);
  sysfs.AddGpu("0000:86:00.0", 1);
  sysfs.AddGpu("0000:af:00.0", 1);
  const Plan plan = MakePlan(sysfs, 4, {"0000:1a:00.0", "0000:3b:00.0", "0000:86:00.0", "0000:af:00.0"});
  ASSERT_TRUE(plan.status.ok()) << plan.status.ToString();
  EXPECT_EQ(plan.bindings, (std::vector<NumaBinding>{Bound(0, Range(0, 3)), Bound(0, Range(4, 7)),
                                                     Bound(1, Range(8, 11)), Bound(1, Range(12, 15))}));
  EXPECT_NE(plan.text.find("local rank 2 -> node 1, cpus 8-11 (GPU 0000:86:00.0)"), std::string::npos)
      << plan.text;
}

TEST(PlanNumaBindingTest, InterleavedGpusFollowTheirNodes) {
  FakeSysfs sysfs;
  sysfs.AddTwoNodes();
  sysfs.AddGpu("0000:01:00.0", 1);
  sysfs.AddGpu("0000:02:00.0", 0);
  sysfs.AddGpu("0000:03:00.0", 1);
  sysfs.AddGpu("0000:04:00.0", 0);
  const Plan plan = MakePlan(sysfs, 4, {"0000:01:00.0", "0000:02:00.0", "0000:03:00.0", "0000:04:00.0"});
  ASSERT_TRUE(plan.status.ok()) << plan.status.ToString();
  EXPECT_EQ(plan.bindings, (std::vector<NumaBinding>{Bound(1, Range(8, 11)), Bound(0, Range(0, 3)),
                                                     Bound(1, Range(12, 15)), Bound(0, Range(4, 7))}));
}

TEST(PlanNumaBindingTest, GpusAllOnOneNodeShareItUnevenly) {
  FakeSysfs sysfs;
  sysfs.AddTwoNodes();
  for (const char* id : {"0000:81:00.0", "0000:82:00.0", "0000:83:00.0"}) sysfs.AddGpu(id, 1);
  const Plan plan = MakePlan(sysfs, 3, {"0000:81:00.0", "0000:82:00.0", "0000:83:00.0"});
  ASSERT_TRUE(plan.status.ok()) << plan.status.ToString();
  EXPECT_EQ(plan.bindings, (std::vector<NumaBinding>{Bound(1, Range(8, 10)), Bound(1, Range(11, 13)),
                                                     Bound(1, Range(14, 15))}));
}

TEST(PlanNumaBindingTest, NumaNodeMinusOneEverywhereLeavesAllAsIs) {
  FakeSysfs sysfs;
  sysfs.AddTwoNodes();
  sysfs.AddGpu("0000:01:00.0", -1);
  sysfs.AddGpu("0000:02:00.0", -1);
  ExpectUnbound(MakePlan(sysfs, 2, {"0000:01:00.0", "0000:02:00.0"}), 2, "numa_node -1");
}

TEST(PlanNumaBindingTest, NumaNodeMinusOneBesideOthersMeansNodeZero) {
  FakeSysfs sysfs;
  sysfs.AddTwoNodes();
  sysfs.AddGpu("0000:01:00.0", -1);
  sysfs.AddGpu("0000:02:00.0", 1);
  const Plan plan = MakePlan(sysfs, 2, {"0000:01:00.0", "0000:02:00.0"});
  ASSERT_TRUE(plan.status.ok()) << plan.status.ToString();
  EXPECT_EQ(plan.bindings, (std::vector<NumaBinding>{Bound(0, Range(0, 7)), Bound(1, Range(8, 15))}));
}

TEST(PlanNumaBindingTest, SingleNodeLeavesAllAsIs) {
  FakeSysfs sysfs;
  sysfs.AddNode(0, "0-15");
  sysfs.AddGpu("0000:01:00.0", 0);
  sysfs.AddGpu("0000:02:00.0", 0);
  ExpectUnbound(MakePlan(sysfs, 2, {"0000:01:00.0", "0000:02:00.0"}), 2, "only node 0");
  ExpectUnbound(MakePlan(sysfs, 2), 2, "only node 0");
}

TEST(PlanNumaBindingTest, NoNodeDirectoryLeavesAllAsIs) {
  FakeSysfs sysfs;
  sysfs.AddGpu("0000:01:00.0", 0);
  ExpectUnbound(MakePlan(sysfs, 1, {"0000:01:00.0"}), 1, "devices/system/node is missing");
}

TEST(PlanNumaBindingTest, CpuOnlyRunGoesRoundRobin) {
  FakeSysfs sysfs;
  sysfs.AddTwoNodes();
  const Plan plan = MakePlan(sysfs, 3);
  ASSERT_TRUE(plan.status.ok()) << plan.status.ToString();
  EXPECT_EQ(plan.bindings, (std::vector<NumaBinding>{Bound(0, Range(0, 3)), Bound(1, Range(8, 15)),
                                                     Bound(0, Range(4, 7))}));
  EXPECT_NE(plan.text.find("local rank 1 -> node 1, cpus 8-15"), std::string::npos) << plan.text;
}

TEST(PlanNumaBindingTest, StaysWithinTheAllowedCpus) {
  FakeSysfs sysfs;
  sysfs.AddTwoNodes();
  sysfs.AddGpu("0000:01:00.0", 0);
  sysfs.AddGpu("0000:02:00.0", 1);
  const Plan plan = MakePlan(sysfs, 2, {"0000:01:00.0", "0000:02:00.0"}, {9, 2, 3, 4, 5, 8});
  ASSERT_TRUE(plan.status.ok()) << plan.status.ToString();
  EXPECT_EQ(plan.bindings, (std::vector<NumaBinding>{Bound(0, Range(2, 5)), Bound(1, Range(8, 9))}));

  // Allowed CPUs on node 0 only: nothing to choose between.
  ExpectUnbound(MakePlan(sysfs, 2, {}, Range(0, 7)), 2, "only node 0");
}

TEST(PlanNumaBindingTest, GpuOnANodeWithoutAllowedCpusStaysUnbound) {
  FakeSysfs sysfs;
  sysfs.AddNode(0, "0-3");
  sysfs.AddNode(1, "4-7");
  sysfs.AddNode(2, "8-11");
  sysfs.AddGpu("0000:01:00.0", 0);
  sysfs.AddGpu("0000:02:00.0", 2);
  const Plan plan = MakePlan(sysfs, 2, {"0000:01:00.0", "0000:02:00.0"}, Range(0, 7));
  ASSERT_TRUE(plan.status.ok()) << plan.status.ToString();
  EXPECT_EQ(plan.bindings, (std::vector<NumaBinding>{Bound(0, Range(0, 3)), kUnbound}));
  EXPECT_NE(plan.text.find("local rank 1 -> unbound, node 2"), std::string::npos) << plan.text;
}

TEST(PlanNumaBindingTest, HyperthreadSiblingsStayTogether) {
  FakeSysfs sysfs;
  sysfs.AddNode(0, "0-3,8-11");
  sysfs.AddNode(1, "4-7,12-15");
  for (int cpu = 0; cpu < 8; ++cpu) {
    const std::string pair = std::to_string(cpu) + "," + std::to_string(cpu + 8);
    sysfs.AddSiblings(cpu, pair);
    sysfs.AddSiblings(cpu + 8, pair);
  }
  sysfs.AddGpu("0000:01:00.0", 0);
  sysfs.AddGpu("0000:02:00.0", 0);
  const Plan plan = MakePlan(sysfs, 2, {"0000:01:00.0", "0000:02:00.0"});
  ASSERT_TRUE(plan.status.ok()) << plan.status.ToString();
  EXPECT_EQ(plan.bindings,
            (std::vector<NumaBinding>{Bound(0, {0, 1, 8, 9}), Bound(0, {2, 3, 10, 11})}));
  EXPECT_NE(plan.text.find("local rank 1 -> node 0, cpus 2-3,10-11"), std::string::npos) << plan.text;
}

TEST(PlanNumaBindingTest, MoreWorkersThanCoresShareTheNode) {
  FakeSysfs sysfs;
  sysfs.AddNode(0, "0-1");
  sysfs.AddNode(1, "2-3");
  for (const char* id : {"0000:01:00.0", "0000:02:00.0", "0000:03:00.0"}) sysfs.AddGpu(id, 0);
  const Plan plan = MakePlan(sysfs, 3, {"0000:01:00.0", "0000:02:00.0", "0000:03:00.0"});
  ASSERT_TRUE(plan.status.ok()) << plan.status.ToString();
  EXPECT_EQ(plan.bindings, std::vector<NumaBinding>(3, Bound(0, {0, 1})));
}

TEST(PlanNumaBindingTest, Errors) {
  FakeSysfs sysfs;
  sysfs.AddTwoNodes();
  sysfs.AddGpu("0000:01:00.0", 0);
  Plan plan = MakePlan(sysfs, 2, {"0000:01:00.0"});
  EXPECT_TRUE(plan.status.IsInvalidArgument()) << plan.status.ToString();

  plan = MakePlan(sysfs, 1, {"0000:99:00.0"});
  EXPECT_TRUE(plan.status.IsNotFound()) << plan.status.ToString();
  EXPECT_NE(plan.status.message().find("0000:99:00.0"), std::string::npos) << plan.status.ToString();

  sysfs.AddNode(1, "8-x");
  plan = MakePlan(sysfs, 1);
  EXPECT_TRUE(plan.status.IsCorruption()) << plan.status.ToString();
  EXPECT_NE(plan.status.message().find("node1/cpulist"), std::string::npos) << plan.status.ToString();
}

TEST(ListGpuPciIdsTest, NvidiaDisplayDevicesInBusOrder) {
  FakeSysfs sysfs;
  sysfs.AddPciDevice("0000:af:00.0", "0x10de", "0x030200", 1);  // 3D controller
  sysfs.AddPciDevice("0000:3b:00.0", "0x10de", "0x030000", 0);  // VGA
  sysfs.AddPciDevice("0000:1a:00.0", "0x10de", "0x030200", 0);
  sysfs.AddPciDevice("0000:00:1f.0", "0x8086", "0x030000", 0);  // another vendor's display
  sysfs.AddPciDevice("0000:3b:00.1", "0x10de", "0x040300", 0);  // the GPU's audio function
  const std::vector<std::string> all = {"0000:1a:00.0", "0000:3b:00.0", "0000:af:00.0"};
  EXPECT_EQ(ListGpuPciIds(sysfs.root(), {}), all);
  EXPECT_EQ(ListGpuPciIds(sysfs.root(), {{"CUDA_VISIBLE_DEVICES", "2,0"}}),
            (std::vector<std::string>{"0000:af:00.0", "0000:1a:00.0"}));
  // CUDA stops at the first invalid or repeated index.
  EXPECT_EQ(ListGpuPciIds(sysfs.root(), {{"CUDA_VISIBLE_DEVICES", "1,7,0"}}),
            (std::vector<std::string>{"0000:3b:00.0"}));
  EXPECT_EQ(ListGpuPciIds(sysfs.root(), {{"CUDA_VISIBLE_DEVICES", "1,1,0"}}),
            (std::vector<std::string>{"0000:3b:00.0"}));
  EXPECT_EQ(ListGpuPciIds(sysfs.root(), {{"CUDA_VISIBLE_DEVICES", "-1"}}), std::vector<std::string>());
  EXPECT_EQ(ListGpuPciIds(sysfs.root(), {{"CUDA_VISIBLE_DEVICES", ""}}), std::vector<std::string>());
  // UUIDs cannot be mapped without NVML: the list stays whole.
  EXPECT_EQ(ListGpuPciIds(sysfs.root(), {{"CUDA_VISIBLE_DEVICES", "GPU-8e3b1c2a"}}), all);
}

TEST(ListGpuPciIdsTest, NoPciTreeMeansNoGpus) {
  FakeSysfs sysfs;
  EXPECT_TRUE(ListGpuPciIds(sysfs.root(), {}).empty());
}

// Runs `body` in a forked child (bindings must not leak into the test process)
// and returns its exit status.
int RunInChild(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(ApplyNumaBindingTest, PinsToOneCpu) {
  const std::vector<int> before = AffinityCpus();
  ASSERT_FALSE(before.empty());
  const int cpu = before.back();
  EXPECT_EQ(RunInChild([cpu] {
              if (ApplyNumaBinding(Bound(-1, {cpu})) != 0) return 1;
              return AffinityCpus() == std::vector<int>{cpu} ? 0 : 2;
            }),
            0);
  EXPECT_EQ(AffinityCpus(), before);
}

TEST(ApplyNumaBindingTest, EmptyBindingChangesNothing) {
  const std::vector<int> before = AffinityCpus();
  EXPECT_EQ(RunInChild([&before] {
              if (ApplyNumaBinding(kUnbound) != 0) return 1;
              return AffinityCpus() == before ? 0 : 2;
            }),
            0);
}

TEST(ApplyNumaBindingTest, CpuBeyondTheSetIsInvalid) {
  const std::vector<int> before = AffinityCpus();
  EXPECT_EQ(RunInChild([&before] {
              if (ApplyNumaBinding(Bound(-1, {CPU_SETSIZE + 5})) != EINVAL) return 1;
              return AffinityCpus() == before ? 0 : 2;
            }),
            0);
}

TEST(ApplyNumaBindingTest, PrefersTheNodesMemory) {
  if (!std::filesystem::exists("/sys/devices/system/node/node0")) GTEST_SKIP() << "no NUMA node 0 here";
  constexpr int kRefused = 77;
  const int status = RunInChild([] {
    const int err = ApplyNumaBinding(Bound(0, {}));
    if (err == EPERM || err == ENOSYS) return kRefused;  // a sandbox that forbids set_mempolicy
    if (err != 0) return 1;
    int mode = -1;
    unsigned long mask[1024 / (sizeof(unsigned long) * CHAR_BIT)] = {};
    if (syscall(SYS_get_mempolicy, &mode, mask, 1024 + 1, nullptr, 0UL) != 0) return 2;
    return mode == MPOL_PREFERRED && mask[0] == 1UL ? 0 : 3;
  });
  if (status == kRefused) GTEST_SKIP() << "set_mempolicy is not permitted here";
  EXPECT_EQ(status, 0);
}

}  // namespace
}  // namespace ffyolo
