#!/usr/bin/env bash
# Runs every nbcuda test that needs no GPU, as CI does (.ci/run calls this script):
#   1. gcc build, all C tests (ctest) against the software test driver;
#   2. clang build with AddressSanitizer + UndefinedBehaviorSanitizer, all C tests again;
#   3. the libFuzzer targets, briefly (NBCUDA_FUZZ_SECONDS, default 30 s each), through the
#      whole front end, inference and lowering (NBCUDA_FUZZ_PIPELINE=1);
#   4. the Python module installed into a virtual environment, and its pytest suite;
#   5. the documentation (docs/, mkdocs.yml) built with warnings as errors, its reference
#      pages generated from the module installed in stage 4, the header and the compiler;
#   6. a manylinux wheel (tools/build_wheels.sh) installed into a fresh virtual environment
#      with no compiler on PATH, a smoke test of it (tests/wheel_smoke.py) and a mypy check of
#      its stubs (tests/typing/check.py);
#   7. the pytest suite with the extension built by clang with ASan + UBSan (the sanitizer
#      runtime preloaded into the interpreter).
# Each stage prints a line "== stage: ok|FAILED"; the script exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=$(nproc)
BUILD=${NBCUDA_TEST_BUILD:-$ROOT/build/test}
FUZZ_SECONDS=${NBCUDA_FUZZ_SECONDS:-30}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH=$CUDA_HOME/bin:$PATH
tests/deps.sh || exit 1

failed=()
stage() {
  local name=$1
  shift
  echo "== $name"
  if "$@"; then
    echo "== $name: ok"
  else
    echo "== $name: FAILED"
    failed+=("$name")
  fi
}

c_tests() { # build-dir compiler extra-cmake-args...
  local dir=$1 cc=$2
  shift 2
  cmake -S "$ROOT" -B "$dir" -DCMAKE_C_COMPILER="$cc" -DNBCUDA_WERROR=ON "$@" >/dev/null &&
    cmake --build "$dir" -j"$JOBS" &&
    ctest --test-dir "$dir" --output-on-failure -j"$JOBS" --timeout 300
}

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export LSAN_OPTIONS=suppressions=$ROOT/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

stage "C tests (gcc)" c_tests "$BUILD/gcc" gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo
stage "C tests (clang, ASan+UBSan)" c_tests "$BUILD/asan" clang -DCMAKE_BUILD_TYPE=Debug -DNBCUDA_SANITIZE=ON

fuzz() {
  cmake -S "$ROOT" -B "$BUILD/fuzz" -DCMAKE_C_COMPILER=clang -DNBCUDA_FUZZ=ON \
    -DNBCUDA_BUILD_TOOLS=OFF -DNBCUDA_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
    cmake --build "$BUILD/fuzz" -j"$JOBS" || return 1
  local ok=0 target
  for target in "$BUILD"/fuzz/tests/fuzz_*; do
    [ -x "$target" ] || continue
    local name
    name=$(basename "$target")
    mkdir -p "$BUILD/fuzz/corpus-$name"
    NBCUDA_FUZZ_PIPELINE=1 "$target" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=4096 \
      "$BUILD/fuzz/corpus-$name" "$ROOT/tests/fuzz/seeds" 2>&1 | tail -n 3 || ok=1
  done
  return $ok
}
stage "fuzz (${FUZZ_SECONDS}s per target)" fuzz

python_tests() {
  [ -f "$ROOT/pyproject.toml" ] || { echo "no pyproject.toml"; return 1; }
  python3 -m venv --system-site-packages "$BUILD/venv" &&
    "$BUILD/venv/bin/python" -m pip install -q --no-build-isolation -C cmake.define.NBCUDA_WERROR=ON "$ROOT" &&
    "$BUILD/venv/bin/python" -m pip install -q -r "$ROOT/tests/dask-requirements.txt" &&
    NBCUDA_TESTDRIVER=$(ls "$BUILD"/gcc/tests/libnbcuda_testdriver.so) \
      "$BUILD/venv/bin/python" -m pytest -q "$ROOT/tests/python" -p no:cacheprovider
}
stage "Python module (pytest)" python_tests

docs() { # the venv of python_tests holds the installed module the Python reference reads
  "$BUILD/venv/bin/python" -c "import nbcuda" || { echo "no venv with nbcuda (made by the Python stage)"; return 1; }
  "$BUILD/venv/bin/python" -m pip install -q -r "$ROOT/docs/requirements.txt" &&
    "$BUILD/venv/bin/python" -m mkdocs build --strict -q -f "$ROOT/mkdocs.yml" -d "$BUILD/docs-site"
}
stage "docs (mkdocs build --strict)" docs

# A wheel as users get it: built by tools/build_wheels.sh for this interpreter, installed into
# a fresh virtual environment (no system site-packages) with no compiler on PATH, smoke-tested
# on the software driver, and its stubs type-checked with mypy (tests/typing).
wheel_test() {
  local dir=$BUILD/wheel venv=$BUILD/wheel/venv wheel
  rm -rf "$dir" && mkdir -p "$dir" &&
    NBCUDA_WHEEL_DIR=$dir/dist tools/build_wheels.sh python3 &&
    wheel=$(ls "$dir"/dist/nbcuda-*.whl) &&
    python3 -m venv "$venv" &&
    "$venv/bin/python" -m pip install -q numpy &&
    env PATH="$venv/bin" CC=/nonexistent/cc "$venv/bin/python" -m pip install -q --no-index \
      "$wheel" &&
    (cd "$dir" && env PATH="$venv/bin" CC=/nonexistent/cc \
      NBCUDA_DRIVER="$(ls "$BUILD"/gcc/tests/libnbcuda_testdriver.so)" \
      "$venv/bin/python" "$ROOT/tests/wheel_smoke.py") &&
    # the stubs and py.typed as a user's type checker finds them in the installed wheel
    "$venv/bin/python" -m pip install -q mypy==2.4.1 &&
    "$venv/bin/python" "$ROOT/tests/typing/check.py"
}
stage "wheel (fresh venv, no compiler)" wheel_test

python_asan_tests() {
  local runtime
  runtime=$(clang -print-file-name=libclang_rt.asan-x86_64.so)
  [ -f "$runtime" ] || { echo "no ASan runtime ($runtime)"; return 1; }
  python3 -m venv --system-site-packages "$BUILD/venv-asan" &&
    CC=clang "$BUILD/venv-asan/bin/python" -m pip install -q --no-build-isolation \
      -C build-dir="$BUILD/asan-skbuild" -C cmake.define.NBCUDA_SANITIZE=ON \
      -C cmake.define.NBCUDA_WERROR=ON "$ROOT" &&
    LD_PRELOAD=$runtime ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
      NBCUDA_BAD_INPUT_TIMEOUT=600 NBCUDA_TESTDRIVER=$(ls "$BUILD"/gcc/tests/libnbcuda_testdriver.so) \
      "$BUILD/venv-asan/bin/python" -m pytest -q "$ROOT/tests/python" -p no:cacheprovider
}
stage "Python module under ASan+UBSan (pytest)" python_asan_tests

if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all test stages passed"
