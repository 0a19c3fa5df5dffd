#include "ffyolo/dist_env.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <utility>

namespace ffyolo {

bool operator==(const DistEnv& a, const DistEnv& b) {
  return a.rank == b.rank && a.local_rank == b.local_rank && a.world_size == b.world_size &&
         a.local_world_size == b.local_world_size && a.node_rank == b.node_rank && a.nnodes == b.nnodes &&
         a.master_addr == b.master_addr && a.master_port == b.master_port;
}

void PrintTo(const DistEnv& e, std::ostream* os) {
  *os << "{rank " << e.rank << ", local " << e.local_rank << ", world " << e.world_size << ", local_world "
      << e.local_world_size << ", node " << e.node_rank << "/" << e.nnodes << ", " << e.master_addr << ":"
      << e.master_port << "}";
}

namespace {

DistEnv Expected(int rank, int local_rank, int world, int local_world, int node, int nnodes, std::string addr,
                 int port) {
  DistEnv e;
  e.rank = rank;
  e.local_rank = local_rank;
  e.world_size = world;
  e.local_world_size = local_world;
  e.node_rank = node;
  e.nnodes = nnodes;
  e.master_addr = std::move(addr);
  e.master_port = port;
  return e;
}

LaunchFlags Nproc(int nproc) {
  LaunchFlags flags;
  flags.nproc = nproc;
  return flags;
}

struct Resolved {
  ffr::Status status;
  LaunchRole role = LaunchRole::kSingle;
  DistEnv me;
};

Resolved Resolve(const LaunchFlags& flags, const EnvMap& env) {
  Resolved r;
  r.status = ResolveLaunch(flags, env, &r.role, &r.me);
  return r;
}

// Expects InvalidArgument whose message contains `needle`.
void ExpectInvalid(const LaunchFlags& flags, const EnvMap& env, const std::string& needle) {
  const Resolved r = Resolve(flags, env);
  EXPECT_TRUE(r.status.IsInvalidArgument()) << r.status.ToString();
  EXPECT_NE(r.status.message().find(needle), std::string::npos) << r.status.ToString() << " lacks " << needle;
}

EnvMap TorchrunEnv() {
  return {{"RANK", "5"},       {"LOCAL_RANK", "1"},       {"WORLD_SIZE", "8"},         {"LOCAL_WORLD_SIZE", "4"},
          {"GROUP_RANK", "1"}, {"GROUP_WORLD_SIZE", "2"}, {"MASTER_ADDR", "10.0.0.7"}, {"MASTER_PORT", "29601"}};
}

// Task 5 of 8, two nodes with four tasks each, as srun sets it.
EnvMap SlurmTaskEnv() {
  return {{"SLURM_PROCID", "5"},          {"SLURM_LOCALID", "1"},        {"SLURM_NTASKS", "8"},
          {"SLURM_NNODES", "2"},          {"SLURM_NODEID", "1"},         {"SLURM_TASKS_PER_NODE", "4(x2)"},
          {"SLURM_JOB_NODELIST", "gpu[07-08]"}, {"SLURM_JOB_ID", "123456"}};
}

TEST(ResolveLaunchTest, NothingGivenIsASingleProcess) {
  const Resolved r = Resolve(LaunchFlags(), {});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.role, LaunchRole::kSingle);
  EXPECT_EQ(r.me, Expected(0, 0, 1, 1, 0, 1, "127.0.0.1", 29500));
}

TEST(ResolveLaunchTest, NprocMakesALauncherOnAFreePort) {
  const Resolved r = Resolve(Nproc(4), {});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.role, LaunchRole::kLauncher);
  EXPECT_GT(r.me.master_port, 0);
  EXPECT_LE(r.me.master_port, 65535);
  EXPECT_EQ(r.me, Expected(0, 0, 4, 4, 0, 1, "127.0.0.1", r.me.master_port));
}

TEST(ResolveLaunchTest, MultiNodeFlags) {
  LaunchFlags flags = Nproc(2);
  flags.nnodes = 3;
  flags.node_rank = 2;
  flags.master_addr = "10.1.1.1";
  const Resolved r = Resolve(flags, {});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.role, LaunchRole::kLauncher);
  EXPECT_EQ(r.me, Expected(4, 0, 6, 2, 2, 3, "10.1.1.1", 29500));
}

TEST(ResolveLaunchTest, NnodesAloneMakesALauncher) {
  LaunchFlags flags;
  flags.nnodes = 2;
  const Resolved r = Resolve(flags, {});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.role, LaunchRole::kLauncher);
  EXPECT_EQ(r.me, Expected(0, 0, 2, 1, 0, 2, "127.0.0.1", 29500));
}

