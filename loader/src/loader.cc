#include "ffyolo/loader.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include "ffyolo/output/disk_space.h"
#include "ffyolo/mosaic_buffer.h"
#include "ffyolo/pixel_cache.h"
#include "ffyolo/rect_batches.h"
#include "ffyolo/sampler.h"
#include "sample_builder.h"

namespace ffyolo {
namespace {

class AlignedAllocator : public BatchAllocator {
 public:
  void* Allocate(size_t bytes) override {
    void* p = nullptr;
    return posix_memalign(&p, 4096, std::max<size_t>(bytes, 1)) == 0 ? p : nullptr;
  }
  void Free(void* p, size_t) override { std::free(p); }
};

// How many replacements to try before a sample's failure stops the epoch.
constexpr int kMaxReplacements = 16;

Status Closed() { return Status::Aborted("the loader is closed"); }

}  // namespace

BatchAllocator* BatchAllocator::Default() {
  static AlignedAllocator allocator;
  return &allocator;
}

class Loader::Impl {
 public:
  explicit Impl(const LoaderOptions& options) : opt_(options) {}
  ~Impl();

  Status Init(const Dataset& dataset);
  Status Start(int64_t epoch, int64_t first_batch);
  // The dataset index of each of this rank's sample positions in `epoch`.
  std::vector<int64_t> EpochPositions(int64_t epoch) const;
  Status SetSampleWeights(std::vector<double> weights);
  Status Next(const Batch** batch);
  void Release(const Batch* batch);
  Status ReleaseKeepingImages(const Batch* batch, uint8_t** images, size_t* bytes);
  void Close();

  const std::string& split() const { return opt_.split; }
  int64_t dataset_size() const { return reader_->size(); }
  int64_t samples_per_epoch() const { return samples_per_epoch_; }
  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  bool shuffled() const { return opt_.training && opt_.shuffle && sampler_ != nullptr; }
  int64_t bad_samples() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bad_samples_;
  }
  DecodeStats decode_stats() const {
    DecodeStats stats = store_ ? store_->stats() : DecodeStats();
    stats.decodes = decodes_.load(std::memory_order_relaxed);
    return stats;
  }

 private:
  // One buffer of the ring: holds batch `batch` while in use.
  struct Slot {
    Batch batch;
    uint8_t* memory = nullptr;  // slot_bytes_ of them
    int64_t assigned = -1;  // batch number it is filling, -1 when free
    int remaining = 0;      // samples not yet written
    bool handed_out = false;
    std::vector<std::vector<NormBox>> targets;
    Status error;
  };

  void Worker(int id);
  void StopEpoch(std::unique_lock<std::mutex>* lock);
  void Assign(Slot* slot, int64_t batch);
  // The slot holding `batch` while it is handed out, else null (released, or of an earlier Start). mu_ held.
  Slot* HandedOutSlot(const Batch* batch);
  // A handed-out slot given back: it takes the batch `prefetch` later, if the epoch has one. mu_ held.
  void Recycle(Slot* slot);
  int BatchSize(int64_t batch) const;
  std::pair<int, int> BatchShape(int64_t batch) const;
  void Produce(SampleBuilder* builder, int64_t position, uint8_t* dst, std::vector<NormBox>* targets,
               ImageMeta* meta, Status* error, int64_t* replaced);

  LoaderOptions opt_;  // its split resolved (Dataset::ResolveSplit)
  std::unique_ptr<ffr::Reader> reader_;
  std::unique_ptr<std::atomic<bool>[]> checked_;  // pixel cache samples whose CRC was checked
  std::unique_ptr<DecodedImageStore> store_;      // Ultralytics 8's mosaic training, unless decoded_store_bytes is 0
  std::atomic<int64_t> decodes_{0};
  SampleContext context_;
  std::unique_ptr<DistributedSampler> sampler_;
  RectBatches rect_;
  // Ultralytics 8's rect training whose batches are all of one shape, (height, width): shuffled by the sampler.
  std::optional<std::pair<int, int>> one_rect_shape_;
  std::vector<double> sample_weights_;  // --image-weights; empty: every sample once
  int64_t samples_per_epoch_ = 0;
  int64_t batches_per_epoch_ = 0;
  size_t slot_bytes_ = 0;  // each ring buffer's, for the largest batch

