// ffyolo.Loader: the C++ loader's batches as numpy arrays in YOLOv5 v7.0's collate format.
//
// A batch's images are handed to Python without a copy: the array views the loader's ring buffer,
// and dropping the array gives the buffer back (Loader::Release). When the loader needs a buffer
// that Python still holds (the caller kept batches longer than the ring is deep), the buffer is
// handed over instead (Loader::ReleaseKeepingImages): the array keeps its memory, the ring takes a
// new one. So a batch Python holds is never overwritten, and the loader never waits for Python.
#include "loader.h"

#include <unistd.h>

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "errors.h"
#include "ffyolo/batch.h"
#include "ffyolo/dataset.h"
#include "ffyolo/hyp.h"
#include "ffyolo/label_index.h"
#include "ffyolo/letterbox.h"
#include "ffyolo/loader.h"
#include "ffyolo/pixel_cache.h"
#include "gil.h"
#include "path_arg.h"
#include "spare_buffers.h"

namespace nb = nanobind;

namespace ffyolo::python {
namespace {

class PyLoader;

// Batch buffers from the default allocator, each announced to Python's `register(address, size)` when
// made and `unregister(address)` before it is freed (ffyolo.torch pins them for CUDA that way). A hook
// that raises is reported as unraisable and the buffer used all the same.
class HookedAllocator : public BatchAllocator {
 public:
  HookedAllocator(nb::object on_register, nb::object on_unregister)
      : register_(std::move(on_register)), unregister_(std::move(on_unregister)) {}
  ~HookedAllocator() override {
    HeldGil gil;
    register_.reset();
    unregister_.reset();
  }

  void* Allocate(size_t bytes) override {
    void* p = Default()->Allocate(bytes);
    if (p) Call(register_, p, &bytes);
    return p;
  }
  void Free(void* p, size_t bytes) override {
    Call(unregister_, p, nullptr);
    Default()->Free(p, bytes);
  }

  // Python's garbage collector sees the hooks (a hook may refer back to its loader) and may drop them.
  int Traverse(visitproc visit, void* arg) const {
    Py_VISIT(register_.ptr());
    Py_VISIT(unregister_.ptr());
    return 0;
  }
  void Clear() {
    register_.reset();
    unregister_.reset();
  }

 private:
  // hook(address, *size): every Python object made with the GIL held, which the loader may not hold.
  static void Call(const nb::object& hook, void* p, const size_t* size) {
    HeldGil gil;
    if (!hook.is_valid()) return;  // cleared by the garbage collector
    try {
      const auto address = reinterpret_cast<uintptr_t>(p);
      if (size) {
        hook(address, *size);
      } else {
        hook(address);
      }
    } catch (nb::python_error& e) {
      e.discard_as_unraisable(hook);
    }
  }
  nb::object register_, unregister_;
};

// The images of one batch while a numpy array views them.
struct HeldImages {
  PyLoader* loader;           // null once handed over, or the loader closed
  const Batch* batch;         // the loader's, while `loader` is set
  int64_t index;              // the batch's number in its epoch
  PyObject* owner = nullptr;  // the capsule that owns this, which the array holds
  uint8_t* owned = nullptr;   // after a hand-over: the memory, freed through `allocator`
  size_t bytes = 0;
  std::shared_ptr<BatchAllocator> allocator;  // the loader's, which outlives it while held
};

// hyp.yaml's text from a dict of hyperparameters, each a number (Python's or numpy's), but for Ultralytics
// 8's own keys, which go to *u8; Hyp::Parse reads it and names unknown keys.
std::string HypYaml(const nb::dict& hyp, Ultralytics8Hyp* u8) {
  std::string yaml;
  for (auto [key, value] : hyp) {
    const std::string name = nb::cast<std::string>(nb::str(key));
    double number = 0;
    if (!nb::try_cast<double>(value, number))
      throw nb::value_error(("hyp['" + name + "'] = " + nb::cast<std::string>(nb::repr(value)) + ": not a number")
                                .c_str());
    if (u8->Set(name, number)) continue;
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", number);
    yaml += name + ": " + text + "\n";
  }
  return yaml.empty() ? "{}" : yaml;  // no lines is no mapping to YAML: {} is the empty one, every key defaulted
}

// `hyp`: a dict (Ultralytics 8's cutmix and bgr into *u8) or a hyp YAML's path (YOLOv5's keys alone).
Hyp LoadHyp(const nb::object& hyp, Ultralytics8Hyp* u8) {
  Hyp out;
  if (hyp.is_none()) return out;
  ffr::Status s;
  PathArg path;
  if (nb::isinstance<nb::dict>(hyp)) {
    s = Hyp::Parse(HypYaml(nb::cast<nb::dict>(hyp), u8), "hyp", &out);
  } else if (nb::try_cast(hyp, path)) {
    s = Hyp::Load(path.path, &out);
  } else {
    throw nb::type_error(("hyp=" + nb::cast<std::string>(nb::repr(hyp)) +
                          ": expected a dict of hyperparameters or a hyp YAML's path")
                             .c_str());
  }
  ThrowIfError(s);
  return out;
}

// Every loader made, for StopEveryLoader: each one is registered as it is opened, with or without the GIL.
class Registry {
 public:
  static Registry& Get() {
    static Registry* registry = new Registry;  // never destroyed: StopEveryLoader runs at exit
    return *registry;
  }
  std::shared_ptr<Loader> Add(std::unique_ptr<Loader> opened) {
    std::shared_ptr<Loader> loader = std::move(opened);
    std::lock_guard<std::mutex> lock(mu_);
    loaders_.erase(std::remove_if(loaders_.begin(), loaders_.end(), [](const auto& l) { return l.expired(); }),
                   loaders_.end());
    loaders_.push_back(loader);
    return loader;
  }
  void StopAll() {
    std::vector<std::weak_ptr<Loader>> loaders;
    {
      std::lock_guard<std::mutex> lock(mu_);
      loaders.swap(loaders_);
    }
    for (const std::weak_ptr<Loader>& l : loaders) {
      if (const std::shared_ptr<Loader> loader = l.lock()) loader->Close();
    }
  }

