// What a training command does before it trains, decided apart from the tool: whether this
// process launches workers, is one, or trains alone (ResolveLaunch); for a launcher, its workers'
// GPUs and NUMA bindings; for a worker someone else started, its own binding. Torch-free: it runs
// before anything initialises CUDA.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ffyolo/dist_env.h"

namespace ffyolo {

struct LaunchPolicy {
  LaunchFlags flags;              // --nproc, --nnodes, ... as given
  bool nproc_given = false;       // --nproc was on the command line
  std::vector<int> cuda_devices;  // --device 0,1: several give one worker per GPU, unless --nproc says otherwise
  bool cuda = false;              // the run trains on GPUs: each worker's binding follows its GPU
  bool bind_numa = false;         // --bind-numa
  std::vector<std::string> args;  // this command line, which a launcher's workers run again
  std::string executable = "/proc/self/exe";
  // What the policy decided (the --device rule, the NUMA plan); unset: nothing is said.
  std::function<void(const std::string&)> on_message;
  // The supervising launcher's own lines (LaunchOptions::log); unset: nothing is said.
  std::function<void(const std::string&)> on_launcher_message;
};

// Applies the policy in this process, given its environment. *role is what ResolveLaunch decided.
// kLauncher: starts the workers (CUDA_VISIBLE_DEVICES naming the --device GPUs, one NUMA binding
// each with bind_numa), waits for them, and sets *exit_code to LaunchWorkers' result; the caller
// exits with it. kWorker or kSingle: *job is this process's place; with bind_numa, a process its
// launcher did not bind binds itself first (started by torchrun, srun or by hand). Errors name the
// flag (--bind-numa, --nproc, ...) and leave nothing started.
ffr::Status ApplyLaunchPolicy(const LaunchPolicy& policy, const EnvMap& env, LaunchRole* role, DistEnv* job,
                              int* exit_code);

}  // namespace ffyolo
