#include "ffyolo/sync_batch_norm.h"

#include <torch/torch.h>

#include "ffyolo/communicator.h"

namespace ffyolo {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

torch::Tensor PerChannel(const torch::Tensor& v) { return v.view({1, -1, 1, 1}); }

class SyncBatchNormFunction : public torch::autograd::Function<SyncBatchNormFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, torch::nn::BatchNorm2dImpl* bn, Communicator* comm) {
    const torch::Tensor xf = x.to(torch::kFloat);
    const int64_t channels = x.size(1);
    const double n_local = static_cast<double>(x.numel() / std::max<int64_t>(channels, 1));
    torch::Tensor stats;
    if (n_local > 0) {
      auto [var, mean] = torch::var_mean(xf, {0, 2, 3}, /*unbiased=*/false);
      const torch::Tensor m = mean.to(torch::kDouble), v = var.to(torch::kDouble);
      stats = torch::cat({m * n_local, v * n_local + m * m * n_local,
                          torch::full({1}, n_local, m.options())});
    } else {  // an empty local batch still joins the collective
      stats = torch::zeros({2 * channels + 1}, x.options().dtype(torch::kDouble));
    }
    comm->AllReduceSum(stats);
    const torch::Tensor n = stats.narrow(0, 2 * channels, 1);
    const torch::Tensor mean = stats.narrow(0, 0, channels) / n;
    const torch::Tensor var = (stats.narrow(0, channels, channels) / n - mean * mean).clamp_min(0);
    const double total = stats[2 * channels].item<double>();
    const double eps = bn->options.eps();
    const torch::Tensor invstd = (var + eps).rsqrt().to(torch::kFloat);
    const torch::Tensor x_hat = (xf - PerChannel(mean.to(torch::kFloat))) * PerChannel(invstd);
    {
      torch::NoGradGuard no_grad;
      const double momentum = bn->options.momentum().value_or(0.1);
      bn->running_mean.mul_(1 - momentum).add_(mean.to(bn->running_mean.dtype()), momentum);
      const double unbias = total > 1 ? total / (total - 1) : 1.0;
      bn->running_var.mul_(1 - momentum).add_((var * unbias).to(bn->running_var.dtype()), momentum);
      bn->num_batches_tracked.add_(1);
    }
    ctx->save_for_backward({x_hat, weight, invstd});
    ctx->saved_data["total"] = total;
    ctx->saved_data["comm"] = reinterpret_cast<int64_t>(comm);
    return (x_hat * PerChannel(weight) + PerChannel(bias)).to(x.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& x_hat = saved[0];
    const torch::Tensor& weight = saved[1];
    const torch::Tensor& invstd = saved[2];
    const double total = ctx->saved_data["total"].toDouble();
    auto* comm = reinterpret_cast<Communicator*>(ctx->saved_data["comm"].toInt());
    const c10::ScalarType dtype = grad_outputs[0].scalar_type();  // the output's, hence the input's
    const torch::Tensor dy = grad_outputs[0].to(torch::kFloat);
    const int64_t channels = x_hat.size(1);
    const torch::Tensor sum_dy = dy.sum({0, 2, 3});
    const torch::Tensor sum_dy_xhat = (dy * x_hat).sum({0, 2, 3});
    torch::Tensor global = torch::cat({sum_dy, sum_dy_xhat});
    comm->AllReduceSum(global);
    const torch::Tensor mean_dy = global.narrow(0, 0, channels) / total;
    const torch::Tensor mean_dy_xhat = global.narrow(0, channels, channels) / total;
    const torch::Tensor dx =
        (dy - PerChannel(mean_dy) - x_hat * PerChannel(mean_dy_xhat)) * PerChannel(invstd * weight);
    return {dx.to(dtype), sum_dy_xhat, sum_dy, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor SyncBatchNorm2d(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& bn, Communicator& comm) {
  return SyncBatchNormFunction::apply(x, bn.weight, bn.bias, &bn, &comm);
}

}  // namespace ffyolo