 private:
  std::mutex mu_;
  std::vector<std::weak_ptr<Loader>> loaders_;
};

// Buffers Python let go of after a hand-over, kept for the next: one covers a loop holding its last
// batch across each epoch's end.
constexpr size_t kSpareBuffers = 1;

class PyLoader {
 public:
  PyLoader(const PathArg& data, const std::optional<std::string>& split, int img, int batch, int workers, int rank,
           int world_size, bool augment, bool rect, const nb::object& hyp, const std::optional<std::string>& cache,
           uint64_t seed, bool shuffle, bool drop_last, int prefetch, bool single_cls,
           const std::string& augmentation, int ultralytics_workers,
           const std::optional<std::pair<nb::object, nb::object>>& memory_hooks)
      : pid_(getpid()), bytes_(data.bytes) {
    if (img <= 0 || batch <= 0 || workers <= 0 || prefetch <= 0 || ultralytics_workers <= 0)
      throw nb::value_error("img, batch, workers, prefetch and ultralytics_workers must be positive");
    if (world_size <= 0 || rank < 0 || rank >= world_size)
      throw nb::value_error(("rank=" + std::to_string(rank) + " must be in [0, world_size=" +
                             std::to_string(world_size) + ")")
                                .c_str());
    if (cache && *cache != "ram" && *cache != "disk")
      throw nb::value_error(("cache='" + *cache + "': use None, 'ram' or 'disk'").c_str());
    options_.split = split.value_or("");
    options_.training = augment;
    options_.rect = rect;
    options_.img_size = img;
    options_.batch_size = batch;
    options_.workers = workers;
    options_.rank = rank;
    options_.world_size = world_size;
    options_.seed = seed;
    options_.shuffle = shuffle;
    options_.drop_last = drop_last;
    options_.prefetch = prefetch;
    options_.single_cls = single_cls;
    options_.hyp = LoadHyp(hyp, &options_.ultralytics8_hyp);
    ThrowIfError(ParseAugmentation(augmentation, &options_.augmentation));
    options_.ultralytics_workers = ultralytics_workers;
    std::shared_ptr<BatchAllocator> source;
    if (memory_hooks) {
      auto hooked = std::make_shared<HookedAllocator>(memory_hooks->first, memory_hooks->second);
      hooked_ = hooked.get();
      source = std::move(hooked);
    } else {
      source = std::shared_ptr<BatchAllocator>(BatchAllocator::Default(), [](BatchAllocator*) {});
    }
    allocator_ = std::make_shared<SpareBuffers>(std::move(source), kSpareBuffers);
    options_.allocator = allocator_.get();
    options_.on_bad_sample = [this](const std::string& report) {
      std::lock_guard<std::mutex> lock(reports_mu_);
      bad_reports_.push_back(report);
    };
    ffr::Status s;
    bool opened = false;
    {
      ReleasedGil released;
      s = Dataset::Open(data.path, &dataset_);
      opened = s.ok();
      if (opened) s = dataset_->ResolveSplit(options_.training, &options_.split);
    }
    if (opened && !s.ok()) RaiseSplitError(s);
    ThrowIfError(s);
    files_ = dataset_->path() + "/" + options_.split + "/";
    manifest_crc_ = dataset_->ManifestCrc();
    std::shared_ptr<Loader> loader;
    {
      ReleasedGil released;
      std::unique_ptr<Loader> opened;
      if (cache) s = UsePixelCache(*dataset_, *cache, &options_, "read without the cache (cache=None)");
      if (s.ok()) s = dataset_->LoadLabelIndex(options_.split, &index_);
      if (s.ok()) s = Loader::Open(*dataset_, options_, &opened);
      if (s.ok()) loader = Registry::Get().Add(std::move(opened));
    }
    ThrowIfError(s);
    loader_ = std::move(loader);
  }