  mutable std::mutex mu_;
  std::condition_variable work_cv_;   // workers wait for claimable samples
  std::condition_variable ready_cv_;  // the consumer waits for a finished batch
  std::vector<Slot> slots_;
  std::vector<std::thread> workers_;
  std::once_flag joined_;  // Close's join, once whichever threads close
  bool shutdown_ = false;  // closed: the workers end, Start and Next return Aborted
  bool started_ = false;
  int in_flight_ = 0;
  int64_t epoch_ = 0;
  std::vector<int64_t> positions_;  // dataset index of each sample position of the epoch
  std::vector<SampleDraws> draws_;  // Ultralytics 8's mosaic training: the images each position names
  int64_t next_position_ = 0;       // next position to claim
  int64_t end_position_ = 0;
  int64_t next_batch_ = 0;          // next batch Next() returns
  // The error that ended the epoch (a failed batch): every later Next returns it, until Start.
  Status epoch_error_;
  int64_t bad_samples_ = 0;
  std::set<int64_t> reported_;
};

Loader::Impl::~Impl() {
  Close();
  for (Slot& s : slots_)
    if (s.memory) opt_.allocator->Free(s.memory, slot_bytes_);
}

void Loader::Impl::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutdown_ = true;
  }
  work_cv_.notify_all();
  ready_cv_.notify_all();
  std::call_once(joined_, [this] {
    for (std::thread& t : workers_) t.join();
  });
}

