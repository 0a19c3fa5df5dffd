#include "ffyolo/val_run.h"

#include <torch/torch.h>

#include <thread>

#include "ffyolo/checkpoint.h"
#include "ffyolo/cpus.h"
#include "ffyolo/device.h"
#include "ffyolo/model.h"

namespace ffyolo {

ffr::Status ValidateWeights(const ValRunOptions& o, ValidationOutput* out, std::vector<std::string>* names) {
  torch::Device device(torch::kCPU);
  FFR_RETURN_IF_ERROR(SelectDevice(o.device, /*local_rank=*/-1, &device));
  at::set_num_threads(o.threads > 0 ? o.threads : UsableCpus());
  std::unique_ptr<Dataset> dataset;
  FFR_RETURN_IF_ERROR(Dataset::Open(o.data, &dataset));
  std::shared_ptr<YoloModel> model;
  CheckpointInfo info;
  FFR_RETURN_IF_ERROR(LoadCheckpointModel(o.weights, /*prefer_ema=*/true, &model, &info));
  const size_t nc = o.single_cls ? 1 : dataset->num_classes();
  if (static_cast<size_t>(model->nc()) != nc)
    return ffr::Status::InvalidArgument(
        o.weights + ": a model of " + std::to_string(model->nc()) + " classes, " + o.data + " has " +
        std::to_string(dataset->num_classes()) + (o.single_cls ? " (scored as 1 with --single-cls)" : "") +
        (model->nc() == 1 && !o.single_cls ? ": a model trained with --single-cls needs --single-cls here too" : ""));
  model->to(device);
  ValidatorOptions vo;
  vo.split = o.split;
  // No training split for want of a validation one: the score would be of the images the model learnt.
  FFR_RETURN_IF_ERROR(dataset->ResolveSplit(/*training=*/false, &vo.split));
  vo.img_size = o.img_size;
  vo.batch_size = o.batch_size;
  vo.workers = o.workers;
  vo.nms.conf_thres = o.conf_thres;
  vo.nms.iou_thres = o.iou_thres;
  vo.nms.max_det = o.max_det;
  vo.single_cls = o.single_cls;
  std::unique_ptr<Validator> validator;
  FFR_RETURN_IF_ERROR(Validator::Open(*dataset, vo, device, &validator));
  FFR_RETURN_IF_ERROR(validator->Run(*model, nullptr, false, out));
  *names = o.single_cls ? SingleClassNames(dataset->manifest().names) : dataset->manifest().names;
  return ffr::Status::OK();
}

}  // namespace ffyolo
