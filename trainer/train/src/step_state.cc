#include "ffyolo/step_state.h"

#include <torch/torch.h>

#include "ffyolo/ema.h"
#include "ffyolo/grad_scaler.h"
#include "ffyolo/loss.h"
#include "ffyolo/model.h"

namespace ffyolo {

StepState::StepState() = default;
StepState::~StepState() = default;

ffr::Status MakeStepState(const StepOptions& o, StepState* s) {
  FFR_RETURN_IF_ERROR(BuildModel(o.model_yaml, o.nc, &s->model));
  FFR_RETURN_IF_ERROR(BuildModel(o.model_yaml, o.nc, &s->ema_model));
  for (YoloModel* m : {s->model.get(), s->ema_model.get()}) {
    m->to(o.device);
    m->SetMemoryFormat(o.format);
  }
  s->model->SetFusedBnSilu(o.fused_bn_silu);
  s->model->train();
  s->ema = std::make_unique<ModelEma>(s->ema_model, *s->model);
  s->loss = std::make_unique<ComputeLoss>(ScaleLossGains(o.hyp, o.nc, 3, o.img_size), 0.0, o.nc,
                                          s->model->detect().anchors, o.sync_free_loss);
  std::string description;
  FFR_RETURN_IF_ERROR(MakeOptimizer(*s->model, "SGD", o.hyp, o.hyp.weight_decay, &s->optimizer, &description));
  s->scaler = std::make_unique<GradScaler>(o.amp);
  s->parts = TrainStepParts{s->model.get(), s->loss.get(), s->scaler.get(), s->optimizer.get(), s->ema.get(),
                            nullptr,        o.amp,         1,                false,                {}};
  return ffr::Status::OK();
}

}  // namespace ffyolo