  // Garbage collected while Python holds batches it could not hand over (no memory for the ring's new
  // buffers): the loader is left running, never freed, rather than free memory that arrays still view.
  ~PyLoader() {
    try {
      Close();
    } catch (...) {
      for (auto& [index, held] : held_) held->loader = nullptr;
      new std::shared_ptr<Loader>(std::move(loader_));
      dataset_.release();
    }
  }

  // Hands every batch Python holds over, then stops the workers. Needs the GIL. Safe against every call
  // of another thread, and a memory hook's: a next() waiting for a batch raises ValueError.
  void Close() {
    std::shared_ptr<Loader> loader = loader_;
    if (!loader) return;
    HandOver(*loader, INT64_MAX);
    if (loader_ != loader) return;  // closed meanwhile, by a memory hook or another thread
    loader_.reset();
    std::unique_ptr<Dataset> dataset = std::move(dataset_);
    {
      ReleasedGil released;
      loader->Close();
      loader.reset();  // frees the ring, unless a call of another thread still holds the loader
      dataset.reset();
    }
    allocator_->Drain();
  }
  bool closed() const { return loader_ == nullptr; }

  int64_t size() const { return Get()->batches_per_epoch(); }
  int64_t epoch() const { return epoch_; }
  int64_t batch_index() const { return next_batch_; }
  const std::string& split() const { return options_.split; }
  int batch_size() const { return options_.batch_size; }
  int64_t samples() const { return Get()->samples_per_epoch(); }
  bool shuffled() const { return Get()->shuffled(); }
  int64_t bad_samples() const { return Get()->bad_samples(); }
  nb::dict decode_stats() const {
    const DecodeStats stats = Get()->decode_stats();
    nb::dict d;
    d["decodes"] = stats.decodes;
    d["store_hits"] = stats.store_hits;
    d["store_full"] = stats.store_full;
    d["peak_images"] = stats.peak_images;
    d["peak_bytes"] = stats.peak_bytes;
    return d;
  }
  nb::typed<nb::list, nb::str> bad_sample_reports() const {
    std::vector<std::string> reports;
    {
      std::lock_guard<std::mutex> lock(reports_mu_);
      reports = bad_reports_;
    }
    nb::typed<nb::list, nb::str> out;
    for (const std::string& report : reports) out.append(Text(report));
    return out;
  }

  // The next call of __next__ starts `epoch` from its first batch.
  void SetEpoch(int64_t epoch) {
    CheckEpoch("epoch", epoch);
    Restart(epoch, 0);
  }

  // Where the loader stands, and what its batches are made from (Made()).
  nb::dict StateDict() const {
    nb::dict d = Made();
    d["epoch"] = epoch_;
    d["batch"] = next_batch_;
    return d;
  }

