#include "ffyolo/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "ffr/env.h"
#include "ffyolo/autoanchor.h"
#include "ffyolo/batch_grid.h"
#include "ffyolo/batch_transfer.h"
#include "ffyolo/captured_step.h"
#include "ffyolo/checkpoint.h"
#include "ffyolo/config_path.h"
#include "ffyolo/communicator.h"
#include "ffyolo/cpus.h"
#include "ffyolo/dataset.h"
#include "ffyolo/device.h"
#include "ffyolo/ema.h"
#include "ffyolo/exception_status.h"
#include "ffyolo/grad_scaler.h"
#include "ffyolo/gradient_sync.h"
#include "ffyolo/hyp.h"
#include "ffyolo/image_weights.h"
#include "ffyolo/loader.h"
#include "ffyolo/loss.h"
#include "ffyolo/model.h"
#include "ffyolo/model_config.h"
#include "ffyolo/model_summary.h"
#include "ffyolo/output/run_directory.h"
#include "ffyolo/multi_scale.h"
#include "ffyolo/output/path_overlap.h"
#include "ffyolo/pixel_cache.h"
#include "ffyolo/quad_collate.h"
#include "ffyolo/schedule.h"
#include "ffyolo/torch_compat.h"
#include "ffyolo/train_option_table.h"
#include "ffyolo/train_step.h"
#include "ffyolo/validator.h"

namespace ffyolo {
namespace {

// On CUDA the loss values are read (a host sync) every this many batches and at an epoch's last.
constexpr int64_t kCudaLossReadInterval = 10;

namespace fs = std::filesystem;
using ffr::Status;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string Now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

// The splits that `train` and `val` (Dataset::ResolveSplit's names) share, joined as a split name.
std::string SplitsInBoth(const std::string& train, const std::string& val) {
  const std::vector<std::string> trained = SplitNames(train);
  std::string both;
  for (const std::string& name : SplitNames(val))
    if (std::find(trained.begin(), trained.end(), name) != trained.end())
      both += (both.empty() ? "" : std::string(1, kSplitSeparator)) + name;
  return both;
}

std::string ResumeHint(bool main_rank, const std::string& save_dir) {
  if (!main_rank) return " (rank 0 saved the checkpoint)";
  return "; continue with --resume " + save_dir + "/weights/last.pt";
}

// train.py calls model.half().float() once (after AutoAnchor): weights rounded to fp16 precision.
void RoundToHalf(YoloModel* model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.copy_(p.to(torch::kHalf).to(torch::kFloat));
  for (auto& b : model->buffers())
    if (b.is_floating_point()) b.copy_(b.to(torch::kHalf).to(torch::kFloat));
}

// train_batch0.jpg as train.py draws it: plot_images gets the batch the model trains on (after --quad's collate and
// the --multi-scale resize), scaled by 255 and truncated to uint8.
cv::Mat RenderTrainBatch(const torch::Tensor& images, const torch::Tensor& targets, const GridOptions& options) {
  const torch::Tensor pixels = images.detach().mul(255).to(torch::kCPU).to(torch::kUInt8).contiguous();
  const torch::Tensor rows = targets.detach().to(torch::kCPU).to(torch::kFloat).contiguous();
  Batch batch;
  batch.size = static_cast<int>(pixels.size(0));
  batch.height = static_cast<int>(pixels.size(2));
  batch.width = static_cast<int>(pixels.size(3));
  batch.images = pixels.data_ptr<uint8_t>();
  batch.targets.assign(rows.data_ptr<float>(), rows.data_ptr<float>() + rows.numel());
  return RenderBatchGrid(batch, options);
}

// Why this run's step cannot be captured as a CUDA graph (ResolveStepVariants), "" when it can. A graph
// replays batches of one shape and steps that update; the captured step all-reduces after its replay
// (captured_step.h), but SyncBN's collectives sit inside the forward pass.
std::string GraphRefusal(const TrainOptions& opt, int world) {
  if (opt.quad) return "not with --quad (its collate makes other shapes)";
  if (opt.sync_bn && world > 1) return "not with --sync-bn (its all-reduces run inside the forward pass)";
  if (opt.multi_scale) return "not with --multi-scale (each batch has a size of its own)";
  if (opt.rect) return "not with --rect (each batch has a shape of its own)";
  if (opt.cuda_graph != "auto") return "";  // asked for, it replays the warm-up's steps that do not accumulate
  ScheduleOptions so;
  so.batch_size = opt.batch_size;
  const int accumulate = Schedule(so).base_accumulate();
  if (accumulate == 1) return "";
  return "--batch " + std::to_string(opt.batch_size) + " accumulates the gradients of " + std::to_string(accumulate) +
         " batches, which a graph cannot take";
}

}  // namespace

// The run's state: the checkpoint's part (model, EMA, optimizer, scaler,
// position), then what set up builds around it.
struct Trainer::State {
  std::shared_ptr<YoloModel> model;
  std::unique_ptr<ModelEma> ema;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<GradScaler> scaler;
  TrainPosition position;

  TrainOptions opt;
  TrainObserver* observer = nullptr;
  TrainObserver silent;
  Hyp hyp;
  std::string model_yaml;
  CheckpointInfo resumed;  // resuming: last.pt's metadata
  CheckpointInfo weights;  // --weights' metadata, when not resuming
  std::string train_split;  // --train-split, or the dataset's default
  std::string val_split;    // --val-split, the dataset's default, or else the training split
  int saved_world = 1;     // resuming: the world size last.pt was written by
  int rank = 0, world = 1;
  bool main_rank = true;
  int cpus = 1;
  torch::Device device{torch::kCPU};
  bool cuda = false;
  StepVariants variants;  // what the step's settings give on this device (ResolveStepVariants)
  bool amp = false;  // check_amp passed on CUDA
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<Dataset> dataset;
  int64_t nc = 0;
  std::vector<std::string> names;  // the dataset's, or {"item"} with --single-cls
  std::unique_ptr<GradientSync> gradient_sync;
  PinnedBatchAllocator pinned;
  ffr::ReaderOptions cache_reader;  // --cache: how the pixel cache's shards are read (from CheckOptions)
  LoaderOptions loader_options;
  std::unique_ptr<Loader> loader;
  std::unique_ptr<BatchTransfer> transfer;
  ValidatorOptions validator_options;
  std::unique_ptr<Validator> validator;  // rank 0 validates; the others wait for it
  std::unique_ptr<Schedule> schedule;
  std::unique_ptr<ComputeLoss> compute_loss;
  std::unique_ptr<CapturedStep> captured_step;  // --cuda-graph

