// TrainOptions as opt.yaml, and the run-folder and dataset helpers of train.py.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <type_traits>

#include "ffyolo/train.h"

#include "ffyolo/output/path_overlap.h"
#include "ffyolo/yaml_parse.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using ffr::Status;

// The saved fields under train.py's names: the one list that both writes and reads opt.yaml.
template <class Options, class Visit>
void VisitSavedFields(Options& o, Visit&& visit) {
  visit("data", o.data);
  visit("cfg", o.cfg);
  visit("hyp", o.hyp);
  visit("weights", o.weights);
  visit("imgsz", o.img_size);
  visit("batch_size", o.batch_size);
  visit("epochs", o.epochs);
  visit("workers", o.workers);
  visit("device", o.device);
  visit("project", o.project);
  visit("name", o.name);
  visit("exist_ok", o.exist_ok);
  visit("seed", o.seed);
  visit("cos_lr", o.cos_lr);
  visit("optimizer", o.optimizer);
  visit("multi_scale", o.multi_scale);
  visit("label_smoothing", o.label_smoothing);
  visit("patience", o.patience);
  visit("save_period", o.save_period);
  visit("noval", o.noval);
  visit("nosave", o.nosave);
  visit("train_split", o.train_split);
  visit("val_split", o.val_split);
  visit("rect", o.rect);
  visit("image_weights", o.image_weights);
  visit("single_cls", o.single_cls);
  visit("quad", o.quad);
  visit("threads", o.threads);
  visit("sync_bn", o.sync_bn);
  visit("noautoanchor", o.noautoanchor);
  visit("cache", o.cache);
  visit("freeze", o.freeze);
  visit("dataset_path", o.dataset_path);
  visit("dataset_crc", o.dataset_crc);
}

}  // namespace

std::string TrainOptions::ToYaml() const {
  YAML::Emitter e;
  e << YAML::BeginMap;
  VisitSavedFields(*this, [&](const char* key, const auto& value) { e << YAML::Key << key << YAML::Value << value; });
  // The world the run was saved by; a launch sets its own.
  e << YAML::Key << "world_size" << YAML::Value << (distributed ? dist.world_size : 1);
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

Status TrainOptions::FromYaml(const std::string& yaml, TrainOptions* out) {
  YAML::Node n;
  const Status parsed = ParseYaml(yaml, "run options", &n);
  if (!parsed.ok()) return Status::Corruption(parsed.message());
  try {
    if (!n.IsMap() || !n["data"]) return Status::Corruption("run options: no 'data'");
    TrainOptions o;
    VisitSavedFields(o, [&](const char* key, auto& value) {
      if (const YAML::Node v = n[key]) value = v.as<std::decay_t<decltype(value)>>();
    });
    o.dist.world_size = n["world_size"].as<int>(1);
    *out = o;
    return Status::OK();
  } catch (const YAML::Exception& e) {
    return Status::Corruption(std::string("run options: ") + e.what());
  }
}

std::string IncrementPath(const std::string& path, bool exist_ok) {
  if (exist_ok || !fs::exists(path)) return path;
  for (int n = 2;; ++n) {
    const std::string p = path + std::to_string(n);
    if (!fs::exists(p)) return p;
  }
}

Status HoldRunDirectory(ffr::Env* env, const std::string& dir, std::unique_ptr<ffr::FileLock>* lock) {
  FFR_RETURN_IF_ERROR(env->CreateDirs(dir));
  FFR_RETURN_IF_ERROR(env->TryLockFile(dir + "/.lock", lock));
  if (*lock) return Status::OK();
  return Status::AlreadyExists(dir + ": another run is writing into this directory; wait for it to end, or choose "
                                     "another --project/--name");
}

Status CheckRunApartFromDataset(const std::string& run_dir, const std::string& data) {
  const fs::path run = ResolvedPath(run_dir), dataset = ResolvedPath(data);
  if (!PathWithin(run, dataset) && !PathWithin(dataset, run)) return Status::OK();
  return Status::InvalidArgument("the run directory " + run_dir + " overlaps the dataset " + data +
                                 ", which the run would write into; choose another --project/--name");
}

double FinalValidationIouThreshold(const Manifest& manifest, const std::string& val_split) {
  const fs::path source = fs::path(manifest.source).lexically_normal();
  const std::string folder = (source.has_filename() ? source : source.parent_path()).filename().string();
  return folder == "coco" && val_split == "val2017" ? 0.65 : 0.60;
}

Status FindLastCheckpoint(const std::string& project, std::string* path) {
  fs::file_time_type newest{};
  path->clear();
  std::error_code ec;
  if (fs::is_directory(project, ec))
    for (const auto& run : fs::directory_iterator(project, ec)) {
      const fs::path last = run.path() / "weights" / "last.pt";
      if (fs::exists(last) && (path->empty() || fs::last_write_time(last) > newest)) {
        newest = fs::last_write_time(last);
        *path = last.string();
      }
    }
  if (path->empty()) return Status::NotFound(project + ": no */weights/last.pt to resume");
  return Status::OK();
}

}  // namespace ffyolo