  // Resumes at a state of a loader made from the same: of another, the batches would not be the ones the
  // uninterrupted run gives, so it is refused naming what differs.
  void LoadStateDict(const nb::dict& d) {
    for (auto [key, mine] : Made()) {
      const std::string name = nb::cast<std::string>(key);
      if (!d.contains(key))
        Raise(PyExc_ValueError, "state_dict has no '" + name + "': a state of an older ffyolo, which did not record "
                                "all its batches depend on, cannot be checked against this loader (set_epoch(epoch) "
                                "starts its epoch again instead)");
      RefuseIfOther(name, mine, d[key]);
    }
    if (!d.contains("epoch") || !d.contains("batch")) throw nb::value_error("state_dict has no 'epoch' or 'batch'");
    RefuseUnknownKeys("state_dict", d, Made(), {"epoch", "batch"});
    const int64_t epoch = StateInteger(d, "epoch"), batch = StateInteger(d, "batch");
    CheckEpoch("state_dict's epoch", epoch);
    if (batch < 0 || batch > size())
      throw nb::value_error(("state_dict's batch " + std::to_string(batch) + " is out of range (" +
                             std::to_string(size()) + " batches an epoch)")
                                .c_str());
    Restart(epoch, batch);
  }

  // Epochs count up from here one at a time: a bound far above any run keeps epoch + 1 from wrapping.
  static constexpr int64_t kMaxEpoch = std::numeric_limits<int32_t>::max();
  static void CheckEpoch(const std::string& what, int64_t epoch) {
    if (epoch < 0 || epoch > kMaxEpoch)
      throw nb::value_error((what + " " + std::to_string(epoch) + " is out of range [0, " +
                             std::to_string(kMaxEpoch) + "]")
                                .c_str());
  }

  // A key this loader does not know names something the state was made with that this version cannot
  // check: refused, not ignored.
  static void RefuseUnknownKeys(const std::string& what, const nb::dict& theirs, const nb::dict& mine,
                                std::initializer_list<const char*> also_known = {}) {
    for (auto [key, value] : theirs) {
      bool known = mine.contains(key);
      for (const char* name : also_known) known = known || nb::str(name).equal(key);
      if (!known)
        Raise(PyExc_ValueError, what + " has " + nb::cast<std::string>(nb::repr(key)) +
                                    ", which this loader does not make its batches from");
    }
  }

  // What the batches are made from, which a state names: the dataset (its manifest's CRC-32, which a copy
  // or a move keeps and a pack changes) and every option that changes a batch; not workers nor prefetch.
  nb::dict Made() const {
    nb::dict d;
    d["dataset"] = manifest_crc_;
    d["split"] = options_.split;
    d["seed"] = options_.seed;
    d["batch_size"] = options_.batch_size;
    d["img"] = options_.img_size;
    d["rank"] = options_.rank;
    d["world_size"] = options_.world_size;
    d["augment"] = options_.training;
    d["rect"] = options_.rect;
    d["shuffle"] = options_.shuffle;
    d["drop_last"] = options_.drop_last;
    d["single_cls"] = options_.single_cls;
    d["pixel_cache"] = options_.pixel_cache;
    d["augmentation"] = AugmentationName(options_.augmentation);
    d["ultralytics_workers"] = options_.ultralytics_workers;
    d["mosaic_buffer"] = options_.mosaic_buffer;
    nb::dict hyp;
    for (const auto& [key, value] : options_.hyp.Values()) hyp[key.c_str()] = value;
    if (options_.augmentation == Augmentation::kUltralytics8)
      for (const auto& [key, value] : options_.ultralytics8_hyp.Values()) hyp[key.c_str()] = value;
    d["hyp"] = hyp;
    return d;
  }

  // Raises naming `what` (e.g. "hyp['degrees']") when a state's `theirs` is not this loader's `mine`; dicts
  // are compared key by key.
  static void RefuseIfOther(const std::string& what, nb::handle mine, nb::handle theirs) {
    if (nb::isinstance<nb::dict>(mine) && nb::isinstance<nb::dict>(theirs)) {
      const nb::dict their_dict = nb::borrow<nb::dict>(theirs);
      RefuseUnknownKeys("state_dict's " + what, their_dict, nb::borrow<nb::dict>(mine));
      for (auto [key, value] : nb::borrow<nb::dict>(mine)) {
        const std::string entry = what + "[" + nb::cast<std::string>(nb::repr(key)) + "]";
        if (!their_dict.contains(key)) Raise(PyExc_ValueError, "state_dict has no " + entry);
        RefuseIfOther(entry, value, their_dict[key]);
      }
      return;
    }
    if (!mine.equal(theirs))
      Raise(PyExc_ValueError, "state_dict is of another loader: its " + what + " is " +
                                  nb::cast<std::string>(nb::repr(theirs)) + ", this loader's " +
                                  nb::cast<std::string>(nb::repr(mine)));
  }