  TrainStepParts StepParts() const {
    return TrainStepParts{model.get(), compute_loss.get(), scaler.get(), optimizer.get(), ema.get(),
                          gradient_sync.get(), amp, world, opt.quad, {}};
  }
  bool told_eager_batch = false;                // that the captured step trained a batch eagerly
  // --image-weights: each training image's label classes, model.class_weights, and the per-class mAP50-95 of
  // the last validation (rank 0's, broadcast), from which each epoch's image weights follow.
  std::vector<std::vector<int>> label_classes;
  std::vector<float> class_weights;
  std::vector<double> maps;
  TrainSummary summary;
  std::unique_ptr<ffr::FileLock> run_lock;  // rank 0 holds save_dir for the run's life
  torch::Tensor epoch_loss;       // the running mean of this epoch's loss items
  bool stop_after_epoch = false;  // a stop came during the epoch's last steps
  bool done = false;

  TrainObserver& report() { return observer ? *observer : silent; }
  void Info(const std::string& text) {
    if (main_rank) report().OnMessage(TrainMessage::kInfo, text);
  }
  void Warn(const std::string& text) { report().OnMessage(TrainMessage::kWarning, text); }
  // Every rank's answer to "stop now?": the same on all ranks, so all stop at the same step.
  bool Agreed(bool local) { return comm ? comm->AnyRank(local) : local; }
  const std::string& save_dir() const { return summary.save_dir; }

  // Set up, in this order.
  Status MergeResumedOptions(const TrainOptions& requested);
  Status LoadHyp();
  Status CheckOptions();
  Status SetUpDevice();
  Status OpenDataset();
  Status OpenRunDirectory();
  Status BuildModels();
  Status CheckAmp();
  // --cache: builds the pixel cache `reading` (a loader's options) reads unless a current one is there.
  Status SetUpPixelCache(const LoaderOptions& reading);
  Status SetUpData();
  Status SetUpOptimizer();
  Status RestoreResumedState();
  Status ReadResumedResults();

