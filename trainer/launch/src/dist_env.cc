#include "ffyolo/dist_env.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <initializer_list>

#include "parse_text.h"
#include "slurm_env.h"

extern char** environ;

namespace ffyolo {

using ffr::Status;

namespace {

constexpr int kDefaultMasterPort = 29500;

// What a DistEnv's fields were read from, for error messages.
struct FieldNames {
  const char* rank;
  const char* local_rank;
  const char* world_size;
  const char* local_world_size;
  const char* node_rank;
  const char* nnodes;
};

constexpr FieldNames kTorchrunNames = {"RANK", "LOCAL_RANK", "WORLD_SIZE",
                                       "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE"};
constexpr FieldNames kSlurmNames = {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",
                                    "tasks per node", "SLURM_NODEID", "SLURM_NNODES"};
constexpr FieldNames kFlagNames = {"rank", "local rank", "world size", "--nproc", "--node-rank", "--nnodes"};

const std::string* Find(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

Status IntVariable(const std::string& name, const std::string& text, int* value) {
  if (!ParseInt(text, value))
    return Status::InvalidArgument(name + "='" + text + "' is not an integer");
  return Status::OK();
}

Status RequiredInt(const EnvMap& env, const char* name, int* value) {
  const std::string* text = Find(env, name);
  if (text == nullptr) return Status::InvalidArgument(std::string(name) + " is not set");
  return IntVariable(name, *text, value);
}

// The first of `names` that is set, else `fallback`.
Status OptionalInt(const EnvMap& env, std::initializer_list<const char*> names, int fallback, int* value) {
  for (const char* name : names)
    if (const std::string* text = Find(env, name)) return IntVariable(name, *text, value);
  *value = fallback;
  return Status::OK();
}

Status CheckIndex(const char* index_name, int index, const char* size_name, int size) {
  if (size < 1)
    return Status::InvalidArgument(std::string(size_name) + "=" + std::to_string(size) + " must be at least 1");
  if (index < 0 || index >= size)
    return Status::InvalidArgument(std::string(index_name) + "=" + std::to_string(index) + " is not in [0, " +
                                   size_name + "=" + std::to_string(size) + ")");
  return Status::OK();
}

Status CheckPort(const char* name, int port) {
  if (port < 1 || port > 65535)
    return Status::InvalidArgument(std::string(name) + "=" + std::to_string(port) + " is not a TCP port");
  return Status::OK();
}

Status CheckDistEnv(const DistEnv& me, const FieldNames& names) {
  FFR_RETURN_IF_ERROR(CheckIndex(names.rank, me.rank, names.world_size, me.world_size));
  FFR_RETURN_IF_ERROR(CheckIndex(names.local_rank, me.local_rank, names.local_world_size, me.local_world_size));
  FFR_RETURN_IF_ERROR(CheckIndex(names.node_rank, me.node_rank, names.nnodes, me.nnodes));
  if (me.local_world_size > me.world_size)
    return Status::InvalidArgument(std::string(names.local_world_size) + "=" + std::to_string(me.local_world_size) +
                                   " exceeds " + names.world_size + "=" + std::to_string(me.world_size));
  if (me.master_addr.empty()) return Status::InvalidArgument("the master address is empty");
  return Status::OK();
}

Status CheckFlags(const LaunchFlags& flags) {
  if (flags.nproc < 1) return Status::InvalidArgument("--nproc " + std::to_string(flags.nproc) + " must be at least 1");
  FFR_RETURN_IF_ERROR(CheckIndex("--node-rank", flags.node_rank, "--nnodes", flags.nnodes));
  if (flags.master_port != 0) FFR_RETURN_IF_ERROR(CheckPort("--master-port", flags.master_port));
  return Status::OK();
}

// --master-addr, else MASTER_ADDR, else `fallback` ("" when there is none).
std::string MasterAddr(const LaunchFlags& flags, const EnvMap& env, const std::string& fallback) {
  if (!flags.master_addr.empty()) return flags.master_addr;
  if (const std::string* addr = Find(env, "MASTER_ADDR")) return *addr;
  return fallback;
}

// --master-port, else MASTER_PORT, else 0.
Status GivenMasterPort(const LaunchFlags& flags, const EnvMap& env, int* port) {
  *port = flags.master_port;
  if (*port != 0) return Status::OK();
  if (const std::string* text = Find(env, "MASTER_PORT")) {
    FFR_RETURN_IF_ERROR(IntVariable("MASTER_PORT", *text, port));
    return CheckPort("MASTER_PORT", *port);
  }
  return Status::OK();
}

// A launcher's own view: its first worker's rank, `nproc` workers per node.
void FillLauncher(int nproc, int node_rank, int nnodes, DistEnv* me) {
  me->local_rank = 0;
  me->local_world_size = nproc;
  me->node_rank = node_rank;
  me->nnodes = nnodes;
  me->rank = node_rank * nproc;
  me->world_size = nnodes * nproc;
}

Status FromTorchrun(const EnvMap& env, DistEnv* me) {
  FFR_RETURN_IF_ERROR(RequiredInt(env, "RANK", &me->rank));
  FFR_RETURN_IF_ERROR(RequiredInt(env, "WORLD_SIZE", &me->world_size));
  FFR_RETURN_IF_ERROR(RequiredInt(env, "LOCAL_RANK", &me->local_rank));
  FFR_RETURN_IF_ERROR(RequiredInt(env, "LOCAL_WORLD_SIZE", &me->local_world_size));
  FFR_RETURN_IF_ERROR(CheckIndex("LOCAL_RANK", me->local_rank, "LOCAL_WORLD_SIZE", me->local_world_size));
  if (Find(env, "GROUP_WORLD_SIZE") == nullptr && me->world_size % me->local_world_size != 0)
    return Status::InvalidArgument("WORLD_SIZE=" + std::to_string(me->world_size) +
                                   " is not a multiple of LOCAL_WORLD_SIZE=" +
                                   std::to_string(me->local_world_size) + " and GROUP_WORLD_SIZE is not set");
  FFR_RETURN_IF_ERROR(OptionalInt(env, {"GROUP_WORLD_SIZE"}, me->world_size / me->local_world_size, &me->nnodes));
  FFR_RETURN_IF_ERROR(OptionalInt(env, {"GROUP_RANK"}, me->rank / me->local_world_size, &me->node_rank));
  me->master_addr = MasterAddr(LaunchFlags(), env, "127.0.0.1");
  FFR_RETURN_IF_ERROR(GivenMasterPort(LaunchFlags(), env, &me->master_port));
  if (me->master_port == 0) me->master_port = kDefaultMasterPort;
  return CheckDistEnv(*me, kTorchrunNames);
}

// A flag the user gave (not its default) must agree with what SLURM says.
Status CheckAgreesWithSlurm(const char* flag, int given, int default_value, const char* variable, int slurm) {
  if (given == default_value || given == slurm) return Status::OK();
  return Status::InvalidArgument(std::string(flag) + " " + std::to_string(given) + " disagrees with " + variable +
                                 "=" + std::to_string(slurm));
}

Status FromSlurm(const LaunchFlags& flags, const EnvMap& env, LaunchRole* role, DistEnv* me) {
  int ntasks = 0, nnodes = 0, node_id = 0;
  FFR_RETURN_IF_ERROR(RequiredInt(env, "SLURM_PROCID", &me->rank));
  FFR_RETURN_IF_ERROR(OptionalInt(env, {"SLURM_NTASKS", "SLURM_NPROCS"}, 1, &ntasks));
  FFR_RETURN_IF_ERROR(OptionalInt(env, {"SLURM_NNODES", "SLURM_JOB_NUM_NODES"}, 1, &nnodes));
  FFR_RETURN_IF_ERROR(OptionalInt(env, {"SLURM_NODEID"}, 0, &node_id));
  FFR_RETURN_IF_ERROR(CheckIndex("SLURM_NODEID", node_id, "SLURM_NNODES", nnodes));
  if (ntasks < nnodes)
    return Status::InvalidArgument("SLURM_NTASKS=" + std::to_string(ntasks) + " is below SLURM_NNODES=" +
                                   std::to_string(nnodes));
  const bool per_task = ntasks > nnodes || flags.nproc == 1;
  *role = per_task ? LaunchRole::kWorker : LaunchRole::kLauncher;

  std::string first_host;
  const std::string* nodelist = Find(env, "SLURM_JOB_NODELIST");
  if (nodelist == nullptr) nodelist = Find(env, "SLURM_NODELIST");
  if (nodelist != nullptr) FFR_RETURN_IF_ERROR(FirstSlurmHost(*nodelist, &first_host));
  me->master_addr = MasterAddr(flags, env, first_host.empty() && nnodes == 1 ? "127.0.0.1" : first_host);
  if (me->master_addr.empty())
    return Status::InvalidArgument("SLURM_NNODES=" + std::to_string(nnodes) +
                                   " but neither --master-addr, MASTER_ADDR nor SLURM_JOB_NODELIST is set");
  FFR_RETURN_IF_ERROR(GivenMasterPort(flags, env, &me->master_port));
  if (me->master_port == 0 && !(*role == LaunchRole::kLauncher && nnodes == 1)) {
    // Every task must arrive at the same port without talking to the others.
    me->master_port = kDefaultMasterPort;
    if (const std::string* job_id = Find(env, "SLURM_JOB_ID"))
      FFR_RETURN_IF_ERROR(SlurmJobPort(*job_id, &me->master_port));
  }
  if (me->master_port == 0) FFR_RETURN_IF_ERROR(PickFreePort(&me->master_port));

  if (*role == LaunchRole::kLauncher) {
    FFR_RETURN_IF_ERROR(CheckAgreesWithSlurm("--nnodes", flags.nnodes, 1, "SLURM_NNODES", nnodes));
    FFR_RETURN_IF_ERROR(CheckAgreesWithSlurm("--node-rank", flags.node_rank, 0, "SLURM_NODEID", node_id));
    FillLauncher(flags.nproc, node_id, nnodes, me);
    return CheckDistEnv(*me, kFlagNames);
  }
  me->world_size = ntasks;
  me->nnodes = nnodes;
  me->node_rank = node_id;
  FFR_RETURN_IF_ERROR(RequiredInt(env, "SLURM_LOCALID", &me->local_rank));
  if (Find(env, "SLURM_NTASKS_PER_NODE")) {
    FFR_RETURN_IF_ERROR(RequiredInt(env, "SLURM_NTASKS_PER_NODE", &me->local_world_size));
  } else if (const std::string* tasks_per_node = Find(env, "SLURM_TASKS_PER_NODE")) {
    FFR_RETURN_IF_ERROR(SlurmTasksOnNode(*tasks_per_node, node_id, &me->local_world_size));
  } else if (nnodes == 1) {
    me->local_world_size = ntasks;
  } else {
    return Status::InvalidArgument("SLURM_NNODES=" + std::to_string(nnodes) +
                                   " but neither SLURM_NTASKS_PER_NODE nor SLURM_TASKS_PER_NODE is set");
  }
  return CheckDistEnv(*me, kSlurmNames);
}

Status FromFlags(const LaunchFlags& flags, const EnvMap& env, DistEnv* me) {
  me->master_addr = MasterAddr(flags, env, flags.node_rank == 0 ? "127.0.0.1" : "");
  if (me->master_addr.empty())
    return Status::InvalidArgument("--node-rank " + std::to_string(flags.node_rank) +
                                   " needs --master-addr (or MASTER_ADDR): the host of node 0");
  FFR_RETURN_IF_ERROR(GivenMasterPort(flags, env, &me->master_port));
  if (me->master_port == 0) {
    if (flags.nnodes == 1) {
      FFR_RETURN_IF_ERROR(PickFreePort(&me->master_port));
    } else {
      me->master_port = kDefaultMasterPort;
    }
  }
  FillLauncher(flags.nproc, flags.node_rank, flags.nnodes, me);
  return CheckDistEnv(*me, kFlagNames);
}

}  // namespace

EnvMap CurrentEnvironment() {
  EnvMap env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t eq = text.find('=');
    if (eq != std::string::npos) env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  return env;
}

Status ResolveLaunch(const LaunchFlags& flags, const EnvMap& env, LaunchRole* role, DistEnv* me) {
  FFR_RETURN_IF_ERROR(CheckFlags(flags));
  DistEnv resolved;
  LaunchRole resolved_role = LaunchRole::kSingle;
  if (Find(env, "RANK") && Find(env, "WORLD_SIZE")) {
    resolved_role = LaunchRole::kWorker;
    FFR_RETURN_IF_ERROR(FromTorchrun(env, &resolved));
  } else if (Find(env, "SLURM_PROCID")) {
    FFR_RETURN_IF_ERROR(FromSlurm(flags, env, &resolved_role, &resolved));
  } else if (flags.nproc > 1 || flags.nnodes > 1) {
    resolved_role = LaunchRole::kLauncher;
    FFR_RETURN_IF_ERROR(FromFlags(flags, env, &resolved));
  } else {
    resolved.master_addr = MasterAddr(flags, env, resolved.master_addr);
    int port = 0;
    FFR_RETURN_IF_ERROR(GivenMasterPort(flags, env, &port));
    if (port != 0) resolved.master_port = port;
  }
  *role = resolved_role;
  *me = resolved;
  return Status::OK();
}

std::vector<std::pair<std::string, std::string>> WorkerVariables(const DistEnv& launcher, int local_rank) {
  const int rank = launcher.node_rank * launcher.local_world_size + local_rank;
  const auto str = [](int v) { return std::to_string(v); };
  return {
      {"RANK", str(rank)},
      {"LOCAL_RANK", str(local_rank)},
      {"WORLD_SIZE", str(launcher.world_size)},
      {"LOCAL_WORLD_SIZE", str(launcher.local_world_size)},
      {"GROUP_RANK", str(launcher.node_rank)},
      {"GROUP_WORLD_SIZE", str(launcher.nnodes)},
      {"ROLE_RANK", str(rank)},
      {"ROLE_WORLD_SIZE", str(launcher.world_size)},
      {"MASTER_ADDR", launcher.master_addr},
      {"MASTER_PORT", str(launcher.master_port)},
      {"TORCHELASTIC_RESTART_COUNT", "0"},
      {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
  };
}

Status PickFreePort(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno("picking a free port: socket", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::FromErrno("picking a free port on 127.0.0.1", err);
  }
  ::close(fd);
  *port = ntohs(addr.sin_port);
  return Status::OK();
}

}  // namespace ffyolo