Status Loader::Impl::Init(const Dataset& dataset) {
  if (opt_.img_size <= 0 || opt_.img_size % opt_.stride != 0)
    return Status::InvalidArgument("--img " + std::to_string(opt_.img_size) + " must be a positive multiple of " +
                                   std::to_string(opt_.stride));
  if (opt_.batch_size <= 0) return Status::InvalidArgument("batch size must be positive");
  if (!opt_.allocator) opt_.allocator = BatchAllocator::Default();
  opt_.workers = std::max(1, opt_.workers);
  opt_.prefetch = std::max(1, opt_.prefetch);
  if (opt_.workers > LoaderOptions::kMaxWorkers)
    return Status::InvalidArgument("workers " + std::to_string(opt_.workers) + ": more than " +
                                   std::to_string(LoaderOptions::kMaxWorkers) + " loader threads");
  if (opt_.ultralytics_workers < 1)
    return Status::InvalidArgument("ultralytics_workers " + std::to_string(opt_.ultralytics_workers) +
                                   ": at least 1");
  FFR_RETURN_IF_ERROR(opt_.ultralytics8_hyp.Check(opt_.augmentation));
  if (opt_.pixel_cache) {
    const PixelCacheOptions po = PixelCacheFor(opt_);
    ffr::ReaderOptions ro = opt_.reader;
    ro.verify_checksums = false;  // checked once per sample instead (SampleContext::checked)
    FFR_RETURN_IF_ERROR(OpenPixelCache(dataset, po, ro, &reader_));
    checked_.reset(new std::atomic<bool>[reader_->size()]());
    context_.checked = checked_.get();
  } else {
    FFR_RETURN_IF_ERROR(dataset.OpenReader(opt_.split, opt_.reader, &reader_));
  }
  if (reader_->size() == 0) return Status::InvalidArgument(dataset.split_dir(opt_.split) + ": split has no samples");
  context_.reader = reader_.get();
  context_.split = opt_.split;
  context_.hyp = opt_.hyp;
  context_.ultralytics8_hyp = opt_.ultralytics8_hyp;
  context_.augmentation = opt_.augmentation;
  context_.img_size = opt_.img_size;
  context_.decode_less = opt_.decode_less && !opt_.pixel_cache;
  FFR_RETURN_IF_ERROR(dataset.ExifApplied(opt_.split, &context_.exif_applied));
  context_.pixel_cache = opt_.pixel_cache;
  context_.decodes = &decodes_;

  const bool rect = opt_.rect || !opt_.training;
  const bool u8 = opt_.augmentation == Augmentation::kUltralytics8;
  if (rect && opt_.training && opt_.world_size > 1 && !u8)
    return Status::InvalidArgument("--rect trains on one rank only: the rect batches are not split between ranks");
  if (rect) {
    LabelIndex index;
    FFR_RETURN_IF_ERROR(dataset.LoadLabelIndex(opt_.split, &index));
    std::vector<int> w(index.size()), h(index.size());
    for (size_t i = 0; i < index.size(); ++i) {
      w[i] = static_cast<int>(index.width(i));
      h[i] = static_cast<int>(index.height(i));
    }
    rect_ = PlanRectBatches(w, h, opt_.batch_size, opt_.img_size, opt_.stride, opt_.training ? 0.0 : opt_.rect_pad);
    const auto& shapes = rect_.shapes;
    if (u8 && opt_.training && opt_.shuffle && std::equal(shapes.begin() + 1, shapes.end(), shapes.begin())) {
      // Ultralytics 8 shuffles rect batches of one shape (its get_dataloader turns shuffle off only for several):
      // the sampler's order, every batch of that shape.
      one_rect_shape_ = shapes[0];
      rect_ = RectBatches();
    } else if (opt_.world_size > 1) {  // each rank reads its share of the batches, never the whole split
      rect_ = u8 ? ContiguousRankShare(rect_, opt_.batch_size, opt_.rank, opt_.world_size)
                 : RankShare(rect_, opt_.batch_size, opt_.rank, opt_.world_size);
    }
    samples_per_epoch_ = static_cast<int64_t>(rect_.order.size());
  }
  if (!rect || one_rect_shape_) {
    SamplerOptions so;
    so.dataset_size = reader_->size();
    so.rank = opt_.rank;
    so.world_size = opt_.world_size;
    so.seed = opt_.seed;
    so.shuffle = opt_.shuffle;
    sampler_.reset(new DistributedSampler(so));
    samples_per_epoch_ = sampler_->samples_per_rank();
    // Ultralytics 8's mosaic training; rect training has no tiles, and a pixel cache holds load_image's output
    // (a read there decodes nothing, so there is nothing to share).
    if (u8 && !rect && opt_.decoded_store_bytes > 0 && !opt_.pixel_cache) {
      store_.reset(new DecodedImageStore(opt_.decoded_store_bytes));
      context_.store = store_.get();
    }
  }
  batches_per_epoch_ = opt_.drop_last ? samples_per_epoch_ / opt_.batch_size
                                      : (samples_per_epoch_ + opt_.batch_size - 1) / opt_.batch_size;

  // Rect batches can exceed img_size (pad 0.5 at 640 gives 672): size the ring for the largest.
  size_t pixels = static_cast<size_t>(opt_.img_size) * opt_.img_size;
  for (const auto& [h, w] : rect_.shapes) pixels = std::max(pixels, static_cast<size_t>(h) * w);
  if (one_rect_shape_) pixels = std::max(pixels, static_cast<size_t>(one_rect_shape_->first) * one_rect_shape_->second);
  slot_bytes_ = static_cast<size_t>(opt_.batch_size) * 3 * pixels;
  // A ring larger than the machine's memory would fail in an allocation that names nothing, or be
  // killed once touched: refused here, naming prefetch.
  const double ring_bytes = static_cast<double>(slot_bytes_) * opt_.prefetch;
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (memory > 0 && ring_bytes > memory)
    return Status::InvalidArgument("prefetch " + std::to_string(opt_.prefetch) + ": a ring of " +
                                   std::to_string(opt_.prefetch) + " batches of " + ByteSize(slot_bytes_) +
                                   " (--batch " + std::to_string(opt_.batch_size) + " at --img " +
                                   std::to_string(opt_.img_size) + ") needs more than this machine's " +
                                   ByteSize(static_cast<uint64_t>(memory)) + " of memory");
  slots_.resize(opt_.prefetch);
  for (Slot& s : slots_) {
    s.memory = static_cast<uint8_t*>(opt_.allocator->Allocate(slot_bytes_));
    if (!s.memory)
      return Status::IOError("cannot allocate a batch of " + std::to_string(opt_.batch_size) + " images at --img " +
                             std::to_string(opt_.img_size) + " (--batch " + std::to_string(opt_.batch_size) +
                             "): " + ByteSize(slot_bytes_) + " of memory for each of " +
                             std::to_string(opt_.prefetch) + " prefetched batches");
    s.targets.resize(opt_.batch_size);
    s.batch.meta.resize(opt_.batch_size);
  }
  for (int i = 0; i < opt_.workers; ++i) {
    try {
      workers_.emplace_back(&Impl::Worker, this, i);
    } catch (const std::system_error& e) {  // the process's thread limit; ~Impl stops those started
      return Status::IOError("cannot start loader thread " + std::to_string(i + 1) + " of workers " +
                             std::to_string(opt_.workers) + " (" + e.what() + "): use fewer workers");
    }
  }
  return Status::OK();
}

