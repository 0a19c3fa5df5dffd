#include "ffyolo/communicator.h"

#include <torch/torch.h>

#include <cstdlib>
#include <deque>
#include <map>
#include <stdexcept>

#include "ffyolo/torch_compat.h"

namespace ffyolo {

struct Communicator::Impl {
  DistEnv env;
  torch::Device device{torch::kCPU};
  std::chrono::milliseconds timeout{0};
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<compat::CommBackend> group;
  const char* backend = "gloo";
  std::deque<c10::intrusive_ptr<c10d::Work>> pending;

  // Starts a collective and waits for it: a failure of either names this rank, the operation and the backend.
  template <typename Launch>
  c10::intrusive_ptr<c10d::Work> Start(const char* what, Launch launch) {
    try {
      return launch();
    } catch (const std::exception& e) {
      Fail(what, e);
    }
  }
  void Wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) {
    try {
      work->wait(timeout);
    } catch (const std::exception& e) {
      Fail(what, e);
    }
  }
  [[noreturn]] void Fail(const char* what, const std::exception& e) const {
    throw std::runtime_error("rank " + std::to_string(env.rank) + ": " + what + " over " + backend +
                             " failed (did another rank die? its log says why): " + e.what());
  }
  c10::intrusive_ptr<c10d::Work> StartSum(at::Tensor& tensor, const char* what) {
    return Start(what, [&] {
      std::vector<at::Tensor> one{tensor};
      return group->allreduce(one, c10d::AllreduceOptions{});
    });
  }
};

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Communicator::~Communicator() = default;

ffr::Status Communicator::Create(const DistEnv& env, int cuda_device, std::chrono::milliseconds timeout,
                                 std::unique_ptr<Communicator>* out) {
  auto impl = std::make_unique<Impl>();
  impl->env = env;
  impl->timeout = timeout;
  const std::string where = "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) + " (" +
                            env.master_addr + ":" + std::to_string(env.master_port) + ")";
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<uint16_t>(env.master_port);
    so.isServer = env.rank == 0;
    so.numWorkers = static_cast<size_t>(env.world_size);
    so.waitWorkers = true;
    so.timeout = timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
    if (cuda_device >= 0) {
#ifdef USE_C10D_NCCL
      impl->device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(cuda_device));
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      impl->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl->store, env.rank, env.world_size, options);
      impl->backend = "nccl";
#else
      return ffr::Status::NotSupported(where + ": this LibTorch was built without NCCL; use --device cpu");
#endif
    } else {
#ifdef FFYOLO_HAVE_GLOO
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      // What torch.distributed does: GLOO_SOCKET_IFNAME if set, else the host's own name (or loopback for one node).
      const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
      if (ifname && *ifname)
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      else if (env.nnodes == 1)
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      else
        options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      options->threads = 2;
      impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, env.rank, env.world_size, options);
      impl->backend = "gloo";
#else
      return ffr::Status::NotSupported(where + ": this LibTorch has no Gloo headers (CPU training over several "
                                       "processes needs libgloo-dev); use a CUDA device");
#endif
    }
  } catch (const std::exception& e) {
    return ffr::Status::IOError(where + ": joining the job failed: " + e.what());
  }
  out->reset(new Communicator(std::move(impl)));
  return ffr::Status::OK();
}

int Communicator::rank() const { return impl_->env.rank; }
int Communicator::world_size() const { return impl_->env.world_size; }
const char* Communicator::backend() const { return impl_->backend; }

void Communicator::AllReduceSum(at::Tensor& tensor) { impl_->Wait(impl_->StartSum(tensor, "all-reduce"), "all-reduce"); }

void Communicator::StartAllReduceSum(at::Tensor& tensor) {
  impl_->pending.push_back(impl_->StartSum(tensor, "gradient all-reduce"));
}

void Communicator::FinishPending() {
  while (!impl_->pending.empty()) {
    c10::intrusive_ptr<c10d::Work> work = std::move(impl_->pending.front());
    impl_->pending.pop_front();
    impl_->Wait(work, "gradient all-reduce");
  }
}

void Communicator::Broadcast(const std::vector<at::Tensor>& tensors, int root) {
  torch::NoGradGuard no_grad;
  std::map<c10::ScalarType, std::vector<at::Tensor>> by_type;
  for (const at::Tensor& t : tensors) by_type[t.scalar_type()].push_back(t);
  for (auto& [type, group] : by_type) {
    std::vector<at::Tensor> flat_views;
    for (const at::Tensor& t : group) flat_views.push_back(t.reshape({-1}));
    std::vector<at::Tensor> flat{torch::cat(flat_views).to(impl_->device)};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    impl_->Wait(impl_->Start("broadcast", [&] { return impl_->group->broadcast(flat, options); }), "broadcast");
    int64_t offset = 0;
    for (const at::Tensor& t : group) {
      const int64_t n = t.numel();
      at::Tensor(t).copy_(flat[0].narrow(0, offset, n).view_as(t));
      offset += n;
    }
  }
}

bool Communicator::AnyRank(bool flag) {
  at::Tensor t = torch::full({1}, flag ? 1.0f : 0.0f, torch::TensorOptions().device(impl_->device));
  AllReduceSum(t);
  return t.item<float>() > 0;
}

void Communicator::Barrier() { AnyRank(false); }

}  // namespace ffyolo
