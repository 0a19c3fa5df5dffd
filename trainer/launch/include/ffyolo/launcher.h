// Starts and supervises the local workers of a distributed job, like
// torchelastic's agent without restarts: one failing worker stops them all,
// and the launcher's stop signals reach every worker.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "ffyolo/dist_env.h"
#include "ffyolo/numa_binding.h"

namespace ffyolo {

struct LaunchOptions {
  std::string executable = "/proc/self/exe";
  std::vector<std::string> args;            // the workers' argv, args[0] included
  DistEnv job;                              // nnodes/node_rank/master; local_world_size = workers to start
  std::vector<NumaBinding> bindings;        // per local rank, applied in the child before exec; may be empty
  std::chrono::milliseconds grace{30000};   // SIGTERM -> SIGKILL grace
  std::function<void(const std::string&)> log;  // launcher messages; unset: nothing is said
};

// Forks and execs job.local_world_size workers with the parent environment
// plus WorkerVariables(job, i). The workers share one new process group (led
// by worker 0), so a terminal's Ctrl-C reaches only the launcher, which
// forwards it once, and signals reach the workers' own child processes too.
// Each child sets PR_SET_PDEATHSIG(SIGTERM) (exiting if the launcher is
// already gone) and applies its NUMA binding; a binding the kernel refuses is
// reported on stderr and the worker runs unbound.
//
// Supervision: the first worker that exits non-zero or by a signal makes the
// launcher send SIGTERM to the group, wait up to `grace`, then SIGKILL.
// SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to the launcher
// are forwarded to the group and start the same grace -> SIGKILL clock (a
// worker may save a checkpoint and exit with 75).
//
// Returns, once every worker has exited, the first non-zero worker status
// (exit code, or 128 + signal), or 0 when all exited 0; 1 (with a log line)
// when the workers cannot be started. Blocks the calling thread, which must
// outlive the workers (PDEATHSIG follows the forking thread). Installs signal
// handlers for the signals above and SIGCHLD while it runs and restores the
// previous dispositions before returning; one LaunchWorkers per process at a
// time.
int LaunchWorkers(const LaunchOptions& options);

}  // namespace ffyolo
