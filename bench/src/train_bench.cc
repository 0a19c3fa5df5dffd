#include "ffyolo/train_bench.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <set>
#include <memory>

#include "ffyolo/batch_transfer.h"
#include "ffyolo/captured_step.h"
#include "ffyolo/communicator.h"
#include "ffyolo/config_path.h"
#include "ffyolo/dataset.h"
#include "ffyolo/device.h"
#include "ffyolo/ema.h"
#include "ffyolo/exception_status.h"
#include "ffyolo/grad_scaler.h"
#include "ffyolo/hyp.h"
#include "ffyolo/loader.h"
#include "ffyolo/model.h"
#include "ffyolo/pixel_cache.h"
#include "ffyolo/torch_compat.h"
#include "ffyolo/train.h"
#include "ffyolo/step_state.h"
#include "ffyolo/train_step.h"
#include "cpu_clock.h"

namespace ffyolo {
namespace {

using ffr::Status;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Waits for the device's queued work, so that a clock read after it covers that work.
void Drain(const c10::Device& device) {
  if (device.is_cuda()) torch::zeros({1}, torch::TensorOptions().device(device)).cpu();
}

// The training side of a benchmark: the Trainer's model, loss, optimizer, scaler and EMA for one process.
struct Training : StepState {
  std::unique_ptr<CapturedStep> captured;  // --cuda-graph