int Loader::Impl::BatchSize(int64_t batch) const {
  return static_cast<int>(std::min<int64_t>(opt_.batch_size, samples_per_epoch_ - batch * opt_.batch_size));
}

std::pair<int, int> Loader::Impl::BatchShape(int64_t batch) const {
  if (!rect_.shapes.empty()) return rect_.shapes[batch];
  return one_rect_shape_.value_or(std::pair<int, int>{opt_.img_size, opt_.img_size});
}

void Loader::Impl::Assign(Slot* slot, int64_t batch) {
  slot->assigned = batch;
  slot->handed_out = false;
  slot->error = Status::OK();
  if (batch < 0) return;
  const auto [h, w] = BatchShape(batch);
  Batch& b = slot->batch;
  b.epoch = epoch_;
  b.index = batch;
  b.size = BatchSize(batch);
  b.height = h;
  b.width = w;
  b.images = slot->memory;
  b.replaced_samples = 0;
  slot->remaining = b.size;
}

void Loader::Impl::StopEpoch(std::unique_lock<std::mutex>* lock) {
  end_position_ = next_position_;  // nothing more is claimed
  ready_cv_.wait(*lock, [&] { return in_flight_ == 0; });
}

std::vector<int64_t> Loader::Impl::EpochPositions(int64_t epoch) const {
  std::vector<int64_t> positions = sampler_ ? sampler_->EpochIndices(epoch) : rect_.order;
  if (!sample_weights_.empty()) {  // this rank's shard of the epoch's shuffled weighted draws
    const std::vector<int64_t> drawn = WeightedChoices(sample_weights_, opt_.seed, epoch);
    for (int64_t& p : positions) p = drawn[p];
  }
  return positions;
}

