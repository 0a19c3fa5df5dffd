// Env: the parts of the POSIX Env that the reader's own tests do not reach.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "ffr/env.h"
#include "testing/test_env.h"

namespace ffr {
namespace {

TEST(EnvTest, LockFileMakesASecondHolderWaitUntilTheFirstReleases) {
  ffyolo::testing::ScratchDir dir("env_lock");
  const std::string path = dir / "LOCK";
  std::unique_ptr<FileLock> first;
  ASSERT_TRUE(Env::Default()->LockFile(path, &first).ok());
  std::atomic<bool> second_has_it{false};
  std::thread waiter([&] {
    std::unique_ptr<FileLock> second;
    ASSERT_TRUE(Env::Default()->LockFile(path, &second).ok());  // a separate open: flock excludes it too
    second_has_it = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(second_has_it.load());
  first.reset();
  waiter.join();
  EXPECT_TRUE(second_has_it.load());
}

TEST(EnvTest, LockFileInAMissingDirectoryNamesThePath) {
  ffyolo::testing::ScratchDir dir("env_lock_missing");
  std::unique_ptr<FileLock> lock;
  const Status s = Env::Default()->LockFile(dir / "no/such/LOCK", &lock);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no/such/LOCK"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace ffr
