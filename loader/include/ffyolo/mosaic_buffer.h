// Ultralytics 8's choice of images: its Mosaic takes the other three tiles
// from BaseDataset.buffer, the images load_image read most recently (not
// from the whole dataset, as YOLOv5 does), and MixUp a random image of the
// dataset, mosaicked from the same buffer. Which images a sample names
// depends on every load before it, so the loader plans an epoch's choices up
// front, in Ultralytics' load order, on the caller's thread; the pixels are
// then made in any order by any number of threads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_set>
#include <vector>

namespace ffyolo {

// BaseDataset.buffer with load_image's rule.
class MosaicBuffer {
 public:
  // BaseDataset.max_buffer_length: min(n, batch * 8, 1000) for a dataset of
  // n images and batch_size per rank.
  static size_t MaxLength(int64_t dataset_size, int batch_size);
  explicit MosaicBuffer(size_t max_length) : max_length_(max_length) {}

  // load_image(index): an image the buffer holds is served from memory and
  // changes nothing; any other is read (true returned), appended, and then the
  // oldest dropped once the buffer holds max_length (if it holds more than
  // one), so that a load leaves at most max_length - 1.
  bool Load(int64_t index);
  // random.choices(buffer)'s pick for a uniform u in [0, 1): entry floor(u * size).
  int64_t Choose(double u) const;
  const std::deque<int64_t>& entries() const { return entries_; }

 private:
  size_t max_length_;
  std::deque<int64_t> entries_;  // oldest first
  std::unordered_set<int64_t> held_;
};

// An image a BaseMixTransform mixes into the sample (MixUp's, CutMix's): any
// image of the dataset, through the same Mosaic (tiles from the buffer) and
// RandomPerspective as the sample's own.
struct MixedImage {
  bool applied = false;              // the transform's p check passed
  int64_t index = -1;                // when applied
  bool mosaic = false;               // whether it is mosaicked
  std::array<int64_t, 3> partners{};  // its tiles 1..3, when mosaic
};

// One load_image call of a sample.
struct ImageLoad {
  int64_t index = -1;
  // Its worker's buffer did not hold the image: Ultralytics read (decoded) it. Without the buffer (cache='ram'),
  // every tile is one, as no buffer holds it.
  bool read = false;
  // The decoded image store's span it belongs to (PlanDecodeSpans); -1: none planned.
  int32_t span = -1;
};

// The images one training sample names, Ultralytics 8 style.
struct SampleDraws {
  bool mosaic = false;                // its own image in tile 0, no shuffle
  std::array<int64_t, 3> partners{};  // tiles 1..3, when mosaic
  MixedImage mixup, cutmix;           // v8_transforms applies MixUp, then CutMix
  // Every image above, in the order Ultralytics loads them (its own, its tiles, then MixUp's and CutMix's
  // images and their tiles).
  std::vector<ImageLoad> loads;

  // The span of the sample's first load of `index`; -1 when it loads no such image or none was planned.
  int32_t SpanOf(int64_t index) const;
  // The spans its loads belong to, each once: a sample reads a span's image however often it loads it.
  std::vector<int32_t> Spans() const;
  // A replacement for an image that failed to load: every use of `index` (its own image, a tile, a mixed image)
  // names `by` instead, decoded by the sample itself (no span), so that one bad image ends only its own use.
  void Replace(int64_t index, int64_t by);
};

struct SampleDrawsPlan {
  std::vector<int64_t> positions;           // the epoch's dataset index per sample position (this rank)
  std::vector<int64_t> previous_positions;  // the epoch before's (empty for the first): fills the buffers
  int64_t dataset_size = 0;
  int batch_size = 16;  // per rank
  // Ultralytics' DataLoader workers: each holds its own dataset copy and so
  // its own buffer, and makes whole batches, batch b in worker b % workers.
  int workers = 8;
  double mosaic = 1, mixup = 0, cutmix = 0;  // probabilities
  // Mosaic.buffer_enabled: false under Ultralytics' cache='ram' (every image in memory), whose tiles are
  // then any images of the dataset, random.randint's, as MixUp's image.
  bool buffer = true;
  uint64_t seed = 0, rank = 0;
  int64_t epoch = 0;
};

// Sample position p of epoch e draws from SampleRandom({seed, e, rank, p,
// kSampleDrawsStream}), Uniform() only, in Ultralytics' order (Python's
// random.uniform(0, 1) and random.choices for the same u): mosaic (applied
// unless u > mosaic), then the three tiles at once, each Choose(u), from the
// buffer as it is after loading the sample's own image; then mixup (unless
// u > mixup), MixUp's image UniformIndex(n), its mosaic and tiles; then
// CutMix's the same way. Loads go to the buffer in the order Ultralytics
// makes them: the sample's image, its tiles, MixUp's image, its tiles,
// CutMix's image, its tiles.
inline constexpr uint64_t kSampleDrawsStream = 0x6d6f73616963ull;
std::vector<SampleDraws> PlanSampleDraws(const SampleDrawsPlan& plan);

// The decoded image store's plan (decoded_image_store.h): which loads of
// `draws`, from first_position on (a resumed epoch's first), can share one
// decode. A run is a worker buffer's holding of an image, from the load that
// read it (or, for an image held before first_position, its first load) to
// its last load before the buffer next reads it; an image's runs that overlap
// in positions (several workers' buffers holding it at once), or that come
// within MaxLength positions of each other, make one span.
// Sets each load's span and returns, per span, how many samples load it.
std::vector<int32_t> PlanDecodeSpans(const SampleDrawsPlan& plan, int64_t first_position,
                                     std::vector<SampleDraws>* draws);

}  // namespace ffyolo