  Status RunEpoch();
  Status EndEpoch();
  Status Finish();
  Status SaveCheckpoint(const std::string& path, int64_t epoch, int64_t next_batch = 0);
  Status AutoAnchor();
};

Status Trainer::State::MergeResumedOptions(const TrainOptions& requested) {
  opt = requested;
  if (opt.resume.empty()) return Status::OK();
  FFR_RETURN_IF_ERROR(ReadCheckpointInfo(opt.resume, &resumed));
  if (resumed.epoch < 0 && resumed.next_batch == 0)
    return Status::InvalidArgument(opt.resume + ": training finished (stripped weights); nothing to resume");
  TrainOptions saved;
  FFR_RETURN_IF_ERROR(TrainOptions::FromYaml(resumed.opt_yaml, &saved));
  if (resumed.next_batch == 0 && resumed.epoch + 1 >= saved.epochs)
    return Status::InvalidArgument(requested.resume + ": training to " + std::to_string(saved.epochs) +
                                   " epochs is finished, nothing to resume (to train on from it: --weights " +
                                   requested.resume + ")");
  saved_world = saved.dist.world_size;
  FFR_RETURN_IF_ERROR(ResumedOptions(requested, saved, &opt));
  // No --data: the dataset the run recorded, wherever this resume starts from (OpenDataset checks
  // that a --data given is the same dataset).
  if (requested.data.empty() && !opt.dataset_path.empty()) opt.data = opt.dataset_path;
  else if (requested.data.empty() && (!requested.distributed || requested.dist.rank == 0))
    Warn(requested.resume + ": the run recorded no dataset identity (made by an older ffyolo); resuming on " +
         opt.data + " unchecked");
  // Absolute first: "weights/last.pt" given inside the run has no grandparent.
  summary.save_dir = fs::absolute(opt.resume).lexically_normal().parent_path().parent_path().string();
  return Status::OK();
}

Status Trainer::State::LoadHyp() {
  if (!opt.resume.empty()) return Hyp::Parse(resumed.hyp_yaml, opt.resume + " (hyp)", &hyp);
  const std::string path = ResolveConfig(opt.hyp, "hyps");
  std::vector<std::string> defaulted;
  FFR_RETURN_IF_ERROR(Hyp::Load(path, &hyp, &defaulted));
  if (!defaulted.empty() && (!opt.distributed || opt.dist.rank == 0)) {
    std::string keys;
    for (const std::string& k : defaulted) keys += (keys.empty() ? "" : ", ") + k;
    Warn(path + " does not set " + keys + ": using hyp.scratch-low's values for them");
  }
  return Status::OK();
}

Status Trainer::State::CheckOptions() {
  std::string warning;
  FFR_RETURN_IF_ERROR(CheckImgSize(opt.img_size, kMaxStride, &opt.img_size, &warning));
  if (!warning.empty() && (!opt.distributed || opt.dist.rank == 0)) Warn(warning);
  if (opt.batch_size <= 0 || opt.epochs <= 0) return Status::InvalidArgument("--batch and --epochs must be positive");
  if (!opt.cache.empty()) FFR_RETURN_IF_ERROR(PixelCacheBackend(opt.cache, &cache_reader.backend));
  if (opt.optimizer != "SGD" && opt.optimizer != "Adam" && opt.optimizer != "AdamW")
    return Status::InvalidArgument("--optimizer " + opt.optimizer + ": expected SGD, Adam or AdamW");
  rank = opt.distributed ? opt.dist.rank : 0;
  world = opt.distributed ? opt.dist.world_size : 1;
  main_rank = rank == 0;
  if (opt.batch_size % world != 0)
    return Status::InvalidArgument("--batch " + std::to_string(opt.batch_size) + " is not divisible by the " +
                                   std::to_string(world) + " ranks (--batch is the total over all ranks)");
  if (opt.rect && world > 1)
    return Status::InvalidArgument("--rect trains on one rank only (v7.0's DDP sampler mixes rect batches of "
                                   "different shapes)");
  if (opt.rect && opt.image_weights)
    return Status::InvalidArgument("--rect and --image-weights: weighted draws would mix rect batches of different "
                                   "shapes");
  if (opt.quad && opt.batch_size / world < 4)
    return Status::InvalidArgument("--quad needs a batch of at least 4 images per rank (it makes 1 of each 4)");
  if (opt.rect && main_rank) Warn("--rect is incompatible with DataLoader shuffle, setting shuffle=False");
  return Status::OK();
}

Status Trainer::State::SetUpDevice() {
  FFR_RETURN_IF_ERROR(SelectDevice(opt.device, opt.distributed ? opt.dist.local_rank : -1, &device));
  cuda = device.is_cuda();
  // cudnn.benchmark as train.py: cuDNN picks its fastest kernels once per input size (a few with --multi-scale).
  if (cuda) at::globalContext().setBenchmarkCuDNN(true);
  std::string note;
  FFR_RETURN_IF_ERROR(ResolveStepVariants({opt.channels_last, opt.sync_free_loss, opt.cuda_graph, opt.fused_bn_silu},
                                          cuda, GraphRefusal(opt, world), &variants, &note));
  if (!note.empty()) Info(note);
  // Ranks on one machine share its CPUs unless each was bound to its own (--bind-numa).
  cpus = std::max(1, UsableCpus() / (opt.distributed && !opt.bind_numa ? opt.dist.local_world_size : 1));
  at::set_num_threads(opt.threads > 0 ? opt.threads : cpus);
  if (!opt.distributed) return Status::OK();
  FFR_RETURN_IF_ERROR(Communicator::Create(opt.dist, cuda ? device.index() : -1,
                                           std::chrono::seconds(opt.dist_timeout_s), &comm));
  Info("Distributed training: " + std::to_string(world) + " ranks over " + comm->backend() + " (" +
       std::to_string(opt.dist.nnodes) + " node(s), " + std::to_string(opt.dist.local_world_size) +
       " per node), batch " + std::to_string(opt.batch_size / world) + " per rank");
  return Status::OK();
}

// The dataset, the splits the run uses and the --weights file: a bad one is refused before the run
// directory exists.
Status Trainer::State::OpenDataset() {
  const Status opened = Dataset::Open(opt.data, &dataset);
  if (opened.IsNotFound() && !opt.resume.empty())
    return Status::NotFound(opt.resume + ": the run's dataset is not there (" + opened.message() +
                            "); if it moved, pass its new place with --data");
  FFR_RETURN_IF_ERROR(opened);
  const std::string crc = dataset->ManifestCrc(), path = ResolvedPath(opt.data);
  if (!opt.resume.empty() && !opt.dataset_crc.empty() && crc != opt.dataset_crc)
    return Status::InvalidArgument(
        opt.resume + ": the run trained on " + opt.dataset_path + " (manifest CRC " + opt.dataset_crc + "); " +
        opt.data + (path == opt.dataset_path ? " was packed again since" : " is another dataset") + " (CRC " + crc +
        "), and resuming on it would not continue the run; resume on the run's own dataset (--data for one moved " +
        "or copied)");
  opt.dataset_path = path;
  opt.dataset_crc = crc;
  train_split = opt.train_split;
  FFR_RETURN_IF_ERROR(dataset->ResolveSplit(/*training=*/true, &train_split));
  val_split = opt.val_split;
  const Status found = dataset->ResolveSplit(/*training=*/false, &val_split);
  if (found.IsNotFound() && opt.val_split.empty()) {
    val_split = train_split;
  } else {
    FFR_RETURN_IF_ERROR(found);
  }
  for (const std::string& split : {train_split, val_split}) {
    bool applied = false;
    int64_t oriented = 0;
    FFR_RETURN_IF_ERROR(dataset->ExifApplied(split, &applied, &oriented));
    if (!applied && oriented > 0 && (!opt.distributed || opt.dist.rank == 0))
      Warn(split + ": " + std::to_string(oriented) + " image" + (oriented == 1 ? " carries" : "s carry") +
           " an EXIF orientation but train" + (oriented == 1 ? "s" : "") + " as stored, not turned as OpenCV and " +
           "YOLOv5 read them (packed with --exif ignore, or before yolo-pack applied orientations: re-pack to "
           "train them as viewed)");
    if (val_split == train_split) break;
  }
  nc = static_cast<int64_t>(dataset->num_classes());
  names = dataset->manifest().names;
  if (opt.single_cls) {
    names = SingleClassNames(names);
    nc = 1;
  }
  if (!opt.weights.empty() && opt.resume.empty()) FFR_RETURN_IF_ERROR(ReadCheckpointInfo(opt.weights, &weights));
  return Status::OK();
}

Status Trainer::State::OpenRunDirectory() {
  if (!main_rank) return Status::OK();
  ffr::Env* env = opt.env;
  if (opt.resume.empty()) summary.save_dir = IncrementPath(opt.project + "/" + opt.name, opt.exist_ok);
  FFR_RETURN_IF_ERROR(CheckRunApartFromDataset(save_dir(), opt.data));
  FFR_RETURN_IF_ERROR(HoldRunDirectory(env, save_dir(), &run_lock));
  FFR_RETURN_IF_ERROR(env->CreateDirs(save_dir() + "/weights"));
  FFR_RETURN_IF_ERROR(ffr::WriteFileAtomically(env, save_dir() + "/hyp.yaml", hyp.ToYaml()));
  return ffr::WriteFileAtomically(env, save_dir() + "/opt.yaml", opt.ToYaml());
}

// check_anchors on the training split's label index; replaced anchors go back into Detect in grid units.
Status Trainer::State::AutoAnchor() {
  LabelIndex index;
  FFR_RETURN_IF_ERROR(dataset->LoadLabelIndex(train_split, &index));
  DetectImpl& detect = model->detect();
  torch::NoGradGuard no_grad;
  const torch::Tensor stride = torch::tensor(detect.strides(), torch::kFloat).view({-1, 1, 1});
  const torch::Tensor pixels = (detect.anchors * stride).contiguous();
  std::vector<AnchorWh> anchors(pixels.numel() / 2);
  std::memcpy(static_cast<void*>(anchors.data()), pixels.data_ptr<float>(), anchors.size() * sizeof(AnchorWh));
  const AutoAnchorResult result = CheckAnchors(index, opt.img_size, hyp.anchor_t, opt.seed + 1, &anchors);
  std::string report = result.report;
  if (!report.empty() && report.back() == '\n') report.pop_back();
  Info("\n" + report);
  if (result.replaced) {
    detect.anchors.copy_(torch::from_blob(anchors.data(), detect.anchors.sizes(), torch::kFloat));
    detect.CheckAnchorOrder();  // in pixels, as check_anchors does
    detect.anchors.div_(stride);
  }
  return Status::OK();
}

Status Trainer::State::BuildModels() {
  const bool resuming = !opt.resume.empty();
  torch::manual_seed(opt.seed + (opt.distributed ? 1 + rank : 0));  // init_seeds(seed + 1 + RANK), RANK -1 alone
  // train.py: Model(cfg or ckpt['model'].yaml, nc=nc): --cfg, else the initial weights' own model.
  const bool own_yaml = opt.cfg.empty() && !opt.weights.empty() && !resuming;
  std::string where = resuming ? opt.resume : ResolveModelYaml(opt.cfg.empty() ? kDefaultModelCfg : opt.cfg);
  model_yaml = resumed.model_yaml;
  if (own_yaml) {
    model_yaml = weights.model_yaml;
    where = opt.weights + " (model_yaml)";
  } else if (!resuming) {
    FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), where, &model_yaml));
  }
  ModelConfig own;  // the YAML's own nc, which the dataset's replaces
  FFR_RETURN_IF_ERROR(ParseModelConfig(model_yaml, where, /*nc=*/0, &own));
  if (own.nc != nc) Info("Overriding model.yaml nc=" + std::to_string(own.nc) + " with nc=" + std::to_string(nc));
  std::shared_ptr<YoloModel> ema_model;
  FFR_RETURN_IF_ERROR(BuildModelFromString(model_yaml, where, nc, &model));
  FFR_RETURN_IF_ERROR(BuildModelFromString(model_yaml, where, nc, &ema_model));
  Info(LayerTable(*model) + "\n" + SummaryLine(*model, opt.img_size));
  if (!resuming) {
    if (!opt.weights.empty()) {
      int64_t transferred = 0, total = 0;
      // exclude = ['anchor'] if cfg: anchors of another config's model (or of AutoAnchor) are not these.
      FFR_RETURN_IF_ERROR(TransferWeights(opt.weights, /*exclude_anchors=*/!opt.cfg.empty(), model.get(),
                                          &transferred, &total));
      Info("Transferred " + std::to_string(transferred) + "/" + std::to_string(total) + " items from " + opt.weights);
    }
    if (!opt.noautoanchor && main_rank) FFR_RETURN_IF_ERROR(AutoAnchor());  // the others get rank 0's anchors
    RoundToHalf(model.get());
  }
  std::vector<std::string> frozen;
  FFR_RETURN_IF_ERROR(FreezeLayers(model.get(), opt.freeze, &frozen));
  for (const std::string& name : frozen) Info("freezing " + name);
  model->to(device);
  ema_model->to(device);
  model->SetMemoryFormat(MemoryFormatOf(variants.channels_last));
  ema_model->SetMemoryFormat(MemoryFormatOf(variants.channels_last));
  model->SetFusedBnSilu(variants.fused_bn_silu);
  if (comm) {
    std::vector<torch::Tensor> state = model->parameters();
    for (const torch::Tensor& b : model->buffers()) state.push_back(b);
    comm->Broadcast(state, 0);  // every rank starts from rank 0's weights
    gradient_sync = std::make_unique<GradientSync>(comm.get(), model->parameters());
    if (opt.sync_bn) {
      model->SetSyncBatchNorm(comm.get());
      Info("Using SyncBatchNorm()");
    }
  } else if (opt.sync_bn) {
    Warn("--sync-bn applies to multi-process training only; ignored");
  }
  ema = std::make_unique<ModelEma>(ema_model, *model);  // of the weights every rank now shares
  return Status::OK();
}

