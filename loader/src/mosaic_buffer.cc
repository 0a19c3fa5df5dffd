#include "ffyolo/mosaic_buffer.h"

#include <algorithm>
#include <unordered_map>

#include "ffyolo/random.h"

namespace ffyolo {

size_t MosaicBuffer::MaxLength(int64_t dataset_size, int batch_size) {
  return static_cast<size_t>(std::min<int64_t>({dataset_size, static_cast<int64_t>(batch_size) * 8, 1000}));
}

bool MosaicBuffer::Load(int64_t index) {
  if (!held_.insert(index).second) return false;
  entries_.push_back(index);
  if (entries_.size() > 1 && entries_.size() >= max_length_) {  // `1 < len(self.buffer) >= self.max_buffer_length`
    held_.erase(entries_.front());
    entries_.pop_front();
  }
  return true;
}

int64_t MosaicBuffer::Choose(double u) const {
  return entries_[static_cast<size_t>(u * static_cast<double>(entries_.size()))];
}

namespace {

// One sample's draws and loads into `buffer`.
SampleDraws Draw(const SampleDrawsPlan& plan, int64_t epoch, int64_t position, int64_t index, MosaicBuffer* buffer) {
  SampleRandom rng({plan.seed, static_cast<uint64_t>(epoch), plan.rank, static_cast<uint64_t>(position),
                    kSampleDrawsStream});
  SampleDraws d;
  const auto load = [&](int64_t index) { d.loads.push_back({index, buffer->Load(index)}); };
  const auto any_image = [&] { return rng.UniformIndex(plan.dataset_size); };  // random.randint(0, n - 1)
  // Mosaic's choice (BaseMixTransform: skipped when uniform(0, 1) > p), then its tiles' loads.
  const auto mosaic = [&](int64_t own, std::array<int64_t, 3>* tiles) {
    load(own);
    if (rng.Uniform() > plan.mosaic) return false;
    if (!plan.buffer) {  // Mosaic.get_indexes without its buffer: each tile any image
      for (int64_t& t : *tiles) t = any_image();
      for (int64_t t : *tiles) d.loads.push_back({t, /*read=*/true});  // no buffer holds it
      return true;
    }
    for (int64_t& t : *tiles) t = buffer->Choose(rng.Uniform());  // choices(list(buffer), k=3): one snapshot
    for (int64_t t : *tiles) load(t);
    return true;
  };
  // A BaseMixTransform's choice (its p check, then get_indexes' randint) and its image's Mosaic.
  const auto mixed = [&](double p, MixedImage* m) {
    m->applied = !(rng.Uniform() > p);
    if (!m->applied) return;
    m->index = any_image();
    m->mosaic = mosaic(m->index, &m->partners);
  };
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

int32_t SampleDraws::SpanOf(int64_t index) const {
  for (const ImageLoad& l : loads)
    if (l.index == index) return l.span;
  return -1;
}

std::vector<int32_t> SampleDraws::Spans() const {
  std::vector<int32_t> spans;
  for (const ImageLoad& l : loads)
    if (l.span >= 0 && std::find(spans.begin(), spans.end(), l.span) == spans.end()) spans.push_back(l.span);
  return spans;
}

void SampleDraws::Replace(int64_t index, int64_t by) {
  const auto replace = [&](int64_t* image) {
    if (*image == index) *image = by;
  };
  for (int64_t& p : partners) replace(&p);
  for (MixedImage* mixed : {&mixup, &cutmix}) {
    replace(&mixed->index);
    for (int64_t& p : mixed->partners) replace(&p);
  }
  for (ImageLoad& l : loads)
    if (l.index == index) l = {by, l.read, -1};
}

std::vector<int32_t> PlanDecodeSpans(const SampleDrawsPlan& plan, int64_t first_position,
                                     std::vector<SampleDraws>* draws) {
  const int workers = std::max(1, plan.workers);
  struct Run {
    int64_t index, first, last;  // the image, its first and last sample position
    int32_t span;
  };
  std::vector<Run> runs;
  std::unordered_map<int64_t, size_t> current;  // image * workers + worker: its run in that worker's buffer
  const int64_t end = static_cast<int64_t>(draws->size());
  for (int64_t p = std::max<int64_t>(first_position, 0); p < end; ++p) {
    const int64_t worker = (p / plan.batch_size) % workers;
    for (ImageLoad& l : (*draws)[p].loads) {
      const auto [it, first] = current.try_emplace(l.index * workers + worker, runs.size());
      if (first || l.read) {
        it->second = runs.size();
        runs.push_back({l.index, p, p, -1});
      }
      runs[it->second].last = p;
      l.span = static_cast<int32_t>(it->second);  // its run until the spans are known
    }
  }
  // An image's runs in order of their first positions; one that starts within a buffer's length of positions
  // after the span so far joins it: the image is kept rather than decoded again so soon, which holds at most about
  // that many more images (a span starts about once a sample).
  const int64_t gap = static_cast<int64_t>(MosaicBuffer::MaxLength(plan.dataset_size, plan.batch_size));
  std::vector<size_t> order(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) order[r] = r;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return runs[a].index != runs[b].index ? runs[a].index < runs[b].index : runs[a].first < runs[b].first;
  });
  int32_t spans = 0;
  int64_t span_last = -1;
  for (size_t k = 0; k < order.size(); ++k) {
    Run& r = runs[order[k]];
    if (k == 0 || runs[order[k - 1]].index != r.index || r.first > span_last + gap) {
      ++spans;
      span_last = r.last;
    }
    span_last = std::max(span_last, r.last);
    r.span = spans - 1;
  }
  std::vector<int32_t> samples(spans, 0);
  for (int64_t p = std::max<int64_t>(first_position, 0); p < end; ++p) {
    for (ImageLoad& l : (*draws)[p].loads) l.span = runs[l.span].span;
    for (int32_t s : (*draws)[p].Spans()) ++samples[s];
  }
  return samples;
}

}  // namespace ffyolo