  // One step with an update, replayed where the capture fits the batch.
  LossOutput Step(const torch::Tensor& images, const torch::Tensor& targets) {
    if (captured && captured->Fits(images)) return captured->Step(images, targets);
    return TrainStep(parts, images, targets, true);
  }
};

Status SetUpTraining(const StepVariants& variants, const StepOptions& step, Training* t) {
  FFR_RETURN_IF_ERROR(MakeStepState(step, t));
  if (variants.cuda_graph) FFR_RETURN_IF_ERROR(CapturedStep::Create(t->parts, &t->captured));
  return Status::OK();
}

// A batch as the loader makes it, on the device: pixels in [0, 1], eight boxes per image.
void RandomBatch(const TrainBenchOptions& o, int64_t nc, const c10::Device& device, torch::Tensor* images,
                 torch::Tensor* targets) {
  torch::manual_seed(0);
  const auto on = torch::TensorOptions().device(device);
  *images = torch::randint(0, 256, {o.batch_size, 3, o.img_size, o.img_size}, on.dtype(torch::kUInt8))
                .to(torch::kFloat)
                .div_(255);
  const int64_t n = 8 * o.batch_size;
  const torch::Tensor image = torch::arange(o.batch_size, on.dtype(torch::kFloat)).repeat_interleave(8).view({n, 1});
  const torch::Tensor cls = torch::randint(0, nc, {n, 1}, on.dtype(torch::kFloat));
  const torch::Tensor wh = torch::rand({n, 2}, on) * 0.3 + 0.02;
  const torch::Tensor xy = wh / 2 + torch::rand({n, 2}, on) * (1 - wh);
  *targets = torch::cat({image, cls, xy, wh}, 1);
}

// `steps` more steps under Kineto; the kernels the device ran (the operators, on the CPU).
void Profile(const c10::Device& device, int steps, const std::function<void()>& step, TrainBenchResult* r) {
  namespace profiler = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO);
  std::set<ActivityType> activities{ActivityType::CPU};
  if (device.is_cuda()) activities.insert(ActivityType::CUDA);
  profiler::prepareProfiler(config, activities);
  profiler::enableProfiler(config, activities);
  for (int i = 0; i < steps; ++i) step();
  Drain(device);
  const std::unique_ptr<profiler::ProfilerResult> result = profiler::disableProfiler();
  r->profiled = device.is_cuda() ? "CUDA kernels" : "CPU operators (nested: an operator's time includes its callees')";
  if (!device.is_cuda()) {
    for (const profiler::KinetoEvent& e : result->events())
      if (e.deviceType() == device.type()) AddKernelTime(e.name(), compat::EventSeconds(e), &r->kernels);
    return;
  }
  // Operators only: the CUDA runtime's calls are host events too, numbered by CUPTI's correlation ids, which
  // kernels do not link to and which may equal an operator's.
  constexpr uint8_t kOperator = 0;  // libkineto::ActivityType::CPU_OP
  std::vector<HostOp> ops;
  for (const profiler::KinetoEvent& e : result->events())
    if (e.deviceType() == c10::DeviceType::CPU && e.activityType() == kOperator) {
      const int64_t start = compat::EventStartNs(e);
      ops.push_back({e.name(), e.startThreadId(), start, start + static_cast<int64_t>(1e9 * compat::EventSeconds(e)),
                     e.correlationId()});
    }
  const KernelLaunchers launchers(std::move(ops));
  for (const profiler::KinetoEvent& e : result->events()) {
    if (e.deviceType() != device.type()) continue;
    const std::string launcher = launchers.Of(e.linkedCorrelationId());
    AddKernelTime(e.name(), compat::EventSeconds(e), &r->kernels, launcher.empty() ? "(no operator)" : launcher);
  }
}

Status Ceiling(const TrainBenchOptions& o, const c10::Device& device, Training* t, TrainBenchResult* r) {
  torch::Tensor images, targets;
  RandomBatch(o, o.nc, device, &images, &targets);
  images = images.contiguous(t->model->memory_format());
  for (int i = 0; i < o.warmup_steps; ++i) t->Step(images, targets);
  Drain(device);
  Clock::time_point part_start;
  if (o.parts)
    t->parts.after_part = [&](const char* part) {
      Drain(device);
      const Clock::time_point now = Clock::now();
      auto it = std::find_if(r->part_seconds.begin(), r->part_seconds.end(), [&](const auto& p) { return p.first == part; });
      if (it == r->part_seconds.end()) it = r->part_seconds.insert(it, {part, 0.0});
      it->second += Seconds(now - part_start);
      part_start = now;
    };
  const Clock::time_point start = Clock::now();
  part_start = start;
  LossOutput loss;
  for (int i = 0; i < o.steps; ++i) loss = t->Step(images, targets);
  Drain(device);
  r->seconds = Seconds(Clock::now() - start);
  t->parts.after_part = nullptr;  // it holds this frame's clock
  r->images = int64_t{o.steps} * o.batch_size;
  r->last_loss = loss.total.item<double>();
  if (o.profile_steps > 0) Profile(device, o.profile_steps, [&] { t->Step(images, targets); }, r);
  return Status::OK();
}

// With o.cache, the loader reads the pixel cache (built first, untimed).
Status Pipeline(const TrainBenchOptions& o, const Dataset& dataset, const Hyp& hyp, const c10::Device& device,
                Training* t, TrainBenchResult* r) {
  PinnedBatchAllocator pinned;
  LoaderOptions lo;
  lo.training = true;
  lo.img_size = o.img_size;
  lo.batch_size = o.batch_size;
  lo.hyp = hyp;
  lo.workers = o.workers;
  lo.allocator = device.is_cuda() ? &pinned : nullptr;
  std::string bad;
  lo.on_bad_sample = [&bad](const std::string& m) { bad = m; };
  lo.pixel_cache_dir = o.cache_dir;
  if (!o.cache.empty()) FFR_RETURN_IF_ERROR(UsePixelCache(dataset, o.cache, &lo, "run without --cache"));
  std::unique_ptr<Loader> loader;
  FFR_RETURN_IF_ERROR(Loader::Open(dataset, lo, &loader));
  BatchTransfer transfer(loader.get(), device, t->model->memory_format());
  int64_t epoch = 0, taken = 0;
  FFR_RETURN_IF_ERROR(transfer.Start(epoch, 0));
  // The next batch, into the next epoch when this one is done.
  auto next = [&](DeviceBatch* batch) -> Status {
    FFR_RETURN_IF_ERROR(transfer.Next(batch));
    if (batch->host) return Status::OK();
    FFR_RETURN_IF_ERROR(transfer.Start(++epoch, 0));
    return transfer.Next(batch);
  };
  DeviceBatch batch;
  for (int i = 0; i < o.warmup_steps; ++i) {
    FFR_RETURN_IF_ERROR(next(&batch));
    if (!o.no_step) t->Step(batch.images, batch.targets);
  }
  Drain(device);
  const double cpu0 = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID), own0 = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  const Clock::time_point start = Clock::now();
  LossOutput loss;
  for (int i = 0; i < o.steps; ++i) {
    const Clock::time_point asked = Clock::now();
    FFR_RETURN_IF_ERROR(next(&batch));
    r->data_wait_seconds += Seconds(Clock::now() - asked);
    taken += batch.images.size(0);
    if (!o.no_step) loss = t->Step(batch.images, batch.targets);
  }
  Drain(device);
  r->seconds = Seconds(Clock::now() - start);
  r->loader_cpu_seconds = (CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0) - (CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - own0);
  r->images = taken;
  r->last_loss = o.no_step ? 0 : loss.total.item<double>();
  if (!bad.empty()) return Status::Corruption("the benchmark read a corrupt sample: " + bad);
  return Status::OK();
}

}  // namespace