// check_amp: AMP stays on only where FP32 and autocast inference of this model agree (boxes normalized by the
// image size and scores within 0.1, check_amp's tolerance); on the CPU it is off.
Status Trainer::State::CheckAmp() {
  if (!cuda) return Status::OK();
  torch::NoGradGuard no_grad;
  model->eval();
  const int64_t size = opt.img_size;
  const torch::Tensor image =  // a horizontal ramp: deterministic and not flat
      torch::linspace(0, 1, size, torch::TensorOptions().device(device)).view({1, 1, 1, size}).expand({1, 3, size, size});
  const torch::Tensor fp32 = model->forward(image.contiguous()).decoded;
  compat::SetCudaAutocast(true);
  const torch::Tensor mixed = model->forward(image.contiguous()).decoded.to(torch::kFloat);
  compat::SetCudaAutocast(false);
  model->train();
  const torch::Tensor scale = torch::cat({torch::full({4}, 1.0 / size), torch::ones({fp32.size(-1) - 4})}).to(device);
  amp = fp32.sizes() == mixed.sizes() && torch::allclose(fp32 * scale, mixed * scale, /*rtol=*/0, /*atol=*/0.1);
  if (amp)
    Info("AMP: checks passed \u2705");
  else
    Warn("AMP: checks failed: FP32 and mixed-precision outputs of the model differ; training in FP32");
  return Status::OK();
}

