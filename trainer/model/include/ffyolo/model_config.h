// ModelConfig: a YOLOv5 model YAML (Ultralytics' models/yolov5*.yaml schema)
// resolved the way models/yolo.py::parse_model resolves it: depth and width
// multiples applied, `from` indices made absolute, every row's constructor
// arguments typed and checked. It is torch-free, so a mistake in a YAML is
// reported with its file and row before any network is built.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ffr/status.h"
#include "ffyolo/modules/bottleneck.h"
#include "ffyolo/modules/c3.h"
#include "ffyolo/modules/concat.h"
#include "ffyolo/modules/conv.h"
#include "ffyolo/modules/detect.h"
#include "ffyolo/modules/sppf.h"
#include "ffyolo/modules/upsample.h"

namespace ffyolo {

// Conv.default_act, chosen by the YAML's optional `activation` key.
struct ActivationConfig {
  enum class Kind { kSiLU, kReLU, kLeakyReLU };
  Kind kind = Kind::kSiLU;
  double negative_slope = 0.01;  // kLeakyReLU only
};

// The modules a model YAML may name, one alternative each: the arguments
// struct of modules/<module>.h, with its YAML name (kName), ParseArgs and
// Parameters beside it, and its LibTorch module's MakeModule in
// modules/<module>_module.h. Every part is called on each alternative, so a
// module missing one does not compile.
using LayerArgs =
    std::variant<ConvArgs, BottleneckArgs, C3Args, SPPFArgs, ConcatArgs, UpsampleArgs, DetectArgs>;

// "Conv, Bottleneck, ...": the modules a model YAML may name, in LayerArgs' order.
std::string ModuleNames();

// One row of the backbone or head.
struct LayerConfig {
  int index = 0;
  std::vector<int> from;  // -1: the previous output (the image for layer 0); others: layer indices
  std::string from_text;  // as written, the way parse_model prints it: "-1", "[-1, 6]"
  int repeats = 1;        // n after the depth gain (the table's n)
  int copies = 1;         // modules in the row: 1 for C3 (which takes n itself), else repeats
  std::string module;     // as written: "Conv", "nn.Upsample", ...
  LayerArgs args;
  std::string args_text;  // Python repr of the resolved arguments, for the table
  int64_t out_channels = 0;
  int64_t parameters = 0;  // parameter elements of the row's modules, all copies (each module's Parameters)
};

struct ModelConfig {
  std::string source;  // the YAML file, or the caller's name for YAML text
  std::string name;    // "YOLOv5s" for yolov5s.yaml, "Model" for text (the summary's prefix)
  int64_t nc = 0;
  int64_t ch = 3;  // input channels
  double depth_multiple = 1.0, width_multiple = 1.0;
  int64_t channel_multiple = 8;
  std::string activation_text;  // the `activation` value as written; empty when absent
  ActivationConfig activation;
  std::vector<LayerConfig> layers;  // backbone rows, then head rows; the last is Detect
  std::vector<int> save;            // sorted indices of layers whose outputs are read later
  int64_t parameters = 0;           // of the whole model as built, at most kMaxModelParameters
};

// The most parameters a model YAML may ask for. The parser's per-key limits
// (2^20 channels, 1024 repeats, 65536 classes) multiply: yolov5s.yaml with
// width_multiple 100 parses with every width under them and asks for 2.8e11
// parameters, which LibTorch allocates and initializes row by row until
// memory runs out (20 s and 4.5 GB before a 6 GB address-space limit stopped
// it). 2^30 parameters are 4 GiB of float32 weights, and training holds four
// to five times that (gradients, optimizer state, the EMA copy) before any
// activation; yolov5x6, Ultralytics' largest YOLOv5 (140.7 M), is 7.6 times
// below it, so only a mistaken multiplier or channel count reaches it.
inline constexpr int64_t kMaxModelParameters = int64_t{1} << 30;

// "7235389 parameters, 0.027 GiB as float32": a model's size in messages.
std::string ModelSizeText(double parameters);

// Parses YAML text; `where` names it in messages. nc > 0 replaces the YAML's nc
// (the dataset's class count), as DetectionModel(cfg, nc=...) does. A model of
// more than kMaxModelParameters is refused, naming its count, the multiples
// and its largest row.
ffr::Status ParseModelConfig(const std::string& yaml, const std::string& where, int64_t nc,
                             ModelConfig* out);
ffr::Status LoadModelConfig(const std::string& path, int64_t nc, ModelConfig* out);

// ResolveConfig(name_or_path, "models") (config_path.h): an existing file, or
// the shipped model "yolov5s" / "yolov5s.yaml".
std::string ResolveModelYaml(const std::string& name_or_path);

// The grid size train.py checks --img against, max(largest stride, 32): 32
// for the P5 models of configs/models (detection at strides 8, 16, 32).
inline constexpr int kMaxStride = 32;

// train.py and val.py's check_img_size: `img_size` rounded up to a multiple
// of the grid size `stride`; *warning gets Ultralytics' message when that
// changes it, else is cleared. InvalidArgument when img_size is not positive.
ffr::Status CheckImgSize(int img_size, int stride, int* rounded, std::string* warning);

}  // namespace ffyolo