Status Loader::Impl::Start(int64_t epoch, int64_t first_batch) {
  if (first_batch < 0 || first_batch > batches_per_epoch_)
    return Status::InvalidArgument("batch " + std::to_string(first_batch) + " is outside the epoch's " +
                                   std::to_string(batches_per_epoch_) + " batches");
  std::vector<int64_t> positions = EpochPositions(epoch);
  std::vector<SampleDraws> draws;
  std::vector<int32_t> spans;  // samples per span of the decoded image store
  if (opt_.augmentation == Augmentation::kUltralytics8 && opt_.training && sampler_) {
    SampleDrawsPlan plan;
    plan.positions = positions;
    if (epoch > 0) plan.previous_positions = EpochPositions(epoch - 1);  // the buffers as that epoch left them
    plan.dataset_size = reader_->size();
    plan.batch_size = opt_.batch_size;
    plan.workers = opt_.ultralytics_workers;
    plan.mosaic = opt_.hyp.mosaic;
    plan.mixup = opt_.hyp.mixup;
    plan.buffer = opt_.mosaic_buffer;
    plan.cutmix = opt_.ultralytics8_hyp.cutmix;
    plan.seed = opt_.seed;
    plan.rank = static_cast<uint64_t>(opt_.rank);
    plan.epoch = epoch;
    draws = PlanSampleDraws(plan);
    if (store_) spans = PlanDecodeSpans(plan, first_batch * opt_.batch_size, &draws);
  }
  std::unique_lock<std::mutex> lock(mu_);
  StopEpoch(&lock);
  if (shutdown_) return Closed();
  epoch_ = epoch;
  started_ = true;
  epoch_error_ = Status::OK();
  positions_ = std::move(positions);
  draws_ = std::move(draws);
  if (store_) store_->Reset(std::move(spans));
  next_batch_ = first_batch;
  next_position_ = first_batch * opt_.batch_size;
  end_position_ = std::min<int64_t>(batches_per_epoch_ * opt_.batch_size, samples_per_epoch_);
  for (size_t k = 0; k < slots_.size(); ++k) {
    const int64_t batch = first_batch + static_cast<int64_t>(k);
    Assign(&slots_[batch % slots_.size()], batch < batches_per_epoch_ ? batch : -1);
  }
  lock.unlock();
  work_cv_.notify_all();
  return Status::OK();
}

Status Loader::Impl::SetSampleWeights(std::vector<double> weights) {
  if (!weights.empty()) {
    if (!sampler_) return Status::InvalidArgument("--image-weights: not with rect batches");
    if (static_cast<int64_t>(weights.size()) != reader_->size())
      return Status::InvalidArgument("image weights: " + std::to_string(weights.size()) + " weights for " +
                                     std::to_string(reader_->size()) + " samples");
    double sum = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
      if (!std::isfinite(weights[i]) || weights[i] < 0)
        return Status::InvalidArgument("image weights: sample " + std::to_string(i) + " has weight " +
                                       std::to_string(weights[i]));
      sum += weights[i];
    }
    if (!(sum > 0)) return Status::InvalidArgument("image weights: every weight is 0 (no sample has labels)");
  }
  sample_weights_ = std::move(weights);  // read by Start only, on the caller's thread
  return Status::OK();
}

