// Runs LaunchWorkers the way yolo-train --nproc does, as a process of its own
// that launcher_test can signal or kill.
// Usage: launch_test_harness NPROC GRACE_MS WORKER [WORKER ARGS...]
#include <cstdio>
#include <cstdlib>

#include "ffyolo/dist_env.h"
#include "ffyolo/launcher.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s NPROC GRACE_MS WORKER [ARGS...]\n", argv[0]);
    return 64;
  }
  ffyolo::LaunchFlags flags;
  flags.nproc = std::atoi(argv[1]);
  ffyolo::LaunchRole role;
  ffyolo::DistEnv job;
  const ffr::Status s = ffyolo::ResolveLaunch(flags, ffyolo::CurrentEnvironment(), &role, &job);
  if (!s.ok() || role != ffyolo::LaunchRole::kLauncher) {
    std::fprintf(stderr, "harness: not a launcher: %s\n", s.ToString().c_str());
    return 64;
  }
  ffyolo::LaunchOptions options;
  options.executable = argv[3];
  options.args.assign(argv + 3, argv + argc);
  options.job = job;
  options.grace = std::chrono::milliseconds(std::atoi(argv[2]));
  options.log = [](const std::string& message) { std::fprintf(stderr, "harness: %s\n", message.c_str()); };
  return ffyolo::LaunchWorkers(options);
}
