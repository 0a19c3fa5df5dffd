// yolo-train --nproc 2 --sync-bn end to end (two Gloo ranks on CPU): it trains to the
// end; a signal to one worker stops every rank at the same step with a
// resumable checkpoint, and the resumed job ends with exactly the weights of
// an uninterrupted one; a killed worker brings the whole job down quickly.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "ffyolo/checkpoint.h"
#include "test_dataset.h"
#include "testing/test_env.h"

extern char** environ;

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// yolo-train started in the background, its output in `log`.
class Job {
 public:
  Job(const std::vector<std::string>& args, const std::string& log) : log_(log) {
    std::vector<std::string> all = {YOLO_TRAIN};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    EXPECT_EQ(posix_spawn(&pid_, YOLO_TRAIN, &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Job() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // The exit status (128 + signal when killed); -1 if still running after `limit`.
  int Wait(std::chrono::seconds limit) {
    const auto end = Clock::now() + limit;
    while (Clock::now() < end) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }

  // The pid of the worker with this RANK (a child of the launcher), or -1.
  pid_t Worker(int rank) const {
    DIR* proc = opendir("/proc");
    pid_t found = -1;
    while (dirent* e = readdir(proc)) {
      const pid_t pid = std::atoi(e->d_name);
      if (pid <= 0) continue;
      std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
      std::string line;
      std::getline(stat, line);
      const size_t paren = line.rfind(')');
      if (paren == std::string::npos) continue;
      char state;
      int ppid = 0;
      if (std::sscanf(line.c_str() + paren + 1, " %c %d", &state, &ppid) != 2 || ppid != pid_) continue;
      const std::string env = testing::ReadFileToString("/proc/" + std::to_string(pid) + "/environ");
      const std::string wanted = "RANK=" + std::to_string(rank);
      for (size_t at = 0; at < env.size(); at = env.find('\0', at) + 1) {
        if (env.compare(at, wanted.size() + 1, wanted + '\0') == 0) found = pid;
        if (env.find('\0', at) == std::string::npos) break;
      }
    }
    closedir(proc);
    return found;
  }

  std::string Log() const { return testing::ReadFileToString(log_); }

 private:
  std::string log_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

std::vector<std::string> Args(const std::string& project, int epochs) {
  return {"--data", testing::PackedSyntheticDataset(32, 8), "--cfg", "yolov5n", "--img", "64", "--batch", "4",
          "--epochs", std::to_string(epochs), "--workers", "1", "--threads", "1", "--noval", "--project", project,
          "--nproc", "2", "--sync-bn"};
}

// Waits until rank 0 has trained its first batch (it writes train_batch0.jpg then).
bool WaitForFirstBatch(const std::string& run, Job* job) {
  const auto end = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < end && !fs::exists(run + "/train_batch0.jpg")) {
    if (job->Worker(0) < 0 && job->Worker(1) < 0 && job->Wait(std::chrono::seconds(0)) >= 0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fs::exists(run + "/train_batch0.jpg");
}

double MaxDifference(const std::string& a, const std::string& b, bool ema) {
  std::shared_ptr<YoloModel> ma, mb;
  CheckpointInfo ia, ib;
  EXPECT_TRUE(LoadCheckpointModel(a, ema, &ma, &ia).ok());
  EXPECT_TRUE(LoadCheckpointModel(b, ema, &mb, &ib).ok());
  if (!ma || !mb) return 1e9;
  double worst = 0;
  const auto pa = ma->parameters(), pb = mb->parameters();
  for (size_t k = 0; k < pa.size(); ++k) worst = std::max(worst, (pa[k] - pb[k]).abs().max().item<double>());
  return worst;
}

TEST(YoloTrainDistTest, SignalToOneWorkerStopsAllAndTheResumeIsExact) {
  testing::ScratchDir dir("yolo_train_dist");
  Job full(Args(dir / "full", 3), dir / "full.log");
  ASSERT_EQ(full.Wait(std::chrono::seconds(600)), 0) << full.Log();
  const std::string log = full.Log();
  EXPECT_NE(log.find("Distributed training: 2 ranks over gloo"), std::string::npos) << log;
  EXPECT_NE(log.find("Using SyncBatchNorm()"), std::string::npos) << log;
  for (const char* f : {"weights/last.pt", "weights/best.pt", "results.csv", "train_batch0.jpg"})
    EXPECT_TRUE(fs::exists(dir / ("full/exp/" + std::string(f)))) << f;

  Job stopped(Args(dir / "stopped", 3), dir / "stopped.log");
  ASSERT_TRUE(WaitForFirstBatch(dir / "stopped/exp", &stopped)) << stopped.Log();
  const pid_t rank1 = stopped.Worker(1);
  ASSERT_GT(rank1, 0) << "no worker with RANK=1 under the launcher";
  ASSERT_EQ(kill(rank1, SIGUSR1), 0);  // rank 0 is not told: it must learn it from the all-reduced flag
  ASSERT_EQ(stopped.Wait(std::chrono::seconds(300)), 75) << stopped.Log();
  const std::string last = dir / "stopped/exp/weights/last.pt";
  CheckpointInfo info;
  ASSERT_TRUE(ReadCheckpointInfo(last, &info).ok());
  EXPECT_TRUE(info.next_batch > 0 || info.epoch >= 0) << "the checkpoint holds no position";

  Job resumed({"--resume", last, "--nproc", "2"}, dir / "resumed.log");
  ASSERT_EQ(resumed.Wait(std::chrono::seconds(600)), 0) << resumed.Log();
  EXPECT_NE(resumed.Log().find("Resuming training from"), std::string::npos);
  EXPECT_LT(MaxDifference(dir / "full/exp/weights/last.pt", last, false), 1e-6);
  EXPECT_LT(MaxDifference(dir / "full/exp/weights/last.pt", last, true), 1e-6);
}

TEST(YoloTrainDistTest, AKilledWorkerEndsTheJobQuickly) {
  testing::ScratchDir dir("yolo_train_kill");
  Job job(Args(dir / "runs", 200), dir / "job.log");
  ASSERT_TRUE(WaitForFirstBatch(dir / "runs/exp", &job)) << job.Log();
  const pid_t rank1 = job.Worker(1);
  ASSERT_GT(rank1, 0);
  const auto start = Clock::now();
  ASSERT_EQ(kill(rank1, SIGKILL), 0);
  const int status = job.Wait(std::chrono::seconds(60));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_NE(status, -1) << "the job still runs a minute after a worker died\n" << job.Log();
  EXPECT_NE(status, 0) << job.Log();
  EXPECT_LT(seconds, 20) << job.Log();
  EXPECT_LT(job.Worker(0), 0) << "rank 0 outlived the job";
}

TEST(YoloTrainDistTest, ABatchThatDoesNotDivideIsRefused) {
  testing::ScratchDir dir("yolo_train_divide");
  std::vector<std::string> args = Args(dir / "runs", 1);
  *(std::find(args.begin(), args.end(), "--nproc") + 1) = "3";  // with --batch 4
  Job job(args, dir / "job.log");
  const int status = job.Wait(std::chrono::seconds(120));
  EXPECT_EQ(status, 1) << job.Log();
  EXPECT_NE(job.Log().find("--batch 4 is not divisible by the 3 ranks"), std::string::npos) << job.Log();
}

}  // namespace
}  // namespace ffyolo