  // An integer of a state dict: what else it holds (2.0, '1') is refused naming it, not met as std::bad_cast.
  static int64_t StateInteger(const nb::dict& d, const char* key) {
    int64_t value = 0;
    if (nb::isinstance<nb::bool_>(d[key]) || !nb::try_cast(d[key], value))
      throw nb::value_error((std::string("state_dict's ") + key + " is " + nb::cast<std::string>(nb::repr(d[key])) +
                             ": not an integer")
                                .c_str());
    return value;
  }

  // The next batch as (imgs, targets, paths, shapes); StopIteration after the epoch's last, and the
  // epoch after it comes next.
  //
  // Other Python code may run in the middle (a memory hook, or another thread while the GIL is released)
  // and close the loader: `loader` keeps it alive, its calls then return Aborted, and the checks of Get()
  // after them raise ValueError.
  nb::tuple Next() {
    const std::shared_ptr<Loader> loader = Get();
    if (iterating_ == std::this_thread::get_id())
      throw std::runtime_error("next() of this ffyolo.Loader called from inside its own next(), by a memory hook: "
                               "a hook may not iterate the loader that calls it");
    if (iterating_ != std::thread::id()) throw std::runtime_error("another thread is iterating this ffyolo.Loader");
    iterating_ = std::this_thread::get_id();
    struct Done {
      std::thread::id& iterating;
      ~Done() { iterating = std::thread::id(); }
    } done{iterating_};
    if (next_batch_ >= loader->batches_per_epoch()) EndEpoch();
    ffr::Status s;
    if (!started_) {
      HandOver(*loader, INT64_MAX);  // Start makes every batch handed out invalid
      {
        ReleasedGil released;
        s = loader->Start(epoch_, next_batch_);
      }
      Get();
      ThrowIfError(s);
      started_ = true;
    }
    // The ring slot the next batch fills is free once the batch that many before it is: hand that over.
    HandOver(*loader, next_batch_ - options_.prefetch);
    const Batch* b = nullptr;
    {
      ReleasedGil released;
      s = loader->Next(&b);
    }
    Get();
    ThrowIfError(s);
    if (!b) EndEpoch();
    ++next_batch_;
    return Wrap(b);
  }

  HookedAllocator* hooks() const { return hooked_; }

  // Called by an array's capsule when Python lets go of a batch's images. Needs the GIL.
  void Dropped(HeldImages* held) {
    held_.erase(held->index);
    if (loader_) loader_->Release(held->batch);
  }

 private:
  const std::shared_ptr<Loader>& Get() const {
    if (getpid() != pid_)
      throw std::runtime_error("this ffyolo.Loader was made in process " + std::to_string(pid_) +
                               " and cannot be used in process " + std::to_string(getpid()) +
                               " after fork(): make a new Loader in the child");
    if (!loader_) throw nb::value_error("this ffyolo.Loader is closed");
    return loader_;
  }

  [[noreturn]] void EndEpoch() {
    Restart(epoch_ + 1, 0);
    throw nb::stop_iteration();
  }

  void Restart(int64_t epoch, int64_t batch) {
    epoch_ = epoch;
    next_batch_ = batch;
    started_ = false;
  }

  // Hands over the images of every held batch numbered `last` or less: their arrays keep their
  // memory, and the loader's ring slots get new buffers. Each batch leaves held_ first, its capsule kept:
  // a new buffer's memory hook may let other Python code run, which may drop the array or close the loader
  // (handing over the other batches itself).
  void HandOver(Loader& loader, int64_t last) {
    while (!held_.empty() && held_.begin()->first <= last) {
      HeldImages* held = held_.begin()->second;
      held_.erase(held_.begin());
      const nb::object owner = nb::borrow(held->owner);
      const ffr::Status s = loader.ReleaseKeepingImages(held->batch, &held->owned, &held->bytes);
      if (!s.ok()) {
        held_[held->index] = held;
        PyErr_SetString(PyExc_MemoryError, (s.message() + ": Python still holds batch " +
                                            std::to_string(held->index) + " and the loader needs its buffer; "
                                            "let go of old batches, or copy the ones to keep")
                                               .c_str());
        throw nb::python_error();
      }
      held->allocator = allocator_;
      held->loader = nullptr;
    }
  }

