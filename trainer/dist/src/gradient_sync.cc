#include "ffyolo/gradient_sync.h"

#include <torch/torch.h>

#include <stdexcept>

#include "ffyolo/communicator.h"

namespace ffyolo {

struct GradientSync::Impl {
  struct Slot {
    size_t bucket = 0;
    int64_t offset = 0;
    bool ready = false;
    int64_t hook = -1;
  };
  struct Bucket {
    torch::Tensor flat;
    std::vector<size_t> params;
    size_t pending = 0;
  };

  Communicator* comm;
  std::vector<torch::Tensor> params;
  std::vector<Slot> slots;
  std::vector<Bucket> buckets;
  size_t next_launch = 0;
  bool sync = false;

  torch::Tensor View(size_t i) {
    const Slot& s = slots[i];
    return buckets[s.bucket].flat.narrow(0, s.offset, params[i].numel()).view_as(params[i]);
  }

  // All-reduces, strictly in bucket order, every complete bucket not yet started.
  void LaunchReady() {
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0)
      comm->StartAllReduceSum(buckets[next_launch++].flat);
  }

  // The hook sees this pass's gradient before it is added to .grad; the
  // bucket takes the sum, so accumulated steps are averaged too.
  void OnGradient(size_t i, const torch::Tensor& grad) {
    if (!sync || slots[i].ready) return;
    torch::NoGradGuard no_grad;
    torch::Tensor view = View(i);
    const torch::Tensor& accumulated = params[i].grad();
    if (accumulated.defined())
      torch::add_out(view, accumulated, grad);
    else
      view.copy_(grad);
    slots[i].ready = true;
    if (--buckets[slots[i].bucket].pending == 0) LaunchReady();
  }
};

GradientSync::GradientSync(Communicator* comm, const std::vector<at::Tensor>& params, int64_t bucket_bytes,
                           int64_t first_bucket_bytes)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.comm = comm;
  for (const torch::Tensor& p : params)
    if (p.requires_grad()) m.params.push_back(p);
  m.slots.resize(m.params.size());
  int64_t cap = first_bucket_bytes, bytes = 0;
  for (size_t k = m.params.size(); k-- > 0;) {
    const torch::Tensor& p = m.params[k];
    if (p.scalar_type() != m.params.back().scalar_type() || p.device() != m.params.back().device())
      throw std::invalid_argument("GradientSync: parameters of mixed dtype or device");
    const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
    if (m.buckets.empty() || (bytes > 0 && bytes + size > cap)) {
      if (!m.buckets.empty()) cap = bucket_bytes;
      m.buckets.emplace_back();
      bytes = 0;
    }
    Impl::Bucket& b = m.buckets.back();
    m.slots[k].bucket = m.buckets.size() - 1;
    m.slots[k].offset = bytes / static_cast<int64_t>(p.element_size());
    b.params.push_back(k);
    bytes += size;
  }
  for (Impl::Bucket& b : m.buckets) {
    int64_t numel = 0;
    for (size_t k : b.params) numel += m.params[k].numel();
    b.flat = torch::zeros({numel}, m.params.front().options().requires_grad(false));
  }
  for (size_t k = 0; k < m.params.size(); ++k) {
    Impl* impl = impl_.get();
    m.slots[k].hook = static_cast<int64_t>(
        m.params[k].register_hook([impl, k](const torch::Tensor& grad) { impl->OnGradient(k, grad); }));
  }
}

GradientSync::~GradientSync() {
  for (size_t k = 0; k < impl_->params.size(); ++k) impl_->params[k].remove_hook(impl_->slots[k].hook);
}

size_t GradientSync::num_buckets() const { return impl_->buckets.size(); }

void GradientSync::Prepare(bool sync) {
  Impl& m = *impl_;
  m.sync = sync;
  m.next_launch = 0;
  for (Impl::Slot& s : m.slots) s.ready = false;
  for (Impl::Bucket& b : m.buckets) b.pending = b.params.size();
}

void GradientSync::Finish() {
  Impl& m = *impl_;
  if (!m.sync) return;
  torch::NoGradGuard no_grad;
  // Parameters that got no gradient in this pass (unused in the graph) send what .grad holds, or zeros.
  for (size_t b = m.next_launch; b < m.buckets.size(); ++b)
    for (size_t k : m.buckets[b].params)
      if (!m.slots[k].ready) {
        const torch::Tensor& g = m.params[k].grad();
        if (g.defined())
          m.View(k).copy_(g);
        else
          m.View(k).zero_();
        m.slots[k].ready = true;
        --m.buckets[b].pending;
      }
  m.LaunchReady();
  m.comm->FinishPending();
  const double world = m.comm->world_size();
  for (Impl::Bucket& b : m.buckets) b.flat.div_(world);
  for (size_t k = 0; k < m.params.size(); ++k) {
    torch::Tensor& p = m.params[k];
    if (p.grad().defined())
      p.mutable_grad().copy_(m.View(k));
    else
      p.mutable_grad() = m.View(k).clone();
  }
  m.sync = false;
}

// Finish sends what .grad holds for every parameter no hook marked: after Prepare(true), all of them.
void GradientSync::AllReduceGradients() {
  Prepare(true);
  Finish();
}

}  // namespace ffyolo