TEST(ResolveLaunchTest, LauncherTakesMasterFromEnvironmentAndFlagsOverrideIt) {
  const EnvMap env = {{"MASTER_ADDR", "envhost"}, {"MASTER_PORT", "1234"}};
  Resolved r = Resolve(Nproc(2), env);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.me.master_addr, "envhost");
  EXPECT_EQ(r.me.master_port, 1234);

  LaunchFlags flags = Nproc(2);
  flags.master_addr = "flaghost";
  flags.master_port = 4321;
  r = Resolve(flags, env);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.me.master_addr, "flaghost");
  EXPECT_EQ(r.me.master_port, 4321);
}

TEST(ResolveLaunchTest, TorchrunVariablesMakeAWorkerWhateverTheFlags) {
  const Resolved r = Resolve(Nproc(4), TorchrunEnv());
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.role, LaunchRole::kWorker);
  EXPECT_EQ(r.me, Expected(5, 1, 8, 4, 1, 2, "10.0.0.7", 29601));
}

TEST(ResolveLaunchTest, TorchrunGroupVariablesAreDerivedWhenAbsent) {
  EnvMap env = TorchrunEnv();
  env.erase("GROUP_RANK");
  env.erase("GROUP_WORLD_SIZE");
  env.erase("MASTER_ADDR");
  env.erase("MASTER_PORT");
  const Resolved r = Resolve(LaunchFlags(), env);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.me, Expected(5, 1, 8, 4, 1, 2, "127.0.0.1", 29500));
}

TEST(ResolveLaunchTest, TorchrunWinsOverSlurm) {
  EnvMap env = TorchrunEnv();
  for (const auto& kv : SlurmTaskEnv()) env.insert(kv);
  env["SLURM_PROCID"] = "0";
  const Resolved r = Resolve(LaunchFlags(), env);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.me.rank, 5);
  EXPECT_EQ(r.me.master_addr, "10.0.0.7");
}

TEST(ResolveLaunchTest, SlurmTaskPerProcess) {
  const Resolved r = Resolve(LaunchFlags(), SlurmTaskEnv());
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.role, LaunchRole::kWorker);
  // Port: 15000 + the job id's last four digits (3456).
  EXPECT_EQ(r.me, Expected(5, 1, 8, 4, 1, 2, "gpu07", 18456));
}

TEST(ResolveLaunchTest, SlurmTaskPerProcessIgnoresNproc) {
  const Resolved r = Resolve(Nproc(4), SlurmTaskEnv());
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.role, LaunchRole::kWorker);
  EXPECT_EQ(r.me.local_world_size, 4);
}

TEST(ResolveLaunchTest, SlurmTasksPerNodeForms) {
  EnvMap env = SlurmTaskEnv();
  env["SLURM_TASKS_PER_NODE"] = "5,3";
  env["SLURM_PROCID"] = "6";
  Resolved r = Resolve(LaunchFlags(), env);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.me.local_world_size, 3);

  env["SLURM_NNODES"] = "3";
  env["SLURM_NODEID"] = "2";
  env["SLURM_NTASKS"] = "7";
  env["SLURM_TASKS_PER_NODE"] = "3(x2),1";
  env["SLURM_LOCALID"] = "0";
  r = Resolve(LaunchFlags(), env);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.me.local_world_size, 1);
  EXPECT_EQ(r.me.node_rank, 2);

  // SLURM_NTASKS_PER_NODE, when set, is taken as is.
  env = SlurmTaskEnv();
  env["SLURM_TASKS_PER_NODE"] = "garbage";
  env["SLURM_NTASKS_PER_NODE"] = "4";
  r = Resolve(LaunchFlags(), env);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.me.local_world_size, 4);
}

