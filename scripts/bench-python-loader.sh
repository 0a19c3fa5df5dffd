#!/usr/bin/env bash
# The Python package's loader against the C++ loader and Ultralytics' (python/bench/loader_bench.py):
# packs coco128 with build/tools/yolo-pack into a temporary folder and runs the benchmark in the
# reference environment (.venv-ref, scripts/reference-venv.sh) with the package installed by
# scripts/python-test.sh (.venv-python) on its path. Arguments go to the benchmark (--img, --batch,
# --workers, --epochs, --rounds, --cache ram). With --memory first, measures the memory of data-parallel
# ranks decoding from RAM caches instead (python/bench/cache_memory.py; --nproc, --img, --batch, --workers).
# With --ultralytics8 first, runs the loader's Ultralytics 8 mode against Ultralytics 8's own in the Ultralytics 8
# environment (.venv-u8, U8_VENV; python/bench/ultralytics8_bench.py; --img, --batch, --workers, --epochs,
# --rounds, --cache ram|disk); --ultralytics8 --memory, the memory of its ranks with cache="ram" against
# Ultralytics 8's (cache_memory.py --ultralytics8).
set -euo pipefail
cd "$(dirname "$0")/.."
coco=${COCO128:-../shared/data/coco128}
ref=${REF_VENV:-.venv-ref}/bin/python
package=$(.venv-python/bin/python -c 'import ffyolo, os; print(os.path.dirname(ffyolo.__file__))')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/path"
ln -s "$package" "$tmp/path/ffyolo"
names=$coco/names.yaml  # coco128's; a yolo-synth --yolo tree (COCO128=that tree) has its data.yaml
[ -f "$names" ] || names=$coco/data.yaml
"${FFYOLO_TOOLS:-build/tools}/yolo-pack" "$coco" -o "$tmp/coco128.ffr" --layout yolo --data "$names" >/dev/null
if [ "${1:-}" = --ultralytics8 ]; then
  shift
  bench=python/bench/ultralytics8_bench.py
  [ "${1:-}" = --memory ] && { shift; bench=python/bench/cache_memory.py; set -- --ultralytics8 "$@"; }
  source scripts/lib/ultralytics.sh
  ultralytics8_env "$tmp" ||
    { echo "bench-python-loader: no Ultralytics 8: run scripts/ultralytics8-venv.sh" >&2; exit 1; }
  PYTHONPATH=$tmp/path "$U8_PYTHON" "$bench" "$tmp/coco128.ffr" "$coco" "$@"
elif [ "${1:-}" = --memory ]; then
  shift
  PYTHONPATH=$tmp/path "$ref" python/bench/cache_memory.py "$tmp/coco128.ffr" "$coco" "$@"
else
  PYTHONPATH=$tmp/path "$ref" python/bench/loader_bench.py "$tmp/coco128.ffr" "$coco" build/tools/yolo-bench "$@"
fi
