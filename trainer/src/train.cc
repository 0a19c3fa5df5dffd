#include "ffyolo/train.h"

#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <thread>

#include "ffr/env.h"
#include "ffyolo/autoanchor.h"
#include "ffyolo/batch_grid.h"
#include "ffyolo/checkpoint.h"
#include "ffyolo/communicator.h"
#include "ffyolo/cpus.h"
#include "ffyolo/device.h"
#include "ffyolo/dataset.h"
#include "ffyolo/ema.h"
#include "ffyolo/grad_scaler.h"
#include "ffyolo/gradient_sync.h"
#include "ffyolo/hyp.h"
#include "ffyolo/loader.h"
#include "ffyolo/loss.h"
#include "ffyolo/model.h"
#include "ffyolo/model_summary.h"
#include "ffyolo/progress.h"
#include "ffyolo/schedule.h"
#include "ffyolo/torch_compat.h"
#include "ffyolo/val_metrics.h"
#include "ffyolo/validator.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using ffr::Status;

std::atomic<int> g_stop_requested{0};

std::string Now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

// A shipped file (configs/<dir>/<name>) when `name` is not a path that exists.
std::string ResolveConfig(const std::string& name, const std::string& dir) {
  if (fs::exists(name)) return name;
  const std::string shipped = std::string(FFYOLO_CONFIG_DIR) + "/" + dir + "/" + name;
  if (fs::exists(shipped)) return shipped;
  if (fs::exists(shipped + ".yaml")) return shipped + ".yaml";
  return name;
}

// Pinned host memory for the loader's batches, so that copies to the GPU are asynchronous.
class PinnedAllocator : public BatchAllocator {
 public:
  void* Allocate(size_t bytes) override {
    torch::Tensor t = torch::empty({static_cast<int64_t>(bytes)}, torch::TensorOptions().dtype(torch::kUInt8).pinned_memory(true));
    void* p = t.data_ptr();
    blocks_.push_back(std::move(t));
    return p;
  }
  void Free(void* p, size_t) override {
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
      if (it->data_ptr() == p) {
        blocks_.erase(it);
        return;
      }
  }

 private:
  std::vector<torch::Tensor> blocks_;
};

void SetGroup(torch::optim::OptimizerParamGroup& group, double lr, double momentum) {
  auto& o = static_cast<torch::optim::SGDOptions&>(group.options());
  o.lr(lr);
  o.momentum(momentum);
}

double GroupLr(torch::optim::OptimizerParamGroup& group) {
  return static_cast<torch::optim::SGDOptions&>(group.options()).lr();
}

std::string Header() {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%11s%11s%11s%11s%11s%11s%11s", "Epoch", "GPU_mem", "box_loss", "obj_loss",
                "cls_loss", "Instances", "Size");
  return buf;
}

// check_anchors on the training split's label index; replaced anchors go back into Detect in grid units.
Status AutoAnchor(const Dataset& dataset, std::string split, int img_size, double anchor_t, uint64_t seed,
                  YoloModel* model) {
  if (split.empty()) FFR_RETURN_IF_ERROR(dataset.DefaultSplit(true, &split));
  LabelIndex index;
  FFR_RETURN_IF_ERROR(dataset.LoadLabelIndex(split, &index));
  DetectImpl& detect = model->detect();
  torch::NoGradGuard no_grad;
  const torch::Tensor stride = torch::tensor(detect.strides(), torch::kFloat).view({-1, 1, 1});
  const torch::Tensor pixels = (detect.anchors * stride).contiguous();
  std::vector<AnchorWh> anchors(pixels.numel() / 2);
  std::memcpy(anchors.data(), pixels.data_ptr<float>(), anchors.size() * sizeof(AnchorWh));
  const AutoAnchorResult result = CheckAnchors(index, img_size, anchor_t, seed + 1, &anchors);
  std::printf("\n%s", result.report.c_str());
  if (result.replaced) {
    detect.anchors.copy_(torch::from_blob(anchors.data(), detect.anchors.sizes(), torch::kFloat));
    detect.CheckAnchorOrder();  // in pixels, as check_anchors does
    detect.anchors.div_(stride);
  }
  return Status::OK();
}