void Loader::Impl::Produce(SampleBuilder* builder, int64_t position, uint8_t* dst, std::vector<NormBox>* targets,
                           ImageMeta* meta, Status* error, int64_t* replaced) {
  const int64_t batch = position / opt_.batch_size;
  int64_t index = positions_[position];
  // Ultralytics 8: the images the sample names, its plan's until one fails to load.
  const SampleDraws* draws = draws_.empty() ? nullptr : &draws_[position];
  std::optional<SampleDraws> replanned;
  for (int attempt = 0; attempt <= kMaxReplacements; ++attempt) {
    SampleError failure;
    bool ok;
    const auto [h, w] = BatchShape(batch);
    if (opt_.training) {
      SampleRandom rng({opt_.seed, static_cast<uint64_t>(epoch_), static_cast<uint64_t>(opt_.rank),
                        static_cast<uint64_t>(position), static_cast<uint64_t>(attempt)});
      ok = rect_.shapes.empty() && !one_rect_shape_ ? builder->BuildTraining(&rng, index, positions_, draws, dst, targets,
                                                                                 meta, &failure)
                                : builder->BuildRectTraining(&rng, index, h, w, dst, targets, meta, &failure);
    } else {
      ok = builder->BuildValidation(index, h, w, dst, targets, meta, &failure);
    }
    if (ok) return;
    if (failure.fatal) {
      *error = Status::Corruption("damaged pixel cache: " + failure.status.message() +
                                  "; `yolo-ffr cache --verify` rebuilds what is damaged");
      return;
    }
    if (!opt_.training) {  // validation scores the split as it is: another image's boxes would be wrong metrics
      *error = failure.status;
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++bad_samples_;
      if (reported_.insert(failure.index).second && opt_.on_bad_sample)
        opt_.on_bad_sample(reader_->Describe(failure.index) + ": " + failure.status.ToString());
    }
    ++*replaced;
    // A replacement drawn from the sample's own key: the same whatever the threads.
    SampleRandom pick({opt_.seed, static_cast<uint64_t>(epoch_), static_cast<uint64_t>(position),
                       static_cast<uint64_t>(attempt), 0xbadull});
    const int64_t replacement = positions_[pick.Below(positions_.size())];
    if (draws) {  // the failed image replaced wherever the sample names it (a tile, a mixed image, its own)
      if (!replanned) replanned = *draws;
      replanned->Replace(failure.index, replacement);
      draws = &*replanned;
      if (failure.index == index) index = replacement;
    } else {  // YOLOv5: another sample, its partners drawn anew by the next attempt
      index = replacement;
    }
    if (attempt == kMaxReplacements)
      *error = Status::Corruption(opt_.split + ": " + std::to_string(kMaxReplacements) +
                                  " corrupt samples in a row; last: " + failure.status.message());
  }
}

void Loader::Impl::Worker(int id) {
  if (!opt_.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(opt_.cpus[id % opt_.cpus.size()], &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }
  SampleBuilder builder(context_);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    Slot* slot = nullptr;
    int64_t position = 0;
    work_cv_.wait(lock, [&] {
      if (shutdown_) return true;
      if (next_position_ >= end_position_) return false;
      Slot& s = slots_[(next_position_ / opt_.batch_size) % slots_.size()];
      return s.assigned == next_position_ / opt_.batch_size;
    });
    if (shutdown_) return;
    position = next_position_++;
    const int64_t batch = position / opt_.batch_size;
    slot = &slots_[batch % slots_.size()];
    const int k = static_cast<int>(position % opt_.batch_size);
    const auto [h, w] = BatchShape(batch);
    uint8_t* dst = slot->memory + static_cast<size_t>(k) * 3 * h * w;
    ++in_flight_;
    lock.unlock();

    Status error;
    int64_t replaced = 0;
    Produce(&builder, position, dst, &slot->targets[k], &slot->batch.meta[k], &error, &replaced);
    if (store_ && !draws_.empty())
      for (int32_t span : draws_[position].Spans()) store_->Release(span);

    lock.lock();
    --in_flight_;
    slot->batch.replaced_samples += replaced;
    if (!error.ok() && slot->error.ok()) slot->error = error;
    if (--slot->remaining == 0 || in_flight_ == 0) ready_cv_.notify_all();
  }
}

Status Loader::Impl::Next(const Batch** batch) {
  std::unique_lock<std::mutex> lock(mu_);
  *batch = nullptr;
  if (!started_) return Status::InvalidArgument("Loader::Next called before Start");
  if (!epoch_error_.ok()) return epoch_error_;
  if (next_batch_ >= batches_per_epoch_) return Status::OK();
  Slot& slot = slots_[next_batch_ % slots_.size()];
  ready_cv_.wait(lock, [&] { return shutdown_ || (slot.assigned == next_batch_ && slot.remaining == 0); });
  if (shutdown_) return Closed();
  ++next_batch_;
  if (!slot.error.ok()) {  // the epoch ends here: nothing more is claimed, and the error stays (loader.h)
    epoch_error_ = slot.error;
    end_position_ = next_position_;
    return epoch_error_;
  }
  Batch& b = slot.batch;
  b.targets.clear();
  for (int k = 0; k < b.size; ++k)
    for (const NormBox& t : slot.targets[k])
      b.targets.insert(b.targets.end(),
                       {static_cast<float>(k), opt_.single_cls ? 0.f : static_cast<float>(t.cls), t.cx, t.cy, t.w, t.h});
  slot.handed_out = true;
  *batch = &b;
  return Status::OK();
}

