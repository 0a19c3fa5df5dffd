// Who this process is in a distributed job, decided from the environment
// that started it (torchrun, SLURM's srun, yolo-train's own launcher) or from
// yolo-train's --nproc/--nnodes flags. No torch here: the launcher must decide
// before anything initialises CUDA.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ffr/status.h"

namespace ffyolo {

// A process's place in the job. For a launcher, rank is its first worker's
// rank and local_world_size the number of workers it starts.
struct DistEnv {
  int rank = 0, local_rank = 0, world_size = 1, local_world_size = 1;
  int node_rank = 0, nnodes = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

// yolo-train's --nproc --nnodes --node-rank --master-addr --master-port.
struct LaunchFlags {
  int nproc = 1, nnodes = 1, node_rank = 0;
  std::string master_addr;  // "" = not given
  int master_port = 0;      // 0 = not given (launcher: a free port when nnodes == 1, else 29500)
};

// kSingle: train alone. kLauncher: start local_world_size workers (LaunchWorkers)
// and supervise them. kWorker: one rank of a job someone else started.
enum class LaunchRole { kSingle, kLauncher, kWorker };

using EnvMap = std::map<std::string, std::string>;

// The process environment (environ) as a map.
EnvMap CurrentEnvironment();

// Decides the role, first match wins:
// 1. RANK and WORLD_SIZE set (torchrun, or our launcher): kWorker from RANK,
//    WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (all four required),
//    GROUP_RANK (default RANK / LOCAL_WORLD_SIZE), GROUP_WORLD_SIZE (default
//    WORLD_SIZE / LOCAL_WORLD_SIZE), MASTER_ADDR/MASTER_PORT (default
//    127.0.0.1:29500). The flags are ignored: the launcher that set these
//    variables already applied them (workers get the launcher's argv).
// 2. SLURM_PROCID set: with more tasks than nodes (SLURM_NTASKS > SLURM_NNODES)
//    or --nproc 1, one task per process => kWorker from SLURM_PROCID,
//    SLURM_LOCALID, SLURM_NTASKS, SLURM_NTASKS_PER_NODE or this node's entry of
//    SLURM_TASKS_PER_NODE ("4(x2),3"), SLURM_NODEID, SLURM_NNODES. With one task
//    per node and --nproc N > 1 => kLauncher for node SLURM_NODEID of
//    SLURM_NNODES. Master: --master-addr, else MASTER_ADDR, else the first host
//    of SLURM_JOB_NODELIST ("node[01-04,07],gpu5" -> "node01"); port:
//    --master-port, else MASTER_PORT, else 15000 + the last four digits of
//    SLURM_JOB_ID (Lightning's rule: every task of the job derives the same
//    port), else 29500.
// 3. --nproc > 1 or --nnodes > 1 => kLauncher from the flags. Master:
//    --master-addr, else MASTER_ADDR, else 127.0.0.1 (an error on nodes other
//    than 0); port: --master-port, else MASTER_PORT, else a free port when
//    nnodes == 1, else 29500.
// 4. Otherwise kSingle (world 1, rank 0).
// A launcher with nnodes == 1 and no port given picks a free port in cases 2
// and 3. Invalid values or combinations (RANK >= WORLD_SIZE, node_rank >=
// nnodes, non-numeric values, --nnodes disagreeing with SLURM_NNODES, ...)
// give InvalidArgument naming the variable or flag and its value.
ffr::Status ResolveLaunch(const LaunchFlags& flags, const EnvMap& env, LaunchRole* role, DistEnv* me);

// The torchrun variables a launcher gives its local worker `local_rank`:
// RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE,
// ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
// TORCHELASTIC_RESTART_COUNT=0 and CUDA_DEVICE_ORDER=PCI_BUS_ID (so that CUDA
// device i is the i-th GPU in PCI order, the order ListGpuPciIds uses).
std::vector<std::pair<std::string, std::string>> WorkerVariables(const DistEnv& launcher, int local_rank);

// A TCP port that was free a moment ago (bind 127.0.0.1:0, read it, close).
ffr::Status PickFreePort(int* port);

}  // namespace ffyolo
