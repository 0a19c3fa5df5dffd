#include "ffyolo/launcher.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "testing/test_env.h"

extern char** environ;

namespace ffyolo {
namespace {

using Clock = std::chrono::steady_clock;
using testing::ReadFileToString;
using testing::ScratchDir;

constexpr auto kBound = std::chrono::seconds(15);  // generous: a stopped job must end well within this

// Options that start `nproc` copies of the test worker writing into `out`.
LaunchOptions WorkerOptions(int nproc, const std::string& out, std::vector<std::string> worker_args,
                            std::vector<std::string>* log) {
  LaunchOptions options;
  options.executable = FFYOLO_LAUNCH_TEST_WORKER;
  options.args = {"launch_test_worker", "--out", out};
  options.args.insert(options.args.end(), worker_args.begin(), worker_args.end());
  options.job.world_size = nproc;
  options.job.local_world_size = nproc;
  options.log = [log](const std::string& message) { log->push_back(message); };
  return options;
}

bool LogMentions(const std::vector<std::string>& log, const std::string& needle) {
  for (const std::string& line : log)
    if (line.find(needle) != std::string::npos) return true;
  return false;
}

std::string Joined(const std::vector<std::string>& log) {
  std::string text;
  for (const std::string& line : log) text += line + "\n";
  return text;
}

// A worker's environment dump: NUL-terminated KEY=VALUE entries.
EnvMap ReadEnvDump(const std::string& path) {
  EnvMap env;
  const std::string text = ReadFileToString(path);
  size_t start = 0;
  for (size_t end; (end = text.find('\0', start)) != std::string::npos; start = end + 1) {
    const std::string entry = text.substr(start, end - start);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

bool WaitForFiles(const std::vector<std::string>& paths, std::chrono::seconds limit) {
  const auto give_up = Clock::now() + limit;
  for (const std::string& path : paths)
    while (!std::filesystem::exists(path)) {
      if (Clock::now() > give_up) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  return true;
}

std::vector<std::string> PerRank(const std::string& dir, const std::string& name, int n) {
  std::vector<std::string> paths;
  for (int r = 0; r < n; ++r) paths.push_back(dir + "/" + name + "." + std::to_string(r));
  return paths;
}

// Waits for `pid` (a child of this process) for up to `limit`; SIGKILLs it
// when it is still running then. Returns its wait status, or -1 on timeout.
int WaitOrKill(pid_t pid, std::chrono::seconds limit) {
  const auto give_up = Clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > give_up) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status;
}

// The launcher harness running test workers, as a child process. Killed (and
// so its workers, by PDEATHSIG) if a failed assertion leaves it running.
class Harness {
 public:
  Harness(int nproc, int grace_ms, const std::vector<std::string>& worker_args) {
    std::vector<std::string> args = {FFYOLO_LAUNCH_TEST_HARNESS, std::to_string(nproc), std::to_string(grace_ms),
                                     FFYOLO_LAUNCH_TEST_WORKER};
    args.insert(args.end(), worker_args.begin(), worker_args.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
  }
  ~Harness() {
    if (pid_ > 0) WaitOrKill(pid_, std::chrono::seconds(0));
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  pid_t pid() const { return pid_; }
  // WaitOrKill's result; the harness is gone afterwards.
  int Wait(std::chrono::seconds limit) {
    const int status = WaitOrKill(pid_, limit);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
};

TEST(LaunchWorkersTest, AllSucceedAndEachSeesItsVariables) {
  ScratchDir out("workers");
  std::vector<std::string> log;
  LaunchOptions options = WorkerOptions(3, out.path(), {}, &log);
  options.job = DistEnv{3, 0, 6, 3, 1, 2, "10.0.0.5", 23456};  // node 1 of 2
  // The parent's variables pass through, but the launcher's own RANK must not.
  ASSERT_EQ(setenv("FFYOLO_LAUNCH_TEST_MARKER", "kept", 1), 0);
  ASSERT_EQ(setenv("RANK", "99", 1), 0);
  struct sigaction before {};
  struct sigaction mine {};
  mine.sa_handler = [](int) {};
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &mine, &before), 0);

  const int result = LaunchWorkers(options);

  struct sigaction after {};
  sigaction(SIGUSR1, &before, &after);
  unsetenv("FFYOLO_LAUNCH_TEST_MARKER");
  unsetenv("RANK");
  EXPECT_EQ(result, 0) << Joined(log);
  EXPECT_EQ(after.sa_handler, mine.sa_handler) << "SIGUSR1's handler was not restored";
  for (int i = 0; i < 3; ++i) {
    const EnvMap env = ReadEnvDump(out / ("env." + std::to_string(i)));
    ASSERT_FALSE(env.empty()) << "worker " << i << " wrote no environment";
    LaunchRole role;
    DistEnv me;
    ASSERT_TRUE(ResolveLaunch(LaunchFlags(), env, &role, &me).ok());
    EXPECT_EQ(role, LaunchRole::kWorker);
    EXPECT_EQ(me.rank, 3 + i);
    EXPECT_EQ(me.local_rank, i);
    EXPECT_EQ(me.world_size, 6);
    EXPECT_EQ(me.local_world_size, 3);
    EXPECT_EQ(me.node_rank, 1);
    EXPECT_EQ(me.nnodes, 2);
    EXPECT_EQ(me.master_addr, "10.0.0.5");
    EXPECT_EQ(me.master_port, 23456);
    EXPECT_EQ(env.at("FFYOLO_LAUNCH_TEST_MARKER"), "kept");
    EXPECT_EQ(env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
    EXPECT_EQ(env.at("TORCHELASTIC_RESTART_COUNT"), "0");
  }
}

TEST(LaunchWorkersTest, BindingsAreAppliedInTheChild) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> allowed;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) allowed.push_back(c);
  ASSERT_FALSE(allowed.empty());
  ScratchDir out("workers");
  std::vector<std::string> log;
  LaunchOptions options = WorkerOptions(2, out.path(), {}, &log);
  options.bindings = {NumaBinding{-1, {allowed.back()}}, NumaBinding{-1, {allowed.front()}}};
  ASSERT_EQ(LaunchWorkers(options), 0) << Joined(log);
  EXPECT_EQ(ReadFileToString(out / "cpus.0"), std::to_string(allowed.back()));
  EXPECT_EQ(ReadFileToString(out / "cpus.1"), std::to_string(allowed.front()));
}

TEST(LaunchWorkersTest, FirstFailureStopsTheOthersAndIsReturned) {
  ScratchDir out("workers");
  std::vector<std::string> log;
  const LaunchOptions options = WorkerOptions(3, out.path(), {"--exit", "1:3", "--sleep", "120"}, &log);
  const auto start = Clock::now();
  EXPECT_EQ(LaunchWorkers(options), 3) << Joined(log);
  EXPECT_LT(Clock::now() - start, kBound);
  EXPECT_TRUE(LogMentions(log, "worker 1 (rank 1, pid ")) << Joined(log);
  EXPECT_TRUE(LogMentions(log, "exited with 3")) << Joined(log);
  EXPECT_TRUE(LogMentions(log, "killed by SIGTERM")) << Joined(log);
}

TEST(LaunchWorkersTest, WorkerIgnoringSigtermIsKilledAfterTheGrace) {
  ScratchDir out("workers");
  std::vector<std::string> log;
  LaunchOptions options =
      WorkerOptions(2, out.path(), {"--exit", "1:4", "--sleep", "120", "--on-signal", "ignore"}, &log);
  options.grace = std::chrono::milliseconds(500);
  const auto start = Clock::now();
  EXPECT_EQ(LaunchWorkers(options), 4) << Joined(log);
  EXPECT_LT(Clock::now() - start, kBound);
  EXPECT_EQ(ReadFileToString(out / "signal.0"), std::to_string(SIGTERM)) << "worker 0 never saw the SIGTERM";
  EXPECT_TRUE(LogMentions(log, "sending SIGKILL")) << Joined(log);
  EXPECT_TRUE(LogMentions(log, "worker 0 (rank 0, pid ")) << Joined(log);
  EXPECT_TRUE(LogMentions(log, "killed by SIGKILL")) << Joined(log);
}

TEST(LaunchWorkersTest, UnstartableWorkersFail) {
  std::vector<std::string> log;
  LaunchOptions options = WorkerOptions(2, "/nonexistent", {}, &log);
  options.executable = "/nonexistent/worker";
  EXPECT_EQ(LaunchWorkers(options), 127) << Joined(log);

  options = WorkerOptions(2, "/nonexistent", {}, &log);
  options.bindings = {NumaBinding()};  // one binding for two workers
  EXPECT_EQ(LaunchWorkers(options), 1);
  EXPECT_TRUE(LogMentions(log, "1 NUMA bindings")) << Joined(log);
}

// Every signal the launcher forwards reaches every worker, which "checkpoints"
// and exits 75; the launcher then exits 75 too.
class ForwardedSignalTest : public ::testing::TestWithParam<int> {};

TEST_P(ForwardedSignalTest, ReachesEveryWorker) {
  const int signo = GetParam();
  ScratchDir out("workers");
  Harness harness(3, 30000, {"--out", out.path(), "--sleep", "120", "--on-signal", "checkpoint"});
  ASSERT_GT(harness.pid(), 0);
  ASSERT_TRUE(WaitForFiles(PerRank(out.path(), "ready", 3), std::chrono::seconds(60)));
  ASSERT_EQ(kill(harness.pid(), signo), 0);
  const int status = harness.Wait(kBound);
  ASSERT_NE(status, -1) << "the harness did not exit";
  ASSERT_TRUE(WIFEXITED(status)) << "harness status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 75);
  for (const std::string& path : PerRank(out.path(), "signal", 3))
    EXPECT_EQ(ReadFileToString(path), std::to_string(signo)) << path;
}

INSTANTIATE_TEST_SUITE_P(LaunchWorkersTest, ForwardedSignalTest,
                         ::testing::Values(SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string("SIG") + sigabbrev_np(info.param);
                         });

TEST(LaunchWorkersTest, WorkersDieWithAKilledLauncher) {
  // Become the orphaned workers' reaper, so that their fate can be waited for.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  ScratchDir out("workers");
  Harness harness(2, 30000, {"--out", out.path(), "--sleep", "120"});
  ASSERT_GT(harness.pid(), 0);
  ASSERT_TRUE(WaitForFiles(PerRank(out.path(), "ready", 2), std::chrono::seconds(60)));
  std::vector<pid_t> workers;
  for (const std::string& path : PerRank(out.path(), "pid", 2)) workers.push_back(std::stoi(ReadFileToString(path)));
  ASSERT_EQ(kill(harness.pid(), SIGKILL), 0);
  const int status = harness.Wait(kBound);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  for (pid_t worker : workers) {
    const int worker_status = WaitOrKill(worker, kBound);
    ASSERT_NE(worker_status, -1) << "worker " << worker << " outlived its launcher";
    EXPECT_TRUE(WIFSIGNALED(worker_status) && WTERMSIG(worker_status) == SIGTERM) << worker_status;
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

}  // namespace
}  // namespace ffyolo
