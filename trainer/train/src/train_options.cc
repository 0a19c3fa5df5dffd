// TrainOptions as opt.yaml and after --resume, both by the options table
// (train_option_table.h), and the run-folder and dataset helpers of train.py.
#include <algorithm>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <type_traits>

#include "ffyolo/train.h"
#include "ffyolo/train_option_table.h"

#include "ffyolo/output/path_overlap.h"
#include "ffyolo/yaml_parse.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using ffr::Status;

// The saved rows in opt.yaml's order: visit(key, &TrainOptions::field) for slot 0, 1, ... (the
// slots are dense; train_option_table_test checks it).
template <class Visit>
void VisitSavedOptions(Visit&& visit) {
  for (int slot = 0;; ++slot) {
    bool found = false;
    VisitTrainOptions([&](const TrainOptionSpec& spec, auto field) {
      if (!spec.key || spec.yaml_slot != slot) return;
      found = true;
      visit(spec.key, field);
    });
    if (!found) return;
  }
}

// A value as a refusal quotes it.
template <class T>
std::string Spelled(const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    return value;
  } else {
    YAML::Emitter e;
    e << YAML::Flow << value;
    return e.c_str();
  }
}

}  // namespace

std::string TrainOptions::ToYaml() const {
  YAML::Emitter e;
  e << YAML::BeginMap;
  VisitSavedOptions([&](const char* key, auto field) { e << YAML::Key << key << YAML::Value << this->*field; });
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
    VisitSavedOptions([&](const char* key, auto field) {
      if (const YAML::Node v = n[key]) o.*field = v.as<std::decay_t<decltype(o.*field)>>();
    });
    o.dist.world_size = n["world_size"].as<int>(1);
    *out = o;
    return Status::OK();
  } catch (const YAML::Exception& e) {
    return Status::Corruption(std::string("run options: ") + e.what());
  }
}

Status ResumedOptions(const TrainOptions& given, const TrainOptions& saved, TrainOptions* resumed) {
  const TrainOptions defaults;
  *resumed = given;
  Status refused;
  VisitTrainOptions([&](const TrainOptionSpec& spec, auto field) {
    const bool set = given.*field != defaults.*field;
    switch (spec.on_resume) {
      case OnResume::kLaunch:
        return;
      case OnResume::kGivenWins:
        if (set) return;
        break;
      case OnResume::kRefusedIfOther:
        // What the run trains on is the checkpoint's to decide, as its dataset is: a flag that
        // says otherwise would be dropped without a word.
        if (set && given.*field != saved.*field && refused.ok()) {
          const std::string flag = spec.flags;
          refused = Status::InvalidArgument(
              flag.substr(0, flag.find(',')) + " " + Spelled(given.*field) + " with --resume: the run " +
              given.resume + " trains on " +
              (saved.*field == defaults.*field ? "the dataset's default" : Spelled(saved.*field)) +
              " (its opt.yaml), and a resume continues it as it was; drop the flag, or start a new run (--weights " +
              given.resume + ")");
        }
        break;
      case OnResume::kRestored:
        break;
    }
    resumed->*field = saved.*field;
  });
  return refused;
}

Status StepVariantOn(const char* flag, const std::string& setting, bool cuda, bool* on) {
  if (std::find(kStepVariantSettings.begin(), kStepVariantSettings.end(), setting) == kStepVariantSettings.end())
    return Status::InvalidArgument(std::string(flag) + " " + setting + ": expected auto, on or off");
  *on = setting == "on" || (setting == "auto" && cuda);
  return Status::OK();
}

Status ResolveStepVariants(const StepVariantSettings& s, bool cuda, const std::string& graph_refusal,
                           StepVariants* v, std::string* note) {
  note->clear();
  FFR_RETURN_IF_ERROR(StepVariantOn("--channels-last", s.channels_last, cuda, &v->channels_last));
  FFR_RETURN_IF_ERROR(StepVariantOn("--sync-free-loss", s.sync_free_loss, cuda, &v->sync_free_loss));
  FFR_RETURN_IF_ERROR(StepVariantOn("--cuda-graph", s.cuda_graph, cuda, &v->cuda_graph));
  FFR_RETURN_IF_ERROR(StepVariantOn("--fused-bn-silu", s.fused_bn_silu, cuda, &v->fused_bn_silu));
  if (!v->cuda_graph) return Status::OK();
  std::string refusal;
  if (!cuda)
    refusal = "a CUDA graph needs a CUDA device";
  else if (!graph_refusal.empty())
    refusal = graph_refusal;
  else if (s.sync_free_loss == "off")
    refusal = "a CUDA graph needs the sync-free loss (--sync-free-loss off given)";
  if (refusal.empty()) {
    v->sync_free_loss = true;
    return Status::OK();
  }
  if (s.cuda_graph == "on") return Status::InvalidArgument("--cuda-graph: " + refusal);
  v->cuda_graph = false;
  *note = "the step runs eagerly, not as a CUDA graph: " + refusal;
  return Status::OK();
}

std::string IncrementPath(const std::string& path, bool exist_ok) {
  if (exist_ok || !fs::exists(path)) return path;
  for (int n = 2;; ++n) {
    const std::string p = path + std::to_string(n);
    if (!fs::exists(p)) return p;
  }
}

Status CheckRunApartFromDataset(const std::string& run_dir, const std::string& data) {
  if (!PlaceWithin(run_dir, data) && !PlaceWithin(data, run_dir)) return Status::OK();
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
