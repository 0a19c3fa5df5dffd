// One rank of ddp_test's jobs: ddp_step_worker OUT_DIR MODE, started with
// torchrun's variables by LaunchWorkers. Writes OUT_DIR/rank<R>.pt.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>

#include "ddp_steps.h"
#include "ffyolo/communicator.h"
#include "ffyolo/dist_env.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ddp_step_worker OUT_DIR MODE\n");
    return 2;
  }
  at::set_num_threads(1);
  ffyolo::LaunchRole role;
  ffyolo::DistEnv env;
  ffr::Status s = ffyolo::ResolveLaunch(ffyolo::LaunchFlags{}, ffyolo::CurrentEnvironment(), &role, &env);
  if (!s.ok() || role != ffyolo::LaunchRole::kWorker) {
    std::fprintf(stderr, "ddp_step_worker: not started as a worker: %s\n", s.ToString().c_str());
    return 2;
  }
  std::unique_ptr<ffyolo::Communicator> comm;
  s = ffyolo::Communicator::Create(env, -1, std::chrono::seconds(60), &comm);
  if (!s.ok()) {
    std::fprintf(stderr, "ddp_step_worker: %s\n", s.ToString().c_str());
    return 1;
  }
  ffyolo::DdpStepsOptions options = ffyolo::DdpStepsMode(argv[2]);
  options.world_size = env.world_size;
  std::vector<at::Tensor> state = ffyolo::RunDdpRank(options, comm.get());
  torch::save(state, std::string(argv[1]) + "/rank" + std::to_string(env.rank) + ".pt");
  comm->Barrier();
  return 0;
}