Status Trainer::State::SetUpPixelCache(const LoaderOptions& reading) {
  PixelCacheOptions po = PixelCacheFor(reading);
  po.threads = cpus;
  po.instead = "train without --cache (decoding the images)";
  const std::string task = std::string(reading.training ? "train" : "val") + " cache";
  if (main_rank) {
    po.on_progress = [&](const PixelCacheOptions::Progress& p) { report().OnSetUpProgress(task, p.done, p.total); };
    po.on_message = [this](const std::string& m) { Info(m); };
    po.stop_requested = TrainingStopRequested;
  }
  // Every rank asks; the first of a machine to take the cache's lock builds it
  // and the others wait on the lock, then find it complete.
  PixelCacheSummary summary;
  FFR_RETURN_IF_ERROR(BuildPixelCache(*dataset, po, &summary));
  char line[256];
  std::snprintf(line, sizeof(line), "Caching images (%.1fGB %s): %s %s", summary.bytes / 1e9,
                opt.cache == "ram" ? "RAM, shared by this machine's ranks" : "disk", summary.directory.c_str(),
                summary.was_complete ? "(built before)" : "built");
  Info(line);
  return Status::OK();
}

Status Trainer::State::SetUpData() {
  const bool cache = !opt.cache.empty();
  LoaderOptions& lo = loader_options;
  lo.split = train_split;
  lo.training = true;
  lo.img_size = opt.img_size;
  lo.batch_size = opt.batch_size / world;
  lo.rank = rank;
  lo.world_size = world;
  lo.hyp = hyp;
  lo.seed = opt.seed;
  lo.workers = std::max(1, std::min(opt.workers, cpus));
  lo.allocator = cuda ? &pinned : nullptr;
  lo.rect = opt.rect;
  lo.rect_pad = 0.0;  // create_dataloader's pad for training
  lo.shuffle = !opt.rect;
  lo.single_cls = opt.single_cls;
  lo.on_bad_sample = [this](const std::string& m) { Warn("corrupt sample replaced: " + m); };
  if (cache) {
    lo.pixel_cache = true;
    lo.reader = cache_reader;
    FFR_RETURN_IF_ERROR(SetUpPixelCache(lo));
  }
  FFR_RETURN_IF_ERROR(Loader::Open(*dataset, lo, &loader));
  if (opt.image_weights) {
    LabelIndex index;
    FFR_RETURN_IF_ERROR(dataset->LoadLabelIndex(loader->split(), &index));
    label_classes = ImageLabelClasses(index, opt.single_cls);
    class_weights = ModelClassWeights(label_classes, static_cast<int>(nc));
    maps = resumed.maps.size() == static_cast<size_t>(nc) ? resumed.maps : std::vector<double>(nc, 0.0);
  }
  transfer = std::make_unique<BatchTransfer>(loader.get(), device, MemoryFormatOf(variants.channels_last));
  if (const std::string both = SplitsInBoth(train_split, val_split); !both.empty() && main_rank)
    Warn(opt.data + ": validating on " + (both == val_split ? "the training split '" : "training split(s) '") + both +
         "': the scores are of images the model trains on (as Ultralytics' coco128 does)");
  Info("train: " + opt.data + " split '" + train_split + "', val: split '" + val_split + "'");
  ValidatorOptions& vo = validator_options;
  vo.split = val_split;
  vo.img_size = opt.img_size;
  vo.batch_size = opt.batch_size * 2;
  vo.workers = lo.workers;
  vo.single_cls = opt.single_cls;
  if (cache && !opt.noval && main_rank) {  // as train.py: no validation cache with --noval
    vo.pixel_cache = true;
    vo.reader = cache_reader;
    FFR_RETURN_IF_ERROR(SetUpPixelCache(ValidationLoader(vo)));
  }
  if (main_rank) FFR_RETURN_IF_ERROR(Validator::Open(*dataset, vo, device, &validator));
  return Status::OK();
}

Status Trainer::State::SetUpOptimizer() {
  ScheduleOptions so;
  so.lr0 = hyp.lr0;
  so.lrf = hyp.lrf;
  so.momentum = hyp.momentum;
  so.warmup_epochs = hyp.warmup_epochs;
  so.warmup_momentum = hyp.warmup_momentum;
  so.warmup_bias_lr = hyp.warmup_bias_lr;
  so.epochs = opt.epochs;
  so.batches_per_epoch = loader->batches_per_epoch();
  so.batch_size = opt.batch_size;
  so.cosine = opt.cos_lr;
  schedule = std::make_unique<Schedule>(so);
  std::string description;
  FFR_RETURN_IF_ERROR(MakeOptimizer(*model, opt.optimizer, hyp, schedule->ScaledWeightDecay(hyp.weight_decay),
                                    &optimizer, &description));
  Info(description);
  compute_loss = std::make_unique<ComputeLoss>(ScaleLossGains(hyp, nc, 3, opt.img_size), opt.label_smoothing, nc,
                                               model->detect().anchors, variants.sync_free_loss);
  scaler = std::make_unique<GradScaler>(amp);
  if (variants.cuda_graph) FFR_RETURN_IF_ERROR(CapturedStep::Create(StepParts(), &captured_step));
  return Status::OK();
}

