#!/usr/bin/env bash
# Installs what building and testing nbcuda needs on a fresh Debian machine with the CUDA
# toolkit: compilers and tools from Debian, numpy/pytest/scikit-build-core from PyPI. Each
# step is skipped when its tool is already present, so the script is cheap to re-run.
set -euo pipefail
need_apt=()
for tool in cmake gcc clang make; do
  command -v "$tool" >/dev/null 2>&1 || need_apt+=("$tool")
done
if ((${#need_apt[@]})); then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"
  else
    echo "deps.sh: missing ${need_apt[*]} (run as root to install them)" >&2
    exit 1
  fi
fi
PY=${PYTHON:-python3}
missing=()
for mod in numpy pytest scikit_build_core; do
  "$PY" -c "import $mod" >/dev/null 2>&1 || missing+=("$mod")
done
if ((${#missing[@]})); then
  pkgs=()
  for m in "${missing[@]}"; do pkgs+=("${m//_/-}"); done
  "$PY" -m pip install -q "${pkgs[@]}"
fi
# ml_dtypes (numpy arrays of bfloat16, as numba-cuda's bfloat16 tests use): optional.
"$PY" -c "import ml_dtypes" >/dev/null 2>&1 || "$PY" -m pip install -q ml_dtypes ||
  echo "deps.sh: ml_dtypes not installed (tests of bfloat16 arrays will be skipped)" >&2
# nvdisasm (Kernel.inspect_sass) is not in every toolkit image: the Python-packaged one then.
if ! command -v nvdisasm >/dev/null 2>&1 && [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvdisasm" ] &&
  ! "$PY" -m pip show -q nvidia-cuda-nvdisasm >/dev/null 2>&1; then
  "$PY" -m pip install -q nvidia-cuda-nvdisasm ||
    echo "deps.sh: nvidia-cuda-nvdisasm not installed (inspect_sass tests will be skipped)" >&2
fi