std::string ResumeHint(bool main_rank, const std::string& save_dir) {
  if (!main_rank) return " (rank 0 saved the checkpoint)";
  return "; continue with --resume " + save_dir + "/weights/last.pt";
}

}  // namespace

void RequestTrainingStop() { g_stop_requested.store(1); }
bool TrainingStopRequested() { return g_stop_requested.load() != 0; }
void ClearTrainingStop() { g_stop_requested.store(0); }

std::string TrainOptions::ToYaml() const {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "data" << YAML::Value << data << YAML::Key << "cfg" << YAML::Value << cfg;
  e << YAML::Key << "hyp" << YAML::Value << hyp << YAML::Key << "weights" << YAML::Value << weights;
  e << YAML::Key << "imgsz" << YAML::Value << img_size << YAML::Key << "batch_size" << YAML::Value << batch_size;
  e << YAML::Key << "epochs" << YAML::Value << epochs << YAML::Key << "workers" << YAML::Value << workers;
  e << YAML::Key << "device" << YAML::Value << device << YAML::Key << "project" << YAML::Value << project;
  e << YAML::Key << "name" << YAML::Value << name << YAML::Key << "exist_ok" << YAML::Value << exist_ok;
  e << YAML::Key << "seed" << YAML::Value << seed << YAML::Key << "cos_lr" << YAML::Value << cos_lr;
  e << YAML::Key << "label_smoothing" << YAML::Value << label_smoothing;
  e << YAML::Key << "patience" << YAML::Value << patience << YAML::Key << "save_period" << YAML::Value << save_period;
  e << YAML::Key << "noval" << YAML::Value << noval << YAML::Key << "nosave" << YAML::Value << nosave;
  e << YAML::Key << "train_split" << YAML::Value << train_split << YAML::Key << "val_split" << YAML::Value
    << val_split;
  e << YAML::Key << "threads" << YAML::Value << threads << YAML::Key << "sync_bn" << YAML::Value << sync_bn;
  e << YAML::Key << "noautoanchor" << YAML::Value << noautoanchor;
  e << YAML::Key << "world_size" << YAML::Value << (distributed ? dist.world_size : 1);
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

Status TrainOptions::FromYaml(const std::string& yaml, TrainOptions* out) {
  try {
    const YAML::Node n = YAML::Load(yaml);
    TrainOptions o;
    o.data = n["data"].as<std::string>();
    o.cfg = n["cfg"].as<std::string>(o.cfg);
    o.hyp = n["hyp"].as<std::string>(o.hyp);
    o.weights = n["weights"].as<std::string>("");
    o.img_size = n["imgsz"].as<int>(o.img_size);
    o.batch_size = n["batch_size"].as<int>(o.batch_size);
    o.epochs = n["epochs"].as<int>(o.epochs);
    o.workers = n["workers"].as<int>(o.workers);
    o.device = n["device"].as<std::string>(o.device);
    o.project = n["project"].as<std::string>(o.project);
    o.name = n["name"].as<std::string>(o.name);
    o.exist_ok = n["exist_ok"].as<bool>(false);
    o.seed = n["seed"].as<uint64_t>(0);
    o.cos_lr = n["cos_lr"].as<bool>(false);
    o.label_smoothing = n["label_smoothing"].as<double>(0);
    o.patience = n["patience"].as<int>(o.patience);
    o.save_period = n["save_period"].as<int>(-1);
    o.noval = n["noval"].as<bool>(false);
    o.nosave = n["nosave"].as<bool>(false);
    o.train_split = n["train_split"].as<std::string>("");
    o.val_split = n["val_split"].as<std::string>("");
    o.threads = n["threads"].as<int>(0);
    o.sync_bn = n["sync_bn"].as<bool>(false);
    o.noautoanchor = n["noautoanchor"].as<bool>(false);
    o.dist.world_size = n["world_size"].as<int>(1);  // the world it was saved by; a launch sets its own
    *out = o;
    return Status::OK();
  } catch (const YAML::Exception& e) {
    return Status::Corruption(std::string("run options: ") + e.what());
  }
}

std::string IncrementPath(const std::string& path, bool exist_ok) {
  if (exist_ok || !fs::exists(path)) return path;
  for (int n = 2;; ++n) {
    const std::string p = path + std::to_string(n);
    if (!fs::exists(p)) return p;
  }
}

Status FindLastCheckpoint(const std::string& project, std::string* path) {
  fs::file_time_type newest{};
  path->clear();
  std::error_code ec;
  if (fs::is_directory(project, ec))
    for (const auto& run : fs::directory_iterator(project, ec)) {
      const fs::path last = run.path() / "weights" / "last.pt";
      if (fs::exists(last) && (path->empty() || fs::last_write_time(last) > newest)) {
        newest = fs::last_write_time(last);
        *path = last.string();
      }
    }
  if (path->empty()) return Status::NotFound(project + ": no */weights/last.pt to resume");
  return Status::OK();
}

namespace {

Status TrainProcess(const TrainOptions& requested, TrainSummary* summary) {
  TrainOptions opt = requested;
  CheckpointInfo resumed;
  const bool resuming = !opt.resume.empty();
  std::string save_dir;
  int saved_world = 1;  // resuming: the world size the checkpoint was written by
  if (resuming) {
    FFR_RETURN_IF_ERROR(ReadCheckpointInfo(opt.resume, &resumed));
    if (resumed.epoch < 0 && resumed.next_batch == 0)
      return Status::InvalidArgument(opt.resume + ": training finished (stripped weights); nothing to resume");
    FFR_RETURN_IF_ERROR(TrainOptions::FromYaml(resumed.opt_yaml, &opt));
    saved_world = opt.dist.world_size;
    // This launch decides where the ranks run; the checkpoint decides everything else.
    opt.resume = requested.resume;
    opt.on_batch = requested.on_batch;
    opt.distributed = requested.distributed;
    opt.dist = requested.dist;
    opt.bind_numa = requested.bind_numa;
    save_dir = fs::path(opt.resume).parent_path().parent_path().string();
  }

  Hyp hyp;
  if (resuming)
    FFR_RETURN_IF_ERROR(Hyp::Parse(resumed.hyp_yaml, opt.resume + " (hyp)", &hyp));
  else
    FFR_RETURN_IF_ERROR(Hyp::Load(ResolveConfig(opt.hyp, "hyps"), &hyp));
  if (opt.img_size % 32 != 0) opt.img_size = (opt.img_size + 31) / 32 * 32;  // check_img_size
  if (opt.batch_size <= 0 || opt.epochs <= 0) return Status::InvalidArgument("--batch and --epochs must be positive");
  const int rank = opt.distributed ? opt.dist.rank : 0;
  const int world = opt.distributed ? opt.dist.world_size : 1;
  const bool main_rank = rank == 0;
  if (opt.batch_size % world != 0)
    return Status::InvalidArgument("--batch " + std::to_string(opt.batch_size) + " is not divisible by the " +
                                   std::to_string(world) + " ranks (--batch is the total over all ranks)");

  torch::Device device(torch::kCPU);
  FFR_RETURN_IF_ERROR(ParseDevice(opt.distributed && opt.device != "cpu" ? std::to_string(opt.dist.local_rank)
                                                                         : opt.device,
                                  &device));
  const bool cuda = device.is_cuda();
  // Ranks on one machine share its CPUs unless each was bound to its own (--bind-numa).
  const int cpus = std::max(1, UsableCpus() / (opt.distributed && !opt.bind_numa ? opt.dist.local_world_size : 1));
  at::set_num_threads(opt.threads > 0 ? opt.threads : cpus);
  std::unique_ptr<Communicator> comm;
  if (opt.distributed) {
    FFR_RETURN_IF_ERROR(Communicator::Create(opt.dist, cuda ? device.index() : -1,
                                             std::chrono::seconds(opt.dist_timeout_s), &comm));
    if (main_rank)
      std::printf("Distributed training: %d ranks over %s (%d node(s), %d per node), batch %d per rank\n", world,
                  comm->backend(), opt.dist.nnodes, opt.dist.local_world_size, opt.batch_size / world);
  }
  // Every rank's answer to "stop now?": the same on all ranks, so all stop at the same step.
  auto agreed = [&](bool local) { return comm ? comm->AnyRank(local) : local; };

  std::unique_ptr<Dataset> dataset;
  FFR_RETURN_IF_ERROR(Dataset::Open(opt.data, &dataset));
  const int64_t nc = static_cast<int64_t>(dataset->num_classes());

  if (main_rank) {
    if (!resuming) save_dir = IncrementPath(opt.project + "/" + opt.name, opt.exist_ok);
    FFR_RETURN_IF_ERROR(ffr::Env::Default()->CreateDirs(save_dir + "/weights"));
    FFR_RETURN_IF_ERROR(ffr::WriteFileAtomically(ffr::Env::Default(), save_dir + "/hyp.yaml", hyp.ToYaml()));
    FFR_RETURN_IF_ERROR(ffr::WriteFileAtomically(ffr::Env::Default(), save_dir + "/opt.yaml", opt.ToYaml()));
    summary->save_dir = save_dir;
  }

  torch::manual_seed(opt.seed + (opt.distributed ? 1 + rank : 0));  // init_seeds(seed + 1 + RANK), RANK -1 alone
  std::string model_yaml = resumed.model_yaml;
  if (!resuming) FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), ResolveModelYaml(opt.cfg), &model_yaml));
  std::shared_ptr<YoloModel> model, ema_model;
  FFR_RETURN_IF_ERROR(BuildModelFromString(model_yaml, ResolveModelYaml(opt.cfg), nc, &model));
  FFR_RETURN_IF_ERROR(BuildModelFromString(model_yaml, ResolveModelYaml(opt.cfg), nc, &ema_model));
  if (main_rank) std::printf("%s\n%s\n", LayerTable(*model).c_str(), SummaryLine(*model, opt.img_size).c_str());
  if (!opt.weights.empty() && !resuming) {
    int64_t transferred = 0, total = 0;
    FFR_RETURN_IF_ERROR(TransferWeights(opt.weights, model.get(), &transferred, &total));
    if (main_rank)
      std::printf("Transferred %lld/%lld items from %s\n", static_cast<long long>(transferred),
                static_cast<long long>(total), opt.weights.c_str());
  }
  if (!resuming && !opt.noautoanchor && main_rank)  // the other ranks get rank 0's anchors with its weights
    FFR_RETURN_IF_ERROR(AutoAnchor(*dataset, opt.train_split, opt.img_size, hyp.anchor_t, opt.seed, model.get()));
  if (!resuming) {
    // train.py calls model.half().float() once (after AutoAnchor): weights rounded to fp16 precision.
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.copy_(p.to(torch::kHalf).to(torch::kFloat));
    for (auto& b : model->buffers())
      if (b.is_floating_point()) b.copy_(b.to(torch::kHalf).to(torch::kFloat));
  }
  model->to(device);
  ema_model->to(device);
  std::unique_ptr<GradientSync> gradient_sync;
  if (comm) {
    std::vector<torch::Tensor> state = model->parameters();
    for (const torch::Tensor& b : model->buffers()) state.push_back(b);
    comm->Broadcast(state, 0);  // every rank starts from rank 0's weights
    gradient_sync = std::make_unique<GradientSync>(comm.get(), model->parameters());
    if (opt.sync_bn) {
      model->SetSyncBatchNorm(comm.get());
      if (main_rank) std::printf("Using SyncBatchNorm()\n");
    }
  } else if (opt.sync_bn) {
    std::fprintf(stderr, "warning: --sync-bn applies to multi-process training only; ignored\n");
  }

  // Data.
  PinnedAllocator pinned;
  LoaderOptions lo;
  lo.split = opt.train_split;
  lo.training = true;
  lo.img_size = opt.img_size;
  lo.batch_size = opt.batch_size / world;
  lo.rank = rank;
  lo.world_size = world;
  lo.hyp = hyp;
  lo.seed = opt.seed;
  lo.workers = std::max(1, std::min(opt.workers, cpus));
  lo.allocator = cuda ? &pinned : nullptr;
  int64_t bad_reported = 0;
  lo.on_bad_sample = [&](const std::string& m) {
    ++bad_reported;
    std::fprintf(stderr, "warning: corrupt sample replaced: %s\n", m.c_str());
  };
  std::unique_ptr<Loader> loader;
  FFR_RETURN_IF_ERROR(Loader::Open(*dataset, lo, &loader));
  std::string val_split = opt.val_split;
  if (val_split.empty() && !dataset->DefaultSplit(false, &val_split).ok()) val_split = loader->split();
  if (val_split == loader->split() && main_rank)
    std::fprintf(stderr, "warning: %s has no validation split; validating on the training split '%s' (as "
                 "Ultralytics' coco128 does)\n", opt.data.c_str(), val_split.c_str());
  ValidatorOptions vo;
  vo.split = val_split;
  vo.img_size = opt.img_size;
  vo.batch_size = opt.batch_size * 2;
  vo.workers = lo.workers;
  std::unique_ptr<Validator> validator;  // rank 0 validates; the others wait for it
  if (main_rank) FFR_RETURN_IF_ERROR(Validator::Open(*dataset, vo, device, &validator));

  // Optimizer, schedule, loss, EMA.
  const int64_t nb = loader->batches_per_epoch();
  ScheduleOptions so;
  so.lr0 = hyp.lr0;
  so.lrf = hyp.lrf;
  so.momentum = hyp.momentum;
  so.warmup_epochs = hyp.warmup_epochs;
  so.warmup_momentum = hyp.warmup_momentum;
  so.warmup_bias_lr = hyp.warmup_bias_lr;
  so.epochs = opt.epochs;
  so.batches_per_epoch = nb;
  so.batch_size = opt.batch_size;
  so.cosine = opt.cos_lr;
  const Schedule schedule(so);
  const ParameterGroups groups = SplitParameterGroups(*model);
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  auto sgd = [&](double wd) {
    return std::make_unique<torch::optim::SGDOptions>(
        torch::optim::SGDOptions(hyp.lr0).momentum(hyp.momentum).nesterov(true).weight_decay(wd));
  };
  param_groups.emplace_back(groups.biases, sgd(0.0));
  param_groups.emplace_back(groups.decayed_weights, sgd(schedule.ScaledWeightDecay(hyp.weight_decay)));
  param_groups.emplace_back(groups.bn_weights, sgd(0.0));
  torch::optim::SGD optimizer(param_groups, torch::optim::SGDOptions(hyp.lr0));
  if (main_rank)
    std::printf("optimizer: SGD(lr=%g) with parameter groups %zu weight(decay=0.0), %zu weight(decay=%g), %zu bias\n",
              hyp.lr0, groups.bn_weights.size(), groups.decayed_weights.size(),
              schedule.ScaledWeightDecay(hyp.weight_decay), groups.biases.size());
  ModelEma ema(ema_model, *model);
  const Hyp loss_hyp = ScaleLossGains(hyp, nc, 3, opt.img_size);
  ComputeLoss compute_loss(loss_hyp, opt.label_smoothing, nc, model->detect().anchors);
  GradScaler scaler(cuda);

  int64_t start_epoch = 0, first_batch = 0, last_opt_step = -1;
  double best_fitness = 0;
  std::vector<EpochResult> results;
  if (resuming) {
    FFR_RETURN_IF_ERROR(LoadCheckpointState(opt.resume, model.get(), &ema.model(), &optimizer));
    ema.set_updates(resumed.ema_updates);
    best_fitness = resumed.best_fitness;
    last_opt_step = resumed.last_opt_step;
    scaler.Restore(resumed.loss_scale, resumed.scale_growth_tracker);
    start_epoch = resumed.epoch + 1;
    first_batch = resumed.next_batch;
    if (main_rank) ReadResultsCsv(save_dir + "/results.csv", &results);
    if (saved_world != world && main_rank)
      std::fprintf(stderr, "warning: %s was saved by %d rank(s) and resumes on %d: each rank's share of the "
                   "epoch changes, so the rest of it is not the exact continuation\n", opt.resume.c_str(),
                   saved_world, world);
    if (main_rank)
      std::printf("Resuming training from %s at epoch %lld batch %lld of %d epochs\n", opt.resume.c_str(),
                static_cast<long long>(start_epoch), static_cast<long long>(first_batch), opt.epochs);
  }

  CheckpointInfo info;
  info.model_yaml = model_yaml;
  info.nc = nc;
  info.opt_yaml = opt.ToYaml();
  info.hyp_yaml = hyp.ToYaml();
  // `epoch` finished; next_batch > 0: the run stopped inside epoch + 1 before that batch.
  auto save = [&](const std::string& path, int64_t epoch, int64_t next_batch = 0) {
    info.epoch = epoch;
    info.next_batch = next_batch;
    info.best_fitness = best_fitness;
    info.ema_updates = ema.updates();
    info.last_opt_step = last_opt_step;
    info.loss_scale = scaler.enabled() ? scaler.scale() : 65536;
    info.scale_growth_tracker = scaler.enabled() ? scaler.growth_tracker() : 0;
    info.date = Now();
    return SaveCheckpoint(path, info, *model, &ema.model(), &optimizer);
  };

  if (main_rank)
    std::printf("Image sizes %d train, %d val\nUsing %d dataloader workers, %d torch threads\nLogging results to %s\n"
              "Starting training for %d epochs...\n",
              opt.img_size, opt.img_size, lo.workers, at::get_num_threads(), save_dir.c_str(), opt.epochs);
  int64_t best_epoch = start_epoch - 1;
  bool stop_after_epoch = false;
  for (int64_t epoch = start_epoch; epoch < opt.epochs && !stop_after_epoch; ++epoch) {
    model->train();
    FFR_RETURN_IF_ERROR(loader->Start(epoch, epoch == start_epoch ? first_batch : 0));
    torch::Tensor mloss = torch::zeros({3});
    optimizer.zero_grad();
    std::unique_ptr<ProgressBar> bar;
    if (main_rank) {
      std::printf("\n%s\n", Header().c_str());
      ProgressBar::Options po;
      char label[64];
      std::snprintf(label, sizeof(label), "%11s",
                    (std::to_string(epoch) + "/" + std::to_string(opt.epochs - 1)).c_str());
      po.label = label;
      po.total = nb;
      bar = std::make_unique<ProgressBar>(po);
    }
    int64_t i = epoch == start_epoch ? first_batch : 0;
    const int64_t i0 = i;
    while (true) {
      const Batch* b = nullptr;
      FFR_RETURN_IF_ERROR(loader->Next(&b));
      if (!b) break;
      const int64_t ni = i + nb * epoch;
      const Schedule::Step step = schedule.At(ni, epoch);
      for (int g = 0; g < 3; ++g) SetGroup(optimizer.param_groups()[g], step.lr[g], step.momentum);
      if (epoch == 0 && i == 0 && main_rank) {
        GridOptions go;
        go.names = dataset->manifest().names;
        WriteJpeg(RenderBatchGrid(*b, go), save_dir + "/train_batch0.jpg");
      }
      torch::Tensor imgs = torch::from_blob(b->images, {b->size, 3, b->height, b->width}, torch::kUInt8)
                               .to(device, /*non_blocking=*/true)
                               .to(torch::kFloat)
                               .div_(255);
      torch::Tensor targets = torch::from_blob(const_cast<float*>(b->targets.data()),
                                               {static_cast<int64_t>(b->num_targets()), 6}, torch::kFloat)
                                  .to(device);
      if (cuda) compat::SetCudaAutocast(true);
      DetectOutput out = model->forward(imgs);
      if (cuda) compat::SetCudaAutocast(false);
      LossOutput loss = compute_loss(out.raw, targets);
      // The ranks' gradients are averaged: scaling by the world size keeps train.py's loss * WORLD_SIZE.
      const torch::Tensor total = world > 1 ? loss.total * world : loss.total;
      const bool update = ni - last_opt_step >= step.accumulate;
      if (gradient_sync) gradient_sync->Prepare(update);  // accumulation steps do not communicate
      scaler.Scale(total).backward();
      if (gradient_sync) gradient_sync->Finish();
      if (update) {
        scaler.Unscale(optimizer);
        torch::nn::utils::clip_grad_norm_(model->parameters(), 10.0);
        scaler.Step(optimizer);
        scaler.Update();
        optimizer.zero_grad();
        ema.Update(*model);
        last_opt_step = ni;
      }
      const torch::Tensor items = loss.items.cpu();  // also waits for the GPU: the batch memory is free after
      mloss = (mloss * (i - i0) + items) / (i - i0 + 1);
      if (opt.on_batch) {
        const double values[3] = {items[0].item<double>(), items[1].item<double>(), items[2].item<double>()};
        opt.on_batch(epoch, i, values);
      }
      if (bar) {
        char post[128];
        std::snprintf(post, sizeof(post), "%10s%11.4g%11.4g%11.4g%11lld%11d",
                      cuda ? (std::to_string(0) + "G").c_str() : "0G", mloss[0].item<double>(),
                      mloss[1].item<double>(), mloss[2].item<double>(), static_cast<long long>(b->num_targets()),
                      b->width);
        bar->Update(i + 1, post);
      }
      loader->Release(b);
      ++i;
      // A stop is honoured right after an optimizer step, when no gradient is pending, and by all ranks at once.
      if (update && i < nb && agreed(TrainingStopRequested())) {
        if (bar) bar->Finish();
        if (main_rank) FFR_RETURN_IF_ERROR(save(save_dir + "/weights/last.pt", epoch - 1, i));
        if (comm) comm->Barrier();  // the checkpoint is complete before any rank exits
        return Status::Aborted("stopped at epoch " + std::to_string(epoch) + " batch " + std::to_string(i) +
                               ResumeHint(main_rank, save_dir));
      }
    }
    if (bar) bar->Finish();
    stop_after_epoch = agreed(TrainingStopRequested());

    bool stop_early = false;
    if (main_rank) {
      EpochResult r;
      r.epoch = epoch;
      r.train_box = mloss[0].item<double>();
      r.train_obj = mloss[1].item<double>();
      r.train_cls = mloss[2].item<double>();
      for (int g = 0; g < 3; ++g) r.lr[g] = GroupLr(optimizer.param_groups()[g]);
      const bool final_epoch = epoch + 1 == opt.epochs;
      if (!opt.noval || final_epoch) {
        ValidationOutput vout;
        FFR_RETURN_IF_ERROR(validator->Run(ema.model(), &compute_loss, false, &vout));
        std::printf("%s", FormatValMetricsTable(vout.result.metrics, dataset->manifest().names, false).c_str());
        r.precision = vout.result.metrics.mp;
        r.recall = vout.result.metrics.mr;
        r.map50 = vout.result.metrics.map50;
        r.map = vout.result.metrics.map;
        r.val_box = vout.loss[0];
        r.val_obj = vout.loss[1];
        r.val_cls = vout.loss[2];
      }
      const double fitness = Fitness(r.map50, r.map);
      results.push_back(r);
      FFR_RETURN_IF_ERROR(WriteResultsCsv(save_dir + "/results.csv", results));
      std::string plot;
      PlotResults(results, save_dir + "/results.png", &plot);
      if (fitness >= best_fitness) {  // v7.0's EarlyStopping and best.pt use >=
        best_fitness = fitness;
        best_epoch = epoch;
      }
      if (!opt.nosave || final_epoch) {
        FFR_RETURN_IF_ERROR(save(save_dir + "/weights/last.pt", epoch));
        if (best_epoch == epoch) FFR_RETURN_IF_ERROR(save(save_dir + "/weights/best.pt", epoch));
        if (opt.save_period > 0 && epoch % opt.save_period == 0)
          FFR_RETURN_IF_ERROR(save(save_dir + "/weights/epoch" + std::to_string(epoch) + ".pt", epoch));
      }
      stop_early = epoch - best_epoch >= opt.patience;
      if (stop_early)
        std::printf("Stopping training early as no improvement observed in last %d epochs. Best results observed "
                    "at epoch %lld\n", opt.patience, static_cast<long long>(best_epoch));
    }
    stop_early = agreed(stop_early);  // the other ranks wait here while rank 0 validates and saves
    summary->epochs_run++;
    if (stop_after_epoch)
      return Status::Aborted("stopped after epoch " + std::to_string(epoch) + ResumeHint(main_rank, save_dir));
    if (stop_early) break;
  }
  if (loader->bad_samples() > 0)
    std::fprintf(stderr, "warning: rank %d: %lld corrupt sample reads were replaced during training\n", rank,
                 static_cast<long long>(loader->bad_samples()));
  if (!main_rank) return Status::OK();  // rank 0 alone runs the final validation
  summary->results = results;
  summary->best_fitness = best_fitness;

  // Final: best.pt (EMA weights) validated with IoU 0.65 and the full report, as train.py does for COCO.
  const std::string best = save_dir + "/weights/best.pt";
  if (ffr::Env::Default()->FileExists(best)) {
    std::shared_ptr<YoloModel> best_model;
    CheckpointInfo best_info;
    FFR_RETURN_IF_ERROR(LoadCheckpointModel(best, /*prefer_ema=*/true, &best_model, &best_info));
    best_model->to(device);
    ValidatorOptions fo = vo;
    fo.nms.iou_thres = 0.65;
    std::unique_ptr<Validator> final_validator;
    FFR_RETURN_IF_ERROR(Validator::Open(*dataset, fo, device, &final_validator));
    ValidationOutput vout;
    FFR_RETURN_IF_ERROR(final_validator->Run(*best_model, &compute_loss, false, &vout));
    std::printf("\nValidating %s...\n%s", best.c_str(),
                FormatEvalReport(vout.result, dataset->manifest().names, nc < 50).c_str());
    FFR_RETURN_IF_ERROR(
        ffr::WriteFileAtomically(ffr::Env::Default(), save_dir + "/predictions.json", vout.predictions_json));
    summary->final_map50 = vout.result.metrics.map50;
    summary->final_map = vout.result.metrics.map;
    summary->final_coco = vout.result.coco;
  }
  std::printf("Results saved to %s\n", save_dir.c_str());
  return Status::OK();
}

}  // namespace

Status Train(const TrainOptions& options, TrainSummary* summary) {
  try {
    return TrainProcess(options, summary);
  } catch (const c10::Error& e) {  // a failed collective or a LibTorch error
    return Status::IOError(e.what_without_backtrace());
  } catch (const std::exception& e) {
    return Status::IOError(e.what());
  }
}

}  // namespace ffyolo

namespace ffyolo {

ffr::Status ModelSummaryText(const std::string& cfg, int64_t nc, int img_size, std::string* text) {
  std::shared_ptr<YoloModel> model;
  FFR_RETURN_IF_ERROR(BuildModel(ResolveModelYaml(cfg), nc, &model));
  *text = LayerTable(*model) + "\n" + SummaryLine(*model, img_size) + "\n";
  return ffr::Status::OK();
}

}  // namespace ffyolo