TEST(ResolveLaunchTest, SlurmTaskPerNodeWithNprocLaunches) {
  const EnvMap env = {{"SLURM_PROCID", "1"},
                      {"SLURM_LOCALID", "0"},
                      {"SLURM_NTASKS", "2"},
                      {"SLURM_NNODES", "2"},
                      {"SLURM_NODEID", "1"},
                      {"SLURM_TASKS_PER_NODE", "1(x2)"},
                      {"SLURM_JOB_NODELIST", "node[01-02]"},
                      {"SLURM_JOB_ID", "42"}};
  Resolved r = Resolve(Nproc(4), env);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.role, LaunchRole::kLauncher);
  EXPECT_EQ(r.me, Expected(4, 0, 8, 4, 1, 2, "node01", 15042));

  // --nproc 1: the task is the worker.
  r = Resolve(LaunchFlags(), env);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.role, LaunchRole::kWorker);
  EXPECT_EQ(r.me, Expected(1, 0, 2, 1, 1, 2, "node01", 15042));

  // Explicit master flags win; --nnodes must agree with SLURM.
  LaunchFlags flags = Nproc(4);
  flags.master_addr = "ib-node01";
  flags.master_port = 40000;
  r = Resolve(flags, env);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.me.master_addr, "ib-node01");
  EXPECT_EQ(r.me.master_port, 40000);
  flags.nnodes = 3;
  ExpectInvalid(flags, env, "--nnodes 3 disagrees with SLURM_NNODES=2");
}

TEST(ResolveLaunchTest, SlurmMasterFromEnvironment) {
  EnvMap env = SlurmTaskEnv();
  env["MASTER_ADDR"] = "login1";
  env["MASTER_PORT"] = "23000";
  const Resolved r = Resolve(LaunchFlags(), env);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.me.master_addr, "login1");
  EXPECT_EQ(r.me.master_port, 23000);
}

// The same worker (node 1 of 2, four per node, local rank 2) described by our
// launcher, by torchrun and by srun.
TEST(ResolveLaunchTest, EquivalentEnvironmentsGiveTheSameWorker) {
  const DistEnv launcher = Expected(4, 0, 8, 4, 1, 2, "node01", 18456);
  EnvMap ours;
  for (const auto& [name, value] : WorkerVariables(launcher, 2)) ours[name] = value;
  const EnvMap torchrun = {{"RANK", "6"},         {"LOCAL_RANK", "2"},       {"WORLD_SIZE", "8"},
                           {"LOCAL_WORLD_SIZE", "4"}, {"GROUP_RANK", "1"},   {"GROUP_WORLD_SIZE", "2"},
                           {"MASTER_ADDR", "node01"}, {"MASTER_PORT", "18456"}};
  const EnvMap slurm = {{"SLURM_PROCID", "6"},   {"SLURM_LOCALID", "2"},  {"SLURM_NTASKS", "8"},
                        {"SLURM_NNODES", "2"},   {"SLURM_NODEID", "1"},   {"SLURM_TASKS_PER_NODE", "4(x2)"},
                        {"SLURM_JOB_NODELIST", "node[01-02]"},            {"SLURM_JOB_ID", "7733456"}};
  const DistEnv want = Expected(6, 2, 8, 4, 1, 2, "node01", 18456);
  for (const EnvMap* env : {&std::as_const(ours), &torchrun, &slurm}) {
    const Resolved r = Resolve(Nproc(4), *env);
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    EXPECT_EQ(r.role, LaunchRole::kWorker);
    EXPECT_EQ(r.me, want);
  }
}

TEST(ResolveLaunchTest, SlurmNodelistFirstHost) {
  const std::pair<const char*, const char*> cases[] = {
      {"node[01-04,07],gpu5", "node01"}, {"gpu5,node[01-04]", "gpu5"}, {"rack[1-2]-n[3-4]", "rack1-n3"},
      {"single", "single"},              {"n[7,2-3]", "n7"},
  };
  for (const auto& [nodelist, host] : cases) {
    EnvMap env = SlurmTaskEnv();
    env["SLURM_JOB_NODELIST"] = nodelist;
    const Resolved r = Resolve(LaunchFlags(), env);
    ASSERT_TRUE(r.status.ok()) << nodelist << ": " << r.status.ToString();
    EXPECT_EQ(r.me.master_addr, host) << nodelist;
  }
  for (const char* bad : {"node[01-04", "node]", "[]", "", "node[a-b]"}) {
    EnvMap env = SlurmTaskEnv();
    env["SLURM_JOB_NODELIST"] = bad;
    ExpectInvalid(LaunchFlags(), env, "SLURM_JOB_NODELIST='" + std::string(bad) + "'");
  }
}

