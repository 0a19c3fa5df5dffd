#include "ffyolo/bn_silu.h"

#include <torch/torch.h>

#include <cstdint>

#ifdef FFYOLO_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include "ffyolo/kernels/bn_silu_kernels.h"

namespace ffyolo {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Channels-last [N, C, H, W] as the kernels' [rows, channels].
int64_t RowsOf(const torch::Tensor& x) { return x.size(0) * x.size(2) * x.size(3); }

bool Aligned(const torch::Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0; }

// Channels-last and 16-byte aligned, as the CUDA kernels read it (a copy only where it is not).
torch::Tensor KernelLayout(const torch::Tensor& t) {
  torch::Tensor out = t.contiguous(torch::MemoryFormat::ChannelsLast);
  return Aligned(out) ? out : out.clone(torch::MemoryFormat::ChannelsLast);
}

#ifdef FFYOLO_WITH_CUDA
kernels::Element ElementOf(const torch::Tensor& x) {
  return x.scalar_type() == torch::kHalf ? kernels::Element::kHalf : kernels::Element::kFloat;
}
void* CurrentStream(const torch::Tensor& x) { return c10::cuda::getCurrentCUDAStream(x.device().index()).stream(); }
#endif

class BnSiluFunction : public torch::autograd::Function<BnSiluFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x_in, const torch::Tensor& weight,
                               const torch::Tensor& bias, torch::Tensor running_mean, torch::Tensor running_var,
                               double momentum, double eps) {
    const torch::Tensor x = KernelLayout(x_in);
    const int64_t rows = RowsOf(x), channels = x.size(1);
    torch::Tensor y = torch::empty_like(x, torch::MemoryFormat::ChannelsLast);
    torch::Tensor stats = torch::empty({4, channels}, weight.options());
    if (x.is_cuda()) {
#ifdef FFYOLO_WITH_CUDA
      torch::Tensor workspace =
          torch::empty({kernels::BnSiluCudaWorkspace(rows, channels)}, weight.options().dtype(torch::kFloat));
      const char* error = kernels::BnSiluForwardCuda(
          ElementOf(x), x.data_ptr(), y.data_ptr(), rows, channels, weight.data_ptr<float>(),
          bias.data_ptr<float>(), running_mean.data_ptr<float>(), running_var.data_ptr<float>(), momentum, eps,
          stats.data_ptr<float>(), workspace.data_ptr<float>(), CurrentStream(x));
      TORCH_CHECK(error == nullptr, error);
#endif
    } else {
      AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "BnSiluForwardHost", [&] {
        kernels::BnSiluForwardHost<scalar_t>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), rows, channels,
                                             weight.data_ptr<scalar_t>(), bias.data_ptr<scalar_t>(),
                                             running_mean.data_ptr<scalar_t>(), running_var.data_ptr<scalar_t>(),
                                             momentum, eps, stats.data_ptr<scalar_t>());
      });
    }
    ctx->save_for_backward({x, weight, stats});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& weight = saved[1];
    const torch::Tensor& stats = saved[2];
    const torch::Tensor dy = KernelLayout(grad_outputs[0].to(x.scalar_type()));
    const int64_t rows = RowsOf(x), channels = x.size(1);
    torch::Tensor dx = torch::empty_like(x, torch::MemoryFormat::ChannelsLast);
    torch::Tensor dweight = torch::empty_like(weight);
    torch::Tensor dbias = torch::empty_like(weight);
    if (x.is_cuda()) {
#ifdef FFYOLO_WITH_CUDA
      torch::Tensor workspace = torch::empty({kernels::BnSiluCudaWorkspace(rows, channels)}, weight.options());
      const char* error = kernels::BnSiluBackwardCuda(
          ElementOf(x), x.data_ptr(), dy.data_ptr(), dx.data_ptr(), rows, channels, weight.data_ptr<float>(),
          stats.data_ptr<float>(), dweight.data_ptr<float>(), dbias.data_ptr<float>(), workspace.data_ptr<float>(),
          CurrentStream(x));
      TORCH_CHECK(error == nullptr, error);
#endif
    } else {
      AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "BnSiluBackwardHost", [&] {
        kernels::BnSiluBackwardHost<scalar_t>(x.data_ptr<scalar_t>(), dy.data_ptr<scalar_t>(), dx.data_ptr<scalar_t>(),
                                              rows, channels, weight.data_ptr<scalar_t>(), stats.data_ptr<scalar_t>(),
                                              dweight.data_ptr<scalar_t>(), dbias.data_ptr<scalar_t>());
      });
    }
    return {dx, dweight, dbias, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

bool BnSiluTakes(const torch::Tensor& x, const torch::nn::BatchNorm2dImpl& bn) {
  const auto& o = bn.options;
  if (!o.affine() || !o.track_running_stats() || !o.momentum().has_value() || x.dim() != 4 ||
      RowsOf(x) < 2 || !bn.weight.defined() || !bn.running_mean.defined())
    return false;
  if (x.is_cuda()) {
#ifdef FFYOLO_WITH_CUDA
    return (x.scalar_type() == torch::kHalf || x.scalar_type() == torch::kFloat) &&
           bn.weight.scalar_type() == torch::kFloat && bn.running_mean.scalar_type() == torch::kFloat &&
           x.is_contiguous(torch::MemoryFormat::ChannelsLast) && kernels::BnSiluCudaTakes(x.size(1));
#else
    return false;
#endif
  }
  return x.device().is_cpu() && (x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble) &&
         bn.weight.scalar_type() == x.scalar_type() && bn.running_mean.scalar_type() == x.scalar_type();
}

torch::Tensor BnSilu(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& bn) {
  {
    torch::NoGradGuard no_grad;
    bn.num_batches_tracked.add_(1);
  }
  return BnSiluFunction::apply(x, bn.weight, bn.bias, bn.running_mean, bn.running_var, *bn.options.momentum(),
                               bn.options.eps());
}

}  // namespace ffyolo