Status BenchTraining(const TrainBenchOptions& o, TrainBenchResult* r) {
  return StatusOrException([&]() -> Status {
    *r = TrainBenchResult();
    if (o.batch_size < 1 || o.img_size < 32 || o.img_size % 32 != 0 || o.steps < 1 || o.warmup_steps < 0 ||
        o.workers < 1)
      return Status::InvalidArgument("yolo-bench train: --batch, --steps and --workers must be positive, "
                                     "--img a multiple of 32");
    if (!o.cache.empty() && o.data.empty())
      return Status::InvalidArgument("yolo-bench train: --cache needs --data");
    if (o.no_step && o.data.empty()) return Status::InvalidArgument("yolo-bench train: --no-step needs --data");
    if ((o.parts || o.profile_steps > 0) && !o.data.empty())
      return Status::InvalidArgument("yolo-bench train: --parts and --profile measure the ceiling, without --data");
    c10::Device device(c10::kCPU);
    FFR_RETURN_IF_ERROR(SelectDevice(o.device, -1, &device));
    if (device.is_cuda()) at::globalContext().setBenchmarkCuDNN(true);  // fixed-size batches, as the Trainer
    r->device = device.str();
    r->amp = o.amp && device.is_cuda();
    Hyp hyp;
    FFR_RETURN_IF_ERROR(Hyp::Load(ResolveConfig("hyp.scratch-low", "hyps"), &hyp));
    std::unique_ptr<Dataset> dataset;
    int64_t nc = o.nc;
    if (!o.data.empty()) {
      FFR_RETURN_IF_ERROR(Dataset::Open(o.data, &dataset));
      nc = static_cast<int64_t>(dataset->num_classes());
    }
    torch::manual_seed(0);  // the same model each run
    std::string eager;  // the note when the step cannot be captured here; the benchmark's line says cuda_graph=0
    FFR_RETURN_IF_ERROR(ResolveStepVariants(o.variants, device.is_cuda(),
                                            o.parts ? "--parts times an eager step, not a graph's replays" : "",
                                            &r->variants, &eager));
    StepOptions step;
    step.model_yaml = ResolveConfig(o.cfg, "models");
    step.nc = nc;
    step.hyp = hyp;
    step.img_size = o.img_size;
    step.device = device;
    step.format = MemoryFormatOf(r->variants.channels_last);
    step.amp = r->amp;
    step.sync_free_loss = r->variants.sync_free_loss;
    step.fused_bn_silu = r->variants.fused_bn_silu;
    Training t;
    FFR_RETURN_IF_ERROR(SetUpTraining(r->variants, step, &t));
    FFR_RETURN_IF_ERROR(dataset ? Pipeline(o, *dataset, hyp, device, &t, r) : Ceiling(o, device, &t, r));
    r->peak_memory_gb = BatchTransfer::MemoryReservedGb(device);
    return Status::OK();
  });
}

Status BenchGradientAllReduce(const TrainBenchOptions& o, AllReduceBenchResult* r) {
  return StatusOrException([&]() -> Status {
    *r = AllReduceBenchResult();
    if (o.steps < 1) return Status::InvalidArgument("yolo-bench allreduce: --steps must be positive");
    c10::Device device(c10::kCPU);
    FFR_RETURN_IF_ERROR(SelectDevice(o.device, -1, &device));
    std::shared_ptr<YoloModel> model;
    FFR_RETURN_IF_ERROR(BuildModel(ResolveConfig(o.cfg, "models"), o.nc, &model));
    int64_t count = 0;
    for (const torch::Tensor& p : model->parameters()) count += p.numel();
    DistEnv env;
    FFR_RETURN_IF_ERROR(PickFreePort(&env.master_port));
    const Clock::time_point init = Clock::now();
    std::unique_ptr<Communicator> comm;
    FFR_RETURN_IF_ERROR(Communicator::Create(env, device.is_cuda() ? device.index() : -1, std::chrono::seconds(60),
                                             &comm));
    torch::Tensor grads = torch::ones({count}, torch::TensorOptions().device(device));
    comm->AllReduceSum(grads);  // the first collective sets up the communicator's connections
    r->init_seconds = Seconds(Clock::now() - init);
    r->backend = comm->backend();
    r->bytes = count * static_cast<int64_t>(sizeof(float));
    const int64_t bucket = (25 << 20) / sizeof(float);
    std::vector<torch::Tensor> buckets;
    for (int64_t at = 0; at < count; at += bucket) buckets.push_back(grads.narrow(0, at, std::min(bucket, count - at)));
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < o.steps; ++i) {
      for (torch::Tensor& b : buckets) comm->StartAllReduceSum(b);
      comm->FinishPending();
    }
    Drain(device);
    r->seconds_per_all_reduce = Seconds(Clock::now() - start) / o.steps;
    return Status::OK();
  });
}

}  // namespace ffyolo
