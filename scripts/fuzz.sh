#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang (address and
# undefined-behaviour sanitizers) into build-fuzz/ and runs each for SECONDS
# (default 30) from its seed corpus in tests/fuzz/corpus/<target>/. A target
# fails on a crash, a sanitizer report, an input taking over 1 s or an
# allocation over 1 GiB; the input that did it is left in build-fuzz/.
# checkpoint_fuzz links the LibTorch trainer library of an ordinary build
# (BUILD_DIR, default build/: run scripts/build.sh first); only the checkpoint
# reader itself is compiled here.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${1:-30}
shift $(( $# > 0 ? 1 : 0 ))
OUT=${FUZZ_BUILD_DIR:-build-fuzz}
CXX=${FUZZ_CXX:-clang++}
BUILD=$ROOT/${BUILD_DIR:-build}
mkdir -p "$OUT"

# checkpoint_fuzz: checkpoint.cc, pickle_check.cc, torchscript_check.cc and zip_integrity.cc instrumented; the model, optimizer and the rest
# from the g++-built libraries of $BUILD (same LibTorch defines, so that both see the same classes).
TORCH_FLAGS="-isystem /usr/include/torch/csrc/api/include -DNDEBUG -D_GLIBCXX_USE_CXX11_ABI=1 -DUSE_C10D_GLOO
             -DUSE_DISTRIBUTED -DUSE_RPC -DUSE_TENSORPIPE -DGLOG_CUSTOM_PREFIX_SUPPORT -DGFLAGS_IS_A_DLL=0"
TORCH_LIBS="$BUILD/trainer/libffyolo_trainer.a $BUILD/loader/libffyolo_loader.a $BUILD/trainer/eval/libffyolo_eval.a
            $BUILD/dataset/libffyolo_dataset.a $BUILD/trainer/launch/libffyolo_launch.a $BUILD/reader/libffr.a
            -Wl,--no-as-needed -ltorch -ltorch_cpu -Wl,--as-needed -lc10 -lnuma -lopencv_imgproc -lisal"

# Each target and the sources it needs (the parsers only: no torch, no OpenCV).
# The image checks (image_check.h and the headers and decoders it calls), which four targets need whole.
IMAGE_CHECK="dataset/src/image_check.cc dataset/src/jpeg_header.cc dataset/src/png_decode.cc dataset/src/record.cc"
# ScanSource (packer/CMakeLists.txt's ffyolo_source), which both source scans need whole.
SOURCE_SCAN="packer/src/source.cc packer/src/source_images.cc packer/src/source_coco_json.cc packer/src/json_scanner.cc
             packer/src/source_yolo_txt.cc $IMAGE_CHECK reader/src/env_posix.cc reader/src/status.cc"
declare -A SOURCES=(
  [record_fuzz]="dataset/src/record.cc reader/src/status.cc"
  [manifest_fuzz]="dataset/src/manifest.cc reader/src/status.cc"
  [label_index_fuzz]="dataset/src/label_index.cc dataset/src/record.cc reader/src/env_posix.cc reader/src/status.cc"
  [hyp_fuzz]="loader/src/hyp.cc reader/src/env_posix.cc reader/src/status.cc"
  [zip_integrity_fuzz]="trainer/src/zip_integrity.cc reader/src/format.cc reader/src/status.cc"
  [pickle_check_fuzz]="trainer/src/pickle_check.cc reader/src/status.cc"
  [image_check_fuzz]="$IMAGE_CHECK reader/src/status.cc"
  [shard_reader_fuzz]="reader/src/reader.cc reader/src/mapping_guard.cc reader/src/c_api.cc reader/src/shard_writer.cc reader/src/format.cc
                       reader/src/read_buffer.cc reader/src/env_posix.cc reader/src/status.cc"
  [coco_json_fuzz]="$SOURCE_SCAN"
  [yolo_txt_fuzz]="$SOURCE_SCAN"
  # config_path.cc (which model_config.cc links for ResolveModelYaml) needs the shipped configs' place.
  [model_config_fuzz]="trainer/src/model_config.cc trainer/src/module_shapes.cc trainer/src/config_path.cc reader/src/env_posix.cc
                       reader/src/status.cc -DFFYOLO_CONFIG_DIR=\"$ROOT/configs\"
                       -DFFYOLO_INSTALLED_CONFIG_DIR=\"../share/ffyolo/configs\""
  [checkpoint_fuzz]="trainer/src/checkpoint.cc trainer/src/pickle_check.cc trainer/src/torchscript_check.cc trainer/src/zip_integrity.cc $TORCH_FLAGS $TORCH_LIBS
                     -DCHECKPOINT_FUZZ_MODEL=\"$ROOT/tests/fuzz/checkpoint_model.yaml\""
  [image_decoder_fuzz]="loader/src/image_decoder.cc $IMAGE_CHECK reader/src/status.cc"
)
# BMP, WebP, TIFF and PFM decode with OpenCV imgcodecs, as in a build that has it.
DEFINES="-DFFYOLO_HAVE_IMGCODECS=1"
LIBS="-lyaml-cpp -lzstd -lturbojpeg -ljpeg -lpng -lz -luring -lopencv_imgcodecs -lopencv_core -lpthread"
INCLUDES="-Ireader/include -Idataset/include -Ipacker/include -Ipacker/src -Iloader/include -Itrainer/include -Itrainer/src
          -I/usr/include/opencv4"
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(record_fuzz manifest_fuzz label_index_fuzz hyp_fuzz zip_integrity_fuzz pickle_check_fuzz
                                       image_check_fuzz shard_reader_fuzz coco_json_fuzz yolo_txt_fuzz
                                       model_config_fuzz image_decoder_fuzz checkpoint_fuzz)

failed=()
for t in "${targets[@]}"; do
  [[ -n ${SOURCES[$t]:-} ]] || { echo "fuzz.sh: unknown target $t" >&2; exit 2; }
  if [[ $t == checkpoint_fuzz && ! -f $BUILD/trainer/libffyolo_trainer.a ]]; then
    echo "fuzz.sh: checkpoint_fuzz needs $BUILD/trainer/libffyolo_trainer.a: run scripts/build.sh first" >&2
    exit 2
  fi
  # shellcheck disable=SC2086
  "$CXX" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $DEFINES $INCLUDES \
    "tests/fuzz/$t.cc" ${SOURCES[$t]} $LIBS -o "$OUT/$t"
  corpus="$OUT/corpus/$t"  # grows as the fuzzer finds new paths; the seeds stay as committed
  mkdir -p "$corpus"
  echo "== $t: ${SECONDS_EACH}s"
  # LeakSanitizer suppressions of a target, for leaks inside libraries it cannot fix (see the file).
  lsan=""
  [[ -f tests/fuzz/$t.lsan ]] && lsan="suppressions=$ROOT/tests/fuzz/$t.lsan"
  # One execution of checkpoint_fuzz unzips and compiles the TorchScript of a checkpoint three
  # times and builds a model (about 1 s on the loaded 2-core machine): 10 s before it is a hang.
  timeout=1
  [[ $t == checkpoint_fuzz ]] && timeout=10
  if ! (cd "$OUT" && LSAN_OPTIONS=$lsan "./$t" -max_total_time="$SECONDS_EACH" -timeout=$timeout -rss_limit_mb=2048 -malloc_limit_mb=1024 \
          -print_final_stats=1 "corpus/$t" "$ROOT/tests/fuzz/corpus/$t" 2>"$t.log"); then
    tail -40 "$OUT/$t.log"
    failed+=("$t")
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|cov:" "$OUT/$t.log" | tail -3 || true
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: failed: ${failed[*]} (inputs and logs in $OUT/)" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${SECONDS_EACH}s each: no crash"