TEST(ResolveLaunchTest, InvalidValuesNameTheVariable) {
  EnvMap env = TorchrunEnv();
  env["RANK"] = "8";
  ExpectInvalid(LaunchFlags(), env, "RANK=8");
  env["RANK"] = "abc";
  ExpectInvalid(LaunchFlags(), env, "RANK='abc'");
  env["RANK"] = "-1";
  ExpectInvalid(LaunchFlags(), env, "RANK=-1");

  env = TorchrunEnv();
  env.erase("LOCAL_RANK");
  ExpectInvalid(LaunchFlags(), env, "LOCAL_RANK is not set");
  env = TorchrunEnv();
  env["LOCAL_RANK"] = "4";
  ExpectInvalid(LaunchFlags(), env, "LOCAL_RANK=4");
  env = TorchrunEnv();
  env["MASTER_PORT"] = "70000";
  ExpectInvalid(LaunchFlags(), env, "MASTER_PORT=70000");
  env = TorchrunEnv();
  env["GROUP_RANK"] = "2";
  ExpectInvalid(LaunchFlags(), env, "GROUP_RANK=2");
  env = TorchrunEnv();
  env.erase("GROUP_WORLD_SIZE");
  env["WORLD_SIZE"] = "6";
  ExpectInvalid(LaunchFlags(), env, "WORLD_SIZE=6 is not a multiple of LOCAL_WORLD_SIZE=4");

  env = SlurmTaskEnv();
  env["SLURM_NODEID"] = "2";
  ExpectInvalid(LaunchFlags(), env, "SLURM_NODEID=2");
  env = SlurmTaskEnv();
  env["SLURM_TASKS_PER_NODE"] = "4(x2";
  ExpectInvalid(LaunchFlags(), env, "SLURM_TASKS_PER_NODE='4(x2'");
  env = SlurmTaskEnv();
  env["SLURM_TASKS_PER_NODE"] = "4";
  ExpectInvalid(LaunchFlags(), env, "no entry for SLURM_NODEID=1");
  env = SlurmTaskEnv();
  env["SLURM_LOCALID"] = "4";
  ExpectInvalid(LaunchFlags(), env, "SLURM_LOCALID=4");
  env = SlurmTaskEnv();
  env["SLURM_PROCID"] = "x";
  ExpectInvalid(LaunchFlags(), env, "SLURM_PROCID='x'");
  env = SlurmTaskEnv();
  env["SLURM_JOB_ID"] = "12a";
  ExpectInvalid(LaunchFlags(), env, "SLURM_JOB_ID='12a'");

  LaunchFlags flags = Nproc(2);
  flags.nnodes = 2;
  flags.node_rank = 2;
  ExpectInvalid(flags, {}, "--node-rank=2");
  flags.node_rank = 1;
  ExpectInvalid(flags, {}, "needs --master-addr");
  ExpectInvalid(Nproc(0), {}, "--nproc 0");
  flags = Nproc(2);
  flags.master_port = 65536;
  ExpectInvalid(flags, {}, "--master-port=65536");
}

TEST(WorkerVariablesTest, GivesTheTorchrunSet) {
  const DistEnv launcher = Expected(6, 0, 9, 3, 2, 3, "10.2.0.1", 29555);
  EnvMap vars;
  for (const auto& [name, value] : WorkerVariables(launcher, 1)) {
    EXPECT_TRUE(vars.emplace(name, value).second) << name << " given twice";
  }
  const EnvMap want = {{"RANK", "7"},
                       {"LOCAL_RANK", "1"},
                       {"WORLD_SIZE", "9"},
                       {"LOCAL_WORLD_SIZE", "3"},
                       {"GROUP_RANK", "2"},
                       {"GROUP_WORLD_SIZE", "3"},
                       {"ROLE_RANK", "7"},
                       {"ROLE_WORLD_SIZE", "9"},
                       {"MASTER_ADDR", "10.2.0.1"},
                       {"MASTER_PORT", "29555"},
                       {"TORCHELASTIC_RESTART_COUNT", "0"},
                       {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
  EXPECT_EQ(vars, want);
}

TEST(PickFreePortTest, PortCanBeBound) {
  int port = 0;
  ASSERT_TRUE(PickFreePort(&port).ok());
  ASSERT_GT(port, 0);
  ASSERT_LE(port, 65535);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << "port " << port;
  close(fd);
}

TEST(CurrentEnvironmentTest, SeesTheProcessEnvironment) {
  ASSERT_EQ(setenv("FFYOLO_DIST_ENV_TEST", "a=b", 1), 0);
  const EnvMap env = CurrentEnvironment();
  unsetenv("FFYOLO_DIST_ENV_TEST");
  auto it = env.find("FFYOLO_DIST_ENV_TEST");
  ASSERT_NE(it, env.end());
  EXPECT_EQ(it->second, "a=b");
}

}  // namespace
}  // namespace ffyolo
