#include "ffyolo/mosaic_buffer.h"

#include <algorithm>

#include "ffyolo/random.h"

namespace ffyolo {

size_t MosaicBuffer::MaxLength(int64_t dataset_size, int batch_size) {
  return static_cast<size_t>(std::min<int64_t>({dataset_size, static_cast<int64_t>(batch_size) * 8, 1000}));
}

void MosaicBuffer::Load(int64_t index) {
  if (!held_.insert(index).second) return;
  entries_.push_back(index);
  if (entries_.size() > 1 && entries_.size() >= max_length_) {  // `1 < len(self.buffer) >= self.max_buffer_length`
    held_.erase(entries_.front());
    entries_.pop_front();
  }
}

int64_t MosaicBuffer::Choose(double u) const {
  return entries_[static_cast<size_t>(u * static_cast<double>(entries_.size()))];
}

namespace {

// One sample's draws and loads into `buffer`.
SampleDraws Draw(const SampleDrawsPlan& plan, int64_t epoch, int64_t position, int64_t index, MosaicBuffer* buffer) {
  SampleRandom rng({plan.seed, static_cast<uint64_t>(epoch), plan.rank, static_cast<uint64_t>(position),
                    kSampleDrawsStream});
  const auto any_image = [&] { return rng.UniformIndex(plan.dataset_size); };  // random.randint(0, n - 1)
  // Mosaic's choice (BaseMixTransform: skipped when uniform(0, 1) > p), then its tiles' loads.
  const auto mosaic = [&](int64_t own, std::array<int64_t, 3>* tiles) {
    buffer->Load(own);
    if (rng.Uniform() > plan.mosaic) return false;
    if (!plan.buffer) {  // Mosaic.get_indexes without its buffer: each tile any image
      for (int64_t& t : *tiles) t = any_image();
      return true;
    }
    for (int64_t& t : *tiles) t = buffer->Choose(rng.Uniform());  // choices(list(buffer), k=3): one snapshot
    for (int64_t t : *tiles) buffer->Load(t);
    return true;
  };
  // A BaseMixTransform's choice (its p check, then get_indexes' randint) and its image's Mosaic.
  const auto mixed = [&](double p, MixedImage* m) {
    m->applied = !(rng.Uniform() > p);
    if (!m->applied) return;
    m->index = any_image();
    m->mosaic = mosaic(m->index, &m->partners);
  };
  SampleDraws d;
  d.mosaic = mosaic(index, &d.partners);
  mixed(plan.mixup, &d.mixup);
  mixed(plan.cutmix, &d.cutmix);
  return d;
}

}  // namespace

std::vector<SampleDraws> PlanSampleDraws(const SampleDrawsPlan& plan) {
  const int workers = std::max(1, plan.workers);
  std::vector<MosaicBuffer> buffers(workers, MosaicBuffer(MosaicBuffer::MaxLength(plan.dataset_size, plan.batch_size)));
  const auto buffer_of = [&](int64_t position) { return &buffers[(position / plan.batch_size) % workers]; };
  for (size_t p = 0; p < plan.previous_positions.size(); ++p)
    Draw(plan, plan.epoch - 1, static_cast<int64_t>(p), plan.previous_positions[p], buffer_of(static_cast<int64_t>(p)));
  std::vector<SampleDraws> draws;
  draws.reserve(plan.positions.size());
  for (size_t p = 0; p < plan.positions.size(); ++p)
    draws.push_back(Draw(plan, plan.epoch, static_cast<int64_t>(p), plan.positions[p], buffer_of(static_cast<int64_t>(p))));
  return draws;
}

}  // namespace ffyolo
