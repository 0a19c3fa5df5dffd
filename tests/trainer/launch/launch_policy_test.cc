// ApplyLaunchPolicy: the launch decisions yolo-train's Main used to make itself.
#include "ffyolo/launch_policy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "testing/test_env.h"

namespace ffyolo {
namespace {

using testing::ScratchDir;

LaunchPolicy WorkerPolicy(const std::string& out, std::vector<std::string>* messages) {
  LaunchPolicy policy;
  policy.executable = FFYOLO_LAUNCH_TEST_WORKER;
  policy.args = {"launch_test_worker", "--out", out};
  policy.on_message = [messages](const std::string& m) { messages->push_back(m); };
  policy.on_launcher_message = policy.on_message;
  return policy;
}

TEST(LaunchPolicyTest, AloneByDefaultSayingNothing) {
  std::vector<std::string> messages;
  LaunchPolicy policy = WorkerPolicy("/nonexistent", &messages);
  LaunchRole role;
  DistEnv job;
  int exit_code = -1;
  ASSERT_TRUE(ApplyLaunchPolicy(policy, EnvMap(), &role, &job, &exit_code).ok());
  EXPECT_EQ(role, LaunchRole::kSingle);
  EXPECT_EQ(job.world_size, 1);
  EXPECT_EQ(exit_code, -1);  // nothing was launched
  EXPECT_TRUE(messages.empty());
}

// --device 0,1 without --nproc: one worker per GPU, each seeing the listed GPUs (rank r takes the r-th).
TEST(LaunchPolicyTest, SeveralDevicesStartAWorkerEach) {
  ScratchDir out("policy_devices");
  std::vector<std::string> messages;
  LaunchPolicy policy = WorkerPolicy(out.path(), &messages);
  policy.cuda_devices = {2, 3};
  LaunchRole role;
  DistEnv job;
  int exit_code = -1;
  const char* before = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = before ? before : "";
  ASSERT_TRUE(ApplyLaunchPolicy(policy, EnvMap(), &role, &job, &exit_code).ok());
  if (before != nullptr)
    setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  else
    unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(role, LaunchRole::kLauncher);
  EXPECT_EQ(exit_code, 0);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages[0], "--device 2,3: one data-parallel worker per GPU (--nproc 2)");
  for (int rank = 0; rank < 2; ++rank) {
    const std::string env = testing::ReadFileToString(out / ("env." + std::to_string(rank)));
    EXPECT_NE(env.find(std::string("CUDA_VISIBLE_DEVICES=2,3") + '\0'), std::string::npos) << "worker " << rank;
  }

  // --nproc 1 given: the devices do not override it.
  messages.clear();
  policy.nproc_given = true;
  ASSERT_TRUE(ApplyLaunchPolicy(policy, EnvMap(), &role, &job, &exit_code).ok());
  EXPECT_EQ(role, LaunchRole::kSingle);
  EXPECT_TRUE(messages.empty());
}

// A worker its launcher bound (FFYOLO_NUMA_BOUND) does not bind itself again: it only learns its place.
TEST(LaunchPolicyTest, AWorkerItsLauncherBoundIsNotBoundAgain) {
  std::vector<std::string> messages;
  LaunchPolicy policy = WorkerPolicy("/nonexistent", &messages);
  policy.bind_numa = true;
  const EnvMap env = {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
                      {"FFYOLO_NUMA_BOUND", "1"}};
  LaunchRole role;
  DistEnv job;
  int exit_code = -1;
  ASSERT_TRUE(ApplyLaunchPolicy(policy, env, &role, &job, &exit_code).ok());
  EXPECT_EQ(role, LaunchRole::kWorker);
  EXPECT_EQ(job.rank, 1);
  EXPECT_EQ(job.local_world_size, 2);
  EXPECT_TRUE(messages.empty());  // no plan was made
}

}  // namespace
}  // namespace ffyolo