Status Trainer::State::RestoreResumedState() {
  if (opt.resume.empty()) return Status::OK();
  FFR_RETURN_IF_ERROR(LoadCheckpointState(opt.resume, model.get(), &ema->model(), optimizer.get()));
  ema->set_updates(resumed.ema_updates);
  scaler->Restore(resumed.loss_scale, resumed.scale_growth_tracker);
  position.best_fitness = resumed.best_fitness;
  position.last_opt_step = resumed.last_opt_step;
  position.epoch = resumed.epoch + 1;
  position.next_batch = resumed.next_batch;
  if (position.next_batch > loader->batches_per_epoch())
    return Status::InvalidArgument(opt.resume + " stopped at batch " + std::to_string(position.next_batch) +
                                   " of epoch " + std::to_string(position.epoch) + ", but " + opt.data + " now has " +
                                   std::to_string(loader->batches_per_epoch()) +
                                   " batches an epoch: it is not the dataset the run trained on (repacked?)");
  position.best_epoch = resumed.epoch;  // EarlyStopping counts from the resumed epoch
  if (main_rank) FFR_RETURN_IF_ERROR(ReadResumedResults());
  if (saved_world != world && main_rank)
    Warn(opt.resume + " was saved by " + std::to_string(saved_world) + " rank(s) and resumes on " +
         std::to_string(world) + ": each rank's share of the epoch changes, so the rest of it is not the exact "
         "continuation");
  Info("Resuming training from " + opt.resume + " at epoch " + std::to_string(position.epoch) + " batch " +
       std::to_string(position.next_batch) + " of " + std::to_string(opt.epochs) + " epochs");
  return Status::OK();
}

// The rows of the epochs the checkpoint has seen. Rows past it are dropped:
// results.csv is written just before last.pt, and the checkpoint may be an
// older one (best.pt, epochN.pt). A damaged file is refused rather than lost.
Status Trainer::State::ReadResumedResults() {
  const std::string path = save_dir() + "/results.csv";
  const Status read = ReadResultsCsv(path, &summary.results);
  if (read.IsNotFound() && resumed.epoch >= 0) {
    Warn(path + " is missing: the rows of epochs 0-" + std::to_string(resumed.epoch) + " are lost");
  } else if (!read.ok() && !read.IsNotFound()) {
    return Status::Corruption("cannot resume: " + read.message() +
                              "; repair it, or remove it to resume without the earlier epochs' rows");
  }
  const auto past = [&](const EpochResult& r) { return r.epoch > resumed.epoch; };
  summary.results.erase(std::remove_if(summary.results.begin(), summary.results.end(), past), summary.results.end());
  return Status::OK();
}

// `epoch` finished; next_batch > 0: the run stopped inside epoch + 1 before that batch.
Status Trainer::State::SaveCheckpoint(const std::string& path, int64_t epoch, int64_t next_batch) {
  CheckpointInfo info;
  info.model_yaml = model_yaml;
  info.nc = nc;
  info.names = dataset->manifest().names;
  info.opt_yaml = opt.ToYaml();
  info.hyp_yaml = hyp.ToYaml();
  info.epoch = epoch;
  info.next_batch = next_batch;
  info.best_fitness = position.best_fitness;
  info.ema_updates = ema->updates();
  info.last_opt_step = position.last_opt_step;
  info.loss_scale = scaler->enabled() ? scaler->scale() : 65536;
  info.scale_growth_tracker = scaler->enabled() ? scaler->growth_tracker() : 0;
  info.date = Now();
  if (opt.image_weights) info.maps = maps;
  if (next_batch > 0) {
    const torch::Tensor loss = epoch_loss.to(torch::kCPU, torch::kDouble).contiguous();
    info.epoch_loss.assign(loss.data_ptr<double>(), loss.data_ptr<double>() + loss.numel());
  }
  return ffyolo::SaveCheckpoint(path, info, *model, &ema->model(), optimizer.get(), opt.env);
}

Status Trainer::State::RunEpoch() {
  const int64_t epoch = position.epoch;
  const int64_t nb = loader->batches_per_epoch();
  const int64_t i0 = position.next_batch;
  model->train();
  if (opt.image_weights)
    FFR_RETURN_IF_ERROR(loader->SetSampleWeights(ImageWeights(label_classes, class_weights, maps)));
  FFR_RETURN_IF_ERROR(transfer->Start(epoch, i0));
  TrainEpochEnd ee;
  ee.epoch = epoch;
  const Clock::time_point started = Clock::now();
  const auto end_epoch = [&](int64_t next) {
    ee.batches = next - i0;
    ee.seconds = SecondsSince(started);
    report().OnTrainEpochEnd(ee);
  };
  // The running mean counts from batch 0, resumed from the checkpoint's when it stopped inside this epoch.
  int64_t loss_from = 0;
  epoch_loss = torch::zeros({3}, torch::TensorOptions().device(device));
  if (i0 > 0 && epoch == resumed.epoch + 1 && i0 == resumed.next_batch && resumed.epoch_loss.size() == 3)
    epoch_loss = torch::tensor(resumed.epoch_loss, torch::kDouble).to(device, torch::kFloat);
  else
    loss_from = i0;  // a checkpoint without it: the mean of the batches this run trains
  optimizer->zero_grad();
  report().OnTrainEpochStart(epoch, opt.epochs, nb, i0);
  const TrainStepParts step_parts = StepParts();
  TrainBatchEnd be;
  be.epoch = epoch;
  be.epochs = opt.epochs;
  be.batches = nb;
  for (int64_t i = i0;; ++i) {
    DeviceBatch batch;
    const Clock::time_point asked = Clock::now();
    FFR_RETURN_IF_ERROR(transfer->Next(&batch));
    ee.data_wait_seconds += SecondsSince(asked);
    if (!batch.host) break;
    if (opt.quad) {
      const int groups = batch.host->size / 4;
      if (groups == 0) break;  // a last batch of fewer than 4 images (v7.0's collate_fn4 fails on it)
      QuadCollate(batch.images, batch.targets, DrawQuadUpsample(opt.seed, epoch, rank, i, groups), &batch.images,
                  &batch.targets);
    }
    const int64_t ni = i + nb * epoch;
    const Schedule::Step step = schedule->At(ni, epoch);
    for (int g = 0; g < 3; ++g) SetGroupLrMomentum(optimizer->param_groups()[g], step.lr[g], step.momentum);
    torch::Tensor images = batch.images;
    if (opt.multi_scale)
      images = MultiScaleResize(images, MultiScaleSize(opt.img_size, kMaxStride, opt.seed, ni), kMaxStride);
    if (epoch == 0 && i == 0 && main_rank) {
      GridOptions go;
      go.names = names;
      WriteJpeg(RenderTrainBatch(images, batch.targets, go), save_dir() + "/train_batch0.jpg", 90, opt.env);
    }
    const bool update = ni - position.last_opt_step >= step.accumulate;
    // The capture is made on the first full batch: a partial one's shape would leave the others eager.
    const bool replay = captured_step && update && step.accumulate == 1 && captured_step->Fits(images) &&
                        (captured_step->captures() > 0 || images.size(0) == opt.batch_size / world);
    if (captured_step && !replay && !told_eager_batch && main_rank) {
      told_eager_batch = true;
      Info("CUDA graph: batch " + std::to_string(i) + " of epoch " + std::to_string(epoch) +
           " trains eagerly (its shape is not the captured one's, or gradients accumulate); so may others");
    }
    const LossOutput loss = replay ? captured_step->Step(images, batch.targets)
                                   : TrainStep(step_parts, images, batch.targets, update);
    if (update) position.last_opt_step = ni;
    epoch_loss = (epoch_loss * (i - loss_from) + loss.items) / (i - loss_from + 1);
    position.next_batch = i + 1;
    // The loss values cross to the host (a wait for the GPU) only every few batches on CUDA: enough for the
    // progress line, which redraws ten times a second at most.
    be.batch = i;
    be.instances = batch.targets.size(0);  // after --quad's collate, as train.py counts them
    be.size = static_cast<int>(images.size(3));
    if (!cuda || (i - i0) % kCudaLossReadInterval == 0 || i + 1 == nb) {
      const torch::Tensor host = torch::cat({loss.items.detach(), epoch_loss}).cpu();
      for (int k = 0; k < 3; ++k) {
        be.items[k] = host[k].item<double>();
        be.mean_items[k] = host[3 + k].item<double>();
      }
      be.gpu_mem_gb = BatchTransfer::MemoryReservedGb(device);
    }
    report().OnTrainBatchEnd(be);
    // A stop is honoured right after an optimizer step, when no gradient is pending, and by all ranks at once.
    if (update && i + 1 < nb && Agreed(TrainingStopRequested())) {
      end_epoch(i + 1);
      if (main_rank) FFR_RETURN_IF_ERROR(SaveCheckpoint(save_dir() + "/weights/last.pt", epoch - 1, i + 1));
      if (comm) comm->Barrier();  // the checkpoint is complete before any rank exits
      run_lock.reset();           // nothing more is written: a resume may take the folder
      return Status::Aborted("stopped at epoch " + std::to_string(epoch) + " batch " + std::to_string(i + 1) +
                             ResumeHint(main_rank, save_dir()));
    }
  }
  end_epoch(position.next_batch);
  stop_after_epoch = Agreed(TrainingStopRequested());
  return Status::OK();
}

