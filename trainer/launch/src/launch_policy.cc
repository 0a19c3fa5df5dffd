#include "ffyolo/launch_policy.h"

#include <cstdlib>

#include "ffyolo/launcher.h"
#include "ffyolo/numa_binding.h"

namespace ffyolo {

namespace {

// Set by a launcher that bound its workers, so that they do not bind themselves again.
constexpr char kNumaBoundVariable[] = "FFYOLO_NUMA_BOUND";

// "0,1": --device's and CUDA_VISIBLE_DEVICES' spelling.
std::string DeviceList(const std::vector<int>& devices) {
  std::string list;
  for (int index : devices) list += (list.empty() ? "" : ",") + std::to_string(index);
  return list;
}

void Say(const std::function<void(const std::string&)>& sink, const std::string& message) {
  if (sink) sink(message);
}

// --bind-numa: one binding per local worker (GPU runs: the node of its GPU).
ffr::Status PlanBindings(const LaunchPolicy& policy, int local_world_size, const EnvMap& env,
                         std::vector<NumaBinding>* plan) {
  NumaPlanOptions po;
  po.local_world_size = local_world_size;
  po.allowed_cpus = AffinityCpus();
  if (policy.cuda) {
    po.gpu_pci_ids = ListGpuPciIds(po.sysfs_root, env);
    if (static_cast<int>(po.gpu_pci_ids.size()) < local_world_size)
      return ffr::Status::InvalidArgument("--bind-numa: sysfs lists " + std::to_string(po.gpu_pci_ids.size()) +
                                          " NVIDIA GPU(s) for " + std::to_string(local_world_size) + " workers");
    po.gpu_pci_ids.resize(local_world_size);
  }
  std::string text;
  FFR_RETURN_IF_ERROR(PlanNumaBinding(po, plan, &text));
  Say(policy.on_message, text);
  return ffr::Status::OK();
}

ffr::Status Launch(const LaunchPolicy& policy, const EnvMap& env, const DistEnv& job, int* exit_code) {
  LaunchOptions lo;
  lo.executable = policy.executable;
  lo.args = policy.args;
  lo.job = job;
  lo.log = policy.on_launcher_message;
  if (policy.bind_numa) FFR_RETURN_IF_ERROR(PlanBindings(policy, job.local_world_size, env, &lo.bindings));
  if (policy.cuda_devices.size() > 1)  // rank r takes visible device r (device.h)
    setenv("CUDA_VISIBLE_DEVICES", DeviceList(policy.cuda_devices).c_str(), 1);
  if (policy.bind_numa) setenv(kNumaBoundVariable, "1", 1);  // the workers are bound before they start
  *exit_code = LaunchWorkers(lo);
  return ffr::Status::OK();
}

}  // namespace

ffr::Status ApplyLaunchPolicy(const LaunchPolicy& policy, const EnvMap& env, LaunchRole* role, DistEnv* job,
                              int* exit_code) {
  LaunchFlags flags = policy.flags;
  if (policy.cuda_devices.size() > 1 && !policy.nproc_given) {  // Ultralytics would fall back to DataParallel here
    flags.nproc = static_cast<int>(policy.cuda_devices.size());
    Say(policy.on_message, "--device " + DeviceList(policy.cuda_devices) +
                               ": one data-parallel worker per GPU (--nproc " + std::to_string(flags.nproc) + ")");
  }
  FFR_RETURN_IF_ERROR(ResolveLaunch(flags, env, role, job));
  if (*role == LaunchRole::kLauncher) return Launch(policy, env, *job, exit_code);
  if (policy.bind_numa && env.count(kNumaBoundVariable) == 0) {
    // Started by torchrun, srun or by hand: bind first thing, before any thread exists.
    std::vector<NumaBinding> plan;
    FFR_RETURN_IF_ERROR(PlanBindings(policy, job->local_world_size, env, &plan));
    if (const int err = ApplyNumaBinding(plan.at(job->local_rank)); err != 0)
      return ffr::Status::FromErrno("--bind-numa: binding rank " + std::to_string(job->rank), err);
  }
  return ffr::Status::OK();
}

}  // namespace ffyolo