  // The batch as Python's; it joins held_ last, after a check that making the objects, which may run
  // other Python code, left the loader open. Until then its capsule releases the batch if dropped.
  nb::tuple Wrap(const Batch* b) {
    auto* held = new HeldImages{this, b, b->index};
    nb::capsule owner(held, [](void* p) noexcept {
      auto* h = static_cast<HeldImages*>(p);
      if (h->owned) {
        h->allocator->Free(h->owned, h->bytes);
      } else if (h->loader) {
        h->loader->Dropped(h);
      }
      delete h;
    });
    held->owner = owner.ptr();
    const size_t shape[4] = {static_cast<size_t>(b->size), 3, static_cast<size_t>(b->height),
                             static_cast<size_t>(b->width)};
    nb::object images = nb::cast(nb::ndarray<nb::numpy, uint8_t, nb::ndim<4>>(b->images, 4, shape, owner));
    const size_t n = b->num_targets();
    auto* rows = new float[std::max<size_t>(n * 6, 1)];
    std::copy(b->targets.begin(), b->targets.end(), rows);
    nb::capsule rows_owner(rows, [](void* p) noexcept { delete[] static_cast<float*>(p); });
    const size_t target_shape[2] = {n, 6};
    nb::object targets = nb::cast(nb::ndarray<nb::numpy, float, nb::ndim<2>>(rows, 2, target_shape, rows_owner));
    nb::list paths, shapes;
    for (int k = 0; k < b->size; ++k) {
      const ImageMeta& m = b->meta[k];
      const std::string_view file = index_.file_name(static_cast<size_t>(m.dataset_index));
      paths.append(PathObject(files_ + std::string(file), bytes_));
      if (m.mosaic) {
        shapes.append(nb::none());
      } else {  // YOLOv5's (h0, w0), ((h / h0, w / w0), (padw, padh))
        shapes.append(nb::make_tuple(nb::make_tuple(m.orig_height, m.orig_width),
                                     nb::make_tuple(nb::make_tuple(m.ratio_h, m.ratio_w),
                                                    nb::make_tuple(m.pad_w, m.pad_h))));
      }
    }
    nb::tuple batch = nb::make_tuple(images, targets, nb::tuple(paths), nb::tuple(shapes));
    Get();
    held_[b->index] = held;
    return batch;
  }