Status Trainer::State::EndEpoch() {
  const int64_t epoch = position.epoch;
  bool stop_early = false;
  if (main_rank) {
    FitEpochEnd fe;
    EpochResult& r = fe.result;
    r.epoch = epoch;
    const torch::Tensor mean_loss = epoch_loss.cpu();
    r.train_box = mean_loss[0].item<double>();
    r.train_obj = mean_loss[1].item<double>();
    r.train_cls = mean_loss[2].item<double>();
    for (int g = 0; g < 3; ++g) r.lr[g] = optimizer->param_groups()[g].options().get_lr();
    const bool final_epoch = epoch + 1 == opt.epochs;
    if (!opt.noval || final_epoch) {
      ValidationOutput vout;
      const Status validated = validator->Run(ema->model(), compute_loss.get(), /*half=*/amp, &vout);
      if (!validated.ok()) {  // a corrupt validation image: the epoch's training is kept, resuming at its end
        if (!opt.nosave) {
          FFR_RETURN_IF_ERROR(SaveCheckpoint(save_dir() + "/weights/last.pt", epoch - 1, loader->batches_per_epoch()));
          Warn("validation failed after epoch " + std::to_string(epoch) + "'s training, which is saved: fix the "
               "validation data" + ResumeHint(main_rank, save_dir()) + ", which validates it again");
          run_lock.reset();
        }
        return validated;
      }
      fe.validated = true;
      fe.metrics = vout.result.metrics;
      r.precision = vout.result.metrics.mp;
      r.recall = vout.result.metrics.mr;
      r.map50 = vout.result.metrics.map50;
      r.map = vout.result.metrics.map;
      r.val_box = vout.loss[0];
      r.val_obj = vout.loss[1];
      r.val_cls = vout.loss[2];
      if (opt.image_weights) maps = ClassMaps(vout.result.metrics, static_cast<int>(nc));
    }
    const double fitness = Fitness(r.map50, r.map);
    summary.results.push_back(r);
    FFR_RETURN_IF_ERROR(WriteResultsCsv(save_dir() + "/results.csv", summary.results, opt.env));
    std::string plot;
    PlotResults(summary.results, save_dir() + "/results.png", &plot, opt.env);
    if (fitness >= position.best_fitness) {  // v7.0's EarlyStopping and best.pt use >=
      position.best_fitness = fitness;
      position.best_epoch = epoch;
      fe.best = true;
    }
    if (!opt.nosave || final_epoch) {
      FFR_RETURN_IF_ERROR(SaveCheckpoint(save_dir() + "/weights/last.pt", epoch));
      if (fe.best) FFR_RETURN_IF_ERROR(SaveCheckpoint(save_dir() + "/weights/best.pt", epoch));
      if (opt.save_period > 0 && epoch % opt.save_period == 0)
        FFR_RETURN_IF_ERROR(SaveCheckpoint(save_dir() + "/weights/epoch" + std::to_string(epoch) + ".pt", epoch));
    }
    report().OnFitEpochEnd(fe);
    stop_early = opt.patience > 0 && epoch - position.best_epoch >= opt.patience;  // v7.0: `patience or inf`
    if (stop_early)
      Info("Stopping training early as no improvement observed in last " + std::to_string(opt.patience) +
           " epochs. Best results observed at epoch " + std::to_string(position.best_epoch));
  }
  stop_early = Agreed(stop_early);  // the other ranks wait here while rank 0 validates and saves
  if (comm && opt.image_weights) {  // every rank draws the next epoch's images from rank 0's mAPs
    torch::Tensor t = torch::tensor(maps, torch::kDouble).to(device);
    comm->Broadcast({t}, 0);
    t = t.cpu().contiguous();
    maps.assign(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
  }
  summary.epochs_run++;
  position.epoch = epoch + 1;
  position.next_batch = 0;
  done = stop_early || position.epoch >= opt.epochs;
  if (stop_after_epoch) {
    run_lock.reset();  // nothing more is written: a resume may take the folder
    return Status::Aborted("stopped after epoch " + std::to_string(epoch) + ResumeHint(main_rank, save_dir()));
  }
  return Status::OK();
}

Status Trainer::State::Finish() {
  if (loader->bad_samples() > 0)
    Warn("rank " + std::to_string(rank) + ": " + std::to_string(loader->bad_samples()) +
         " corrupt sample reads were replaced during training");
  if (!main_rank) return Status::OK();  // rank 0 alone runs the final validation
  summary.best_fitness = position.best_fitness;
  TrainEnd end;
  end.save_dir = save_dir();
  // best.pt (EMA weights) validated with the full report, at train.py's IoU threshold for the dataset.
  const std::string best = save_dir() + "/weights/best.pt";
  if (ffr::Env::Default()->FileExists(best)) {
    std::shared_ptr<YoloModel> best_model;
    CheckpointInfo best_info;
    FFR_RETURN_IF_ERROR(LoadCheckpointModel(best, /*prefer_ema=*/true, &best_model, &best_info));
    best_model->to(device);
    ValidatorOptions fo = validator_options;
    fo.nms.iou_thres = FinalValidationIouThreshold(dataset->manifest(), fo.split);
    std::unique_ptr<Validator> final_validator;
    FFR_RETURN_IF_ERROR(Validator::Open(*dataset, fo, device, &final_validator));
    ValidationOutput vout;
    FFR_RETURN_IF_ERROR(final_validator->Run(*best_model, compute_loss.get(), /*half=*/amp, &vout));
    FFR_RETURN_IF_ERROR(
        ffr::WriteFileAtomically(opt.env, save_dir() + "/predictions.json", vout.predictions_json));
    summary.final_map50 = vout.result.metrics.map50;
    summary.final_map = vout.result.metrics.map;
    summary.final_coco = vout.result.coco;
    end.best_weights = best;
    end.final = vout.result;
  }
  report().OnTrainEnd(end);
  return Status::OK();
}

Trainer::Trainer(std::unique_ptr<State> state) : s_(std::move(state)) {}
Trainer::~Trainer() = default;

Status Trainer::Create(const TrainOptions& options, TrainObserver* observer, std::unique_ptr<Trainer>* out) {
  auto s = std::make_unique<State>();
  s->observer = observer;
  FFR_RETURN_IF_ERROR(StatusOrException([&] {
    // A stop asked for during the setup (minutes with a pixel cache to build) ends it at the next
    // stage, by all ranks at once, rather than after the first step.
    const auto unless_stopped = [&](const char* next) {
      if (!s->Agreed(TrainingStopRequested())) return Status::OK();
      return Status::Aborted(std::string("stopped before ") + next + ", during the setup: nothing was trained");
    };
    FFR_RETURN_IF_ERROR(s->MergeResumedOptions(options));
    FFR_RETURN_IF_ERROR(s->LoadHyp());
    FFR_RETURN_IF_ERROR(s->CheckOptions());
    FFR_RETURN_IF_ERROR(s->SetUpDevice());
    FFR_RETURN_IF_ERROR(s->OpenDataset());
    // The model before the run directory: a bad --cfg or --freeze leaves no run folder behind.
    FFR_RETURN_IF_ERROR(s->BuildModels());
    FFR_RETURN_IF_ERROR(unless_stopped("the run directory was made"));
    FFR_RETURN_IF_ERROR(s->OpenRunDirectory());
    FFR_RETURN_IF_ERROR(unless_stopped("the data was set up"));
    FFR_RETURN_IF_ERROR(s->CheckAmp());
    FFR_RETURN_IF_ERROR(s->SetUpData());
    FFR_RETURN_IF_ERROR(s->SetUpOptimizer());
    FFR_RETURN_IF_ERROR(s->RestoreResumedState());
    return unless_stopped("the first step");
  }));
  TrainStart start;
  start.save_dir = s->save_dir();
  start.img_size = s->opt.img_size;
  start.workers = s->loader_options.workers;
  start.cache = s->opt.cache;
  start.threads = at::get_num_threads();
  start.epochs = s->opt.epochs;
  start.start_epoch = s->position.epoch;
  start.first_batch = s->position.next_batch;
  start.batches_per_epoch = s->loader->batches_per_epoch();
  start.train_split = s->train_split;
  start.val_split = s->val_split;
  start.rank = s->rank;
  start.world_size = s->world;
  start.names = s->names;
  s->done = s->position.epoch >= s->opt.epochs;
  s->report().OnTrainStart(start);
  out->reset(new Trainer(std::move(s)));
  return Status::OK();
}

Status Trainer::RunEpoch() {
  if (s_->done) return Status::InvalidArgument("the run is done: no epoch left to run");
  return StatusOrException([&] { return s_->RunEpoch(); });
}

Status Trainer::EndEpoch() {
  return StatusOrException([&] { return s_->EndEpoch(); });
}

bool Trainer::done() const { return s_->done; }

Status Trainer::Finish() {
  const Status finished = StatusOrException([&] { return s_->Finish(); });
  s_->run_lock.reset();  // the run is over: its folder is free
  return finished;
}

TrainPosition Trainer::position() const {
  TrainPosition p = s_->position;
  p.ema_updates = s_->ema->updates();
  return p;
}

const TrainSummary& Trainer::summary() const { return s_->summary; }
const TrainOptions& Trainer::options() const { return s_->opt; }
YoloModel& Trainer::model() { return *s_->model; }
YoloModel& Trainer::ema() { return s_->ema->model(); }

}  // namespace ffyolo
