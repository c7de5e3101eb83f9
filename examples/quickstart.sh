#!/usr/bin/env bash
# The quick start: builds nbcuda, runs `nbcuda detect`, compiles the example Python kernel
# (examples/saxpy.py) to PTX with `nbcuda compile`, and runs it when a GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${NBCUDA_BUILD:-build/release}
command -v cmake >/dev/null || tests/deps.sh
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DNBCUDA_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
echo "== nbcuda detect"
"$BUILD/nbcuda" detect || echo "(no usable GPU here: detect exits 1)"
echo "== nbcuda compile examples/saxpy.py:saxpy"
"$BUILD/nbcuda" compile examples/saxpy.py:saxpy --kernel \
  --sig "void(float32[::1], float32, float32[::1], float32[::1])" --cc 9.0 \
  -o "$BUILD/saxpy.ptx" --verbose
grep -E "^\.(version|target)|\.entry" "$BUILD/saxpy.ptx"
echo "== run"
"$BUILD/examples/run_saxpy" "$BUILD/saxpy.ptx"