  pid_t pid_;
  bool bytes_;  // the dataset's path was given as bytes: the batches' paths are bytes too
  LoaderOptions options_;
  std::shared_ptr<SpareBuffers> allocator_;  // before loader_: it frees the ring through it
  HookedAllocator* hooked_ = nullptr;        // the source of allocator_, when it calls memory hooks
  std::unique_ptr<Dataset> dataset_;
  std::string files_;  // the split's folder in the dataset, ending in '/': each path's start
  std::string manifest_crc_;  // the dataset's identity, which a state names
  LabelIndex index_;
  // Shared with the calls under way, which may outlive close() (and meanwhile see Aborted).
  std::shared_ptr<Loader> loader_;
  int64_t epoch_ = 0, next_batch_ = 0;
  bool started_ = false;
  std::thread::id iterating_;  // the thread inside next(), if one is
  std::map<int64_t, HeldImages*> held_;  // the batches whose images Python holds, by number
  mutable std::mutex reports_mu_;
  std::vector<std::string> bad_reports_;
};

int TraverseLoader(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  const HookedAllocator* hooks = nb::inst_ptr<PyLoader>(self)->hooks();
  return hooks ? hooks->Traverse(visit, arg) : 0;
}

int ClearLoader(PyObject* self) {
  if (HookedAllocator* hooks = nb::inst_ptr<PyLoader>(self)->hooks()) hooks->Clear();
  return 0;
}

PyType_Slot kLoaderSlots[] = {{Py_tp_traverse, reinterpret_cast<void*>(TraverseLoader)},
                              {Py_tp_clear, reinterpret_cast<void*>(ClearLoader)},
                              {0, nullptr}};

}  // namespace

void StopEveryLoader() {
  ReleasedGil released;
  Registry::Get().StopAll();
}

void BindLoader(nb::module_& m) {
  nb::class_<PyLoader>(m, "Loader", nb::type_slots(kLoaderSlots), R"(Batches of a packed dataset's split for YOLOv5, made by ffyolo's C++ loader.

Loader(data, split=None, *, img=640, batch=16, workers=8, rank=0, world_size=1, augment=True,
       rect=False, hyp=None, cache=None, seed=0, shuffle=True, drop_last=False, prefetch=4,
       single_cls=False, augmentation='yolov5', ultralytics_workers=8, memory_hooks=None)

Iterating gives (imgs, targets, paths, shapes) per batch, YOLOv5 v7.0's collate format as numpy:
imgs uint8 (B, 3, H, W) RGB, viewing the loader's memory (no copy; torch.from_numpy shares it);
targets float32 (n, 6): image index in the batch, class, x, y, w, h normalized; paths, one per
image; shapes, None for a mosaic, else ((h0, w0), ((h / h0, w / w0), (padw, padh))).

augment=True trains (mosaic, random perspective, HSV, flips, mixup by `hyp`); augment=False
gives validation's letterboxed rectangular batches. rect=True trains on rectangular batches
without mosaic (one rank; in the ultralytics8 mode any number, and batches all of one shape
shuffled, as Ultralytics 8 does). split is one split or several joined by '+' or ',' (read as one, as
the tools' --split); it defaults to the data YAML's train: (augment) or val: recorded at pack time,
else train* or val*. hyp is a hyp YAML path or a dict of its keys (keys left out, or hyp=None: those
of hyp.scratch-low). cache='ram' or 'disk' reads the split's pixel cache, built first when missing,
instead of decoding JPEGs. augmentation='ultralytics8' makes the batches as the `ultralytics`
package 8.4 (YOLOv8/YOLO11) makes them (docs/loader.md, "Ultralytics 8's augmentation"): mosaic
tiles from the buffers of `ultralytics_workers` DataLoader workers (its `workers`), load_image's
sizes, validation boxes and (padw, padh) at the letterbox's rounded left and top; its pixel cache
holds load_image's images as Ultralytics 8 makes them, and cache='ram' takes mosaic tiles from the
whole split, as Ultralytics' cache='ram' does (no buffer); a hyp dict may add its cutmix (CutMix's
probability) and bgr (that of a training image's planes B, G, R instead of R, G, B), which the
state's hyp then names.
rank and world_size give this
process its share of each epoch, as torch's DistributedSampler (validation: every world_size-th
batch, so that the ranks read every sample once; in the ultralytics8 mode validation and rect
training read runs of consecutive batches, as its ContiguousDistributedSampler). Every sample's randomness comes from (seed,
epoch, rank, position): the batches do not depend on `workers`.

A batch stays intact while Python holds it: the loader takes new memory rather than reuse it.
Iteration stops at the epoch's end and the next iteration runs the next epoch; set_epoch(e)
starts epoch e, and state_dict()/load_state_dict() resume exactly mid-epoch. Waiting for a
batch releases the GIL. After os.fork() a Loader raises RuntimeError in the child.

memory_hooks, a pair (register, unregister), is called as register(address, size) for each batch
buffer the loader allocates and unregister(address) before it frees one (ffyolo.torch pins them so
for CUDA copies).)")
      .def(
          "__init__",
          [](PyLoader* self, const PathArg& data, const std::optional<std::string>& split, int img,
             int batch, int workers, int rank, int world_size, bool augment, bool rect, const nb::object& hyp,
             const std::optional<std::string>& cache, uint64_t seed, bool shuffle, bool drop_last, int prefetch,
             bool single_cls, const std::string& augmentation, int ultralytics_workers,
             const std::optional<std::pair<nb::object, nb::object>>& memory_hooks) {
            new (self) PyLoader(data, split, img, batch, workers, rank, world_size, augment, rect, hyp, cache,
                                seed, shuffle, drop_last, prefetch, single_cls, augmentation, ultralytics_workers,
                                memory_hooks);
          },
          nb::arg("data"), nb::arg("split") = nb::none(), nb::kw_only(), nb::arg("img") = 640, nb::arg("batch") = 16,
          nb::arg("workers") = 8, nb::arg("rank") = 0, nb::arg("world_size") = 1, nb::arg("augment") = true,
          nb::arg("rect") = false, nb::arg("hyp") = nb::none(), nb::arg("cache") = nb::none(), nb::arg("seed") = 0,
          nb::arg("shuffle") = true, nb::arg("drop_last") = false, nb::arg("prefetch") = 4,
          nb::arg("single_cls") = false, nb::arg("augmentation") = "yolov5", nb::arg("ultralytics_workers") = 8,
          nb::arg("memory_hooks") = nb::none(), nb::call_guard<InCall>())
      .def("__len__", &PyLoader::size, "The batches of an epoch (this rank's).")
      .def("__iter__", [](nb::handle self) { return self; })
      .def("__next__", &PyLoader::Next, nb::call_guard<InCall>())
      .def("set_epoch", &PyLoader::SetEpoch, nb::arg("epoch"),
           "The next iteration runs `epoch` from its first batch (torch's DistributedSampler.set_epoch).")
      .def("state_dict", &PyLoader::StateDict,
           "Where the loader stands (the epoch and the next batch) and what its batches are made from: the "
           "dataset's identity and the options a resume must share.")
      .def("load_state_dict", &PyLoader::LoadStateDict, nb::arg("state"), nb::call_guard<InCall>(),
           "The next iteration continues where `state` (from state_dict) stood: the batches an uninterrupted "
           "run would have given. ValueError, naming what differs, for the state of a loader made from another "
           "dataset or with other options, or of an older ffyolo, which recorded less.")
      .def_prop_ro("epoch", &PyLoader::epoch, "The epoch the next batch belongs to.")
      .def_prop_ro("batch_index", &PyLoader::batch_index, "The number of the next batch in its epoch.")
      .def_prop_ro("split", &PyLoader::split, "The split read, e.g. 'train2017'.")
      .def_prop_ro("batch_size", &PyLoader::batch_size, "Images per batch (the last one may have fewer).")
      .def_prop_ro("samples", &PyLoader::samples, "The samples of an epoch (this rank's).")
      .def_prop_ro("shuffled", &PyLoader::shuffled,
                   "Whether each epoch shuffles its samples: shuffle in training, but not over rect batches of "
                   "several shapes.")
      .def_prop_ro("bad_samples", &PyLoader::bad_samples,
                   "Corrupt samples met so far (training replaces each by another; validation raises).")
      .def_prop_ro("bad_sample_reports", &PyLoader::bad_sample_reports,
                   "What was wrong with each corrupt sample: the split, the sample, its file and why.")
      .def_prop_ro("decode_stats", &PyLoader::decode_stats,
                   "Since the loader was made: images decoded ('decodes'), and the decoded image store's reads "
                   "served ('store_hits'), reads it was too full to hold ('store_full'), and most images and "
                   "bytes it held ('peak_images', 'peak_bytes'); the store is Ultralytics 8's mosaic training's.")
      .def_prop_ro("closed", &PyLoader::closed, "Whether close() was called.")
      .def("close", &PyLoader::Close, nb::call_guard<InCall>(),
           "Stops the worker threads; batches Python still holds keep their memory.")
      .def("__enter__", [](nb::handle self) { return self; })
      .def("__exit__", [](PyLoader& l, nb::args) { l.Close(); }, nb::call_guard<InCall>())
      .def("__repr__", [](const PyLoader& l) {
        if (l.closed()) return std::string("<ffyolo.Loader (closed)>");
        return "<ffyolo.Loader " + l.split() + ": " + std::to_string(l.size()) + " batches of " +
               std::to_string(l.batch_size()) + ", epoch " + std::to_string(l.epoch()) + ">";
      });
  m.def(
      "load_image_size",
      [](int w0, int h0, int img, const std::string& augmentation) {
        if (w0 <= 0 || h0 <= 0 || img <= 0) throw nb::value_error("w0, h0 and img must be positive");
        Augmentation mode;
        ThrowIfError(ParseAugmentation(augmentation, &mode));
        const cv::Size size = LoadResizeSize(w0, h0, img, mode);
        return std::make_pair(size.width, size.height);
      },
      nb::arg("w0"), nb::arg("h0"), nb::arg("img"), nb::arg("augmentation") = "yolov5",
      "The (w, h) load_image resizes a w0 x h0 image to at `img` pixels, by `augmentation`'s rule (before a "
      "letterbox or a mosaic).");
}

}  // namespace ffyolo::python
