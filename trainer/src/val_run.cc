#include "ffyolo/val_run.h"

#include <sched.h>
#include <torch/torch.h>

#include <thread>

#include "ffyolo/checkpoint.h"
#include "ffyolo/model.h"

namespace ffyolo {

ffr::Status ValidateWeights(const ValRunOptions& o, ValidationOutput* out, std::vector<std::string>* names) {
  torch::Device device(torch::kCPU);
  if (o.device != "cpu") {
    if (!torch::cuda::is_available())
      return ffr::Status::InvalidArgument("--device " + o.device + ": no CUDA device available; use --device cpu");
    device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(std::stoi(o.device)));
  }
  cpu_set_t set;
  const int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  at::set_num_threads(o.threads > 0 ? o.threads : std::max(1, cpus));
  std::unique_ptr<Dataset> dataset;
  FFR_RETURN_IF_ERROR(Dataset::Open(o.data, &dataset));
  std::shared_ptr<YoloModel> model;
  CheckpointInfo info;
  FFR_RETURN_IF_ERROR(LoadCheckpointModel(o.weights, /*prefer_ema=*/true, &model, &info));
  if (static_cast<size_t>(model->nc()) != dataset->num_classes())
    return ffr::Status::InvalidArgument(o.weights + ": a model of " + std::to_string(model->nc()) + " classes, " +
                                        o.data + " has " + std::to_string(dataset->num_classes()));
  model->to(device);
  ValidatorOptions vo;
  vo.split = o.split;
  if (vo.split.empty() && !dataset->DefaultSplit(false, &vo.split).ok())
    FFR_RETURN_IF_ERROR(dataset->DefaultSplit(true, &vo.split));
  vo.img_size = o.img_size;
  vo.batch_size = o.batch_size;
  vo.workers = o.workers;
  vo.nms.conf_thres = o.conf_thres;
  vo.nms.iou_thres = o.iou_thres;
  vo.nms.max_det = o.max_det;
  std::unique_ptr<Validator> validator;
  FFR_RETURN_IF_ERROR(Validator::Open(*dataset, vo, device, &validator));
  FFR_RETURN_IF_ERROR(validator->Run(*model, nullptr, false, out));
  *names = dataset->manifest().names;
  return ffr::Status::OK();
}

}  // namespace ffyolo
