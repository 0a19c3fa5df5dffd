#include "ffyolo/train.h"

#include <atomic>

#include "ffyolo/exception_status.h"
#include "ffyolo/model.h"
#include "ffyolo/model_config.h"
#include "ffyolo/model_summary.h"
#include "ffyolo/trainer.h"

namespace ffyolo {
namespace {

std::atomic<int> g_stop_requested{0};

}  // namespace

void RequestTrainingStop() { g_stop_requested.store(1); }
bool TrainingStopRequested() { return g_stop_requested.load() != 0; }
void ClearTrainingStop() { g_stop_requested.store(0); }

ffr::Status Train(const TrainOptions& options, TrainObserver* observer, TrainSummary* summary) {
  std::unique_ptr<Trainer> trainer;
  ffr::Status s = Trainer::Create(options, observer, &trainer);
  if (!s.ok()) return s;
  while (s.ok() && !trainer->done()) {
    s = trainer->RunEpoch();
    if (s.ok()) s = trainer->EndEpoch();
  }
  if (s.ok()) s = trainer->Finish();
  *summary = trainer->summary();
  return s;
}

ffr::Status ModelSummaryText(const std::string& cfg, int64_t nc, int img_size, std::string* text) {
  return StatusOrException([&] {
    std::shared_ptr<YoloModel> model;
    FFR_RETURN_IF_ERROR(BuildModel(ResolveModelYaml(cfg), nc, &model));
    *text = LayerTable(*model) + "\n" + SummaryLine(*model, img_size) + "\n";
    return ffr::Status::OK();
  });
}

}  // namespace ffyolo
