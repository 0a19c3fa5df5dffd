# Sourced by scripts/reference-venv.sh and scripts/ultralytics8-venv.sh. A reference environment is a virtual
# environment over Debian's own python3 and its CPU PyTorch 1.13 (python3-torch, with torchvision, OpenCV 4.6,
# numpy and the rest from Debian's packages, which install-deps.sh installs), seen through
# --system-site-packages: no CUDA toolkit and no torch wheel. pip adds only what Debian lacks, without the
# dependencies a package declares (they would pull another torch and dozens of extras).

# debian_venv_probe VENV IMPORTS: VENV's python imports IMPORTS (comma-separated) with Debian's torch;
# says what failed on stderr.
debian_venv_probe() {
  "$1/bin/python" -c "import torch, $2
assert torch.__file__.startswith('/usr/lib/python3/dist-packages/'), torch.__file__"
}

# debian_venv_ready VENV IMPORTS: VENV is there and passes the probe (quietly; an environment made, idempotent).
debian_venv_ready() {
  [ -x "$1/bin/python" ] && debian_venv_probe "$1" "$2" 2>/dev/null
}

# debian_venv_make VENV: a fresh one in place of what was there (an older one on a torch wheel, or a broken one).
debian_venv_make() {
  rm -rf "$1"
  /usr/bin/python3 -m venv --system-site-packages "$1"  # Debian's: python3-torch is installed for it
}