Loader::Impl::Slot* Loader::Impl::HandedOutSlot(const Batch* batch) {
  Slot& slot = slots_[batch->index % slots_.size()];
  return slot.assigned == batch->index && slot.handed_out ? &slot : nullptr;
}

void Loader::Impl::Recycle(Slot* slot) {
  const int64_t next = slot->assigned + static_cast<int64_t>(slots_.size());
  Assign(slot, next < batches_per_epoch_ ? next : -1);
}

void Loader::Impl::Release(const Batch* batch) {
  if (!batch) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot* slot = HandedOutSlot(batch);
    if (!slot) return;
    Recycle(slot);
  }
  work_cv_.notify_all();
}

Status Loader::Impl::ReleaseKeepingImages(const Batch* batch, uint8_t** images, size_t* bytes) {
  *images = nullptr;
  *bytes = 0;
  if (!batch) return Status::OK();
  // Allocated without mu_: an allocator may call back into the caller (Python's memory hooks), which may
  // call this loader.
  auto* fresh = static_cast<uint8_t*>(opt_.allocator->Allocate(slot_bytes_));
  if (!fresh)
    return Status::IOError("cannot allocate a new buffer of " + ByteSize(batch->image_bytes()) +
                           " for the loader's batch " + std::to_string(batch->index) + " to hand its images over");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Slot* slot = HandedOutSlot(batch)) {
      *images = slot->memory;
      *bytes = slot_bytes_;
      slot->memory = fresh;
      fresh = nullptr;
      Recycle(slot);  // the slot's Batch, *batch, now describes the next one
    }
  }
  if (fresh) {  // the batch was not handed out
    opt_.allocator->Free(fresh, slot_bytes_);
    return Status::OK();
  }
  work_cv_.notify_all();
  return Status::OK();
}

Status Loader::Open(const Dataset& dataset, const LoaderOptions& options, std::unique_ptr<Loader>* out) {
  LoaderOptions resolved = options;
  FFR_RETURN_IF_ERROR(dataset.ResolveSplit(options.training, &resolved.split));
  std::unique_ptr<Impl> impl(new Impl(resolved));
  FFR_RETURN_IF_ERROR(impl->Init(dataset));
  out->reset(new Loader(std::move(impl)));
  return Status::OK();
}

Loader::Loader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Loader::~Loader() = default;
const std::string& Loader::split() const { return impl_->split(); }
int64_t Loader::dataset_size() const { return impl_->dataset_size(); }
int64_t Loader::samples_per_epoch() const { return impl_->samples_per_epoch(); }
int64_t Loader::batches_per_epoch() const { return impl_->batches_per_epoch(); }
bool Loader::shuffled() const { return impl_->shuffled(); }
Status Loader::Start(int64_t epoch, int64_t first_batch) { return impl_->Start(epoch, first_batch); }
Status Loader::SetSampleWeights(std::vector<double> weights) { return impl_->SetSampleWeights(std::move(weights)); }
Status Loader::Next(const Batch** batch) { return impl_->Next(batch); }
void Loader::Release(const Batch* batch) { impl_->Release(batch); }
Status Loader::ReleaseKeepingImages(const Batch* batch, uint8_t** images, size_t* bytes) {
  return impl_->ReleaseKeepingImages(batch, images, bytes);
}
int64_t Loader::bad_samples() const { return impl_->bad_samples(); }
DecodeStats Loader::decode_stats() const { return impl_->decode_stats(); }
void Loader::Close() { impl_->Close(); }

}  // namespace ffyolo
