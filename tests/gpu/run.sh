#!/usr/bin/env bash
# The one script for the GPU machine (H200, no network): builds nbcuda there, runs the C tests
# against the real driver, the GPU-only tests, the Python suite, the corpus comparison with
# numba-cuda, and the benchmarks; prints a summary table last. Logs go to $OUT (the device
# tool's output folder) or /tmp/nbcuda-gpu.
#   tests/gpu/run.sh [stage ...]    stages: build ctest python corpus numba bench (default: all)
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
LOG=${OUT:-/tmp/nbcuda-gpu}
mkdir -p "$LOG"
BUILD=$ROOT/build/gpu
JOBS=$(nproc)
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH=$CUDA_HOME/bin:$PATH
export PYTHONUNBUFFERED=1
export NUMBA_DISABLE_PERFORMANCE_WARNINGS=1 # small comparison grids are intended
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build ctest python corpus numba bench)
want() { [[ " ${stages[*]} " == *" $1 "* ]]; }
summary=()
record() { summary+=("$(printf '| %-28s | %-6s | %s |' "$1" "$2" "$3")"); }

# numba-cuda 0.30.4 breaks on numpy 2.5: tests/gpu/sitecustomize.py aliases the removed names
# when numba is imported.
export PYTHONPATH=$ROOT/tests/gpu${PYTHONPATH:+:$PYTHONPATH}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 2

if want build; then
  if cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DNBCUDA_TEST_WITH_REAL_DRIVER=ON >"$LOG/build.log" 2>&1 &&
    cmake --build "$BUILD" -j"$JOBS" >>"$LOG/build.log" 2>&1; then
    record build ok "$(gcc --version | head -n1)"
  else
    tail -n 30 "$LOG/build.log"
    record build FAIL "see build.log"
  fi
  "$BUILD/nbcuda" detect >"$BUILD/detect.txt" 2>&1
  rc=$?
  cat "$BUILD/detect.txt" | tee -a "$LOG/build.log"
  record "nbcuda detect" "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(head -n1 "$BUILD/detect.txt")"
fi

if want ctest; then
  ctest --test-dir "$BUILD" --output-on-failure -j4 --timeout 300 >"$LOG/ctest.log" 2>&1
  rc=$?
  grep -E "^(ok|FAIL|skip) |tests passed|tests failed" "$LOG/ctest.log" | grep -vE "^ok " | tail -n 40
  record "C tests (real driver)" "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -E 'tests passed' "$LOG/ctest.log" | tail -n1)"
fi

if want python; then
  if [ -f pyproject.toml ] && python3 -m pip install -q --no-build-isolation --no-deps . >"$LOG/pytest.log" 2>&1; then
    python3 -X faulthandler -m pytest -q -rsp -p no:cacheprovider tests/python \
      >>"$LOG/pytest.log" 2>&1
    rc=$?
    tail -n 25 "$LOG/pytest.log"
    # the result line, not what numba-cuda's finalizers print at exit after it
    record "pytest (real driver)" "$([ $rc = 0 ] && echo ok || echo FAIL)" \
      "$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$LOG/pytest.log" | tail -n1)"
  else
    tail -n 20 "$LOG/pytest.log" 2>/dev/null
    record "pytest (real driver)" FAIL "install failed"
  fi
fi

if want corpus; then
  python3 tests/gpu/corpus_compare.py --cli "$BUILD/nbcuda" --corpus tests/corpus \
    >"$LOG/corpus.log" 2>&1
  rc=$?
  cat "$LOG/corpus.log" | grep -vE "^PASS" | tail -n 40
  record "corpus vs numba-cuda" "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -E '^corpus:' "$LOG/corpus.log")"
  # Extra cases of our own (edge semantics, float16) in the corpus format.
  if ls tests/gpu/cases/*.py >/dev/null 2>&1; then
    python3 tests/gpu/corpus_compare.py --cli "$BUILD/nbcuda" --corpus tests/gpu/cases \
      >"$LOG/cases.log" 2>&1
    rc=$?
    grep -vE "^PASS" "$LOG/cases.log" | grep -vE "Warning|warn\(" | tail -n 20
    record "extra cases vs numba-cuda" "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -E '^corpus:' "$LOG/cases.log")"
  fi
fi

if want numba; then
  # numba-cuda's own kernel tests with `from numba import cuda` bound to nbcuda: a figure, not
  # a gate (tests of numba-cuda's internals fail here by construction); failures in the log.
  python3 -c "import nbcuda" 2>/dev/null || python3 -m pip install -q --no-build-isolation --no-deps .
  # numba-cuda's warning tests expect its default switches: none of them off
  # Two figures: passed on nbcuda alone, and passed with numba-cuda's own implementation
  # answering names nbcuda lacks (the fallbacks, listed; per test in numba_suite.json).
  env -u NUMBA_DISABLE_PERFORMANCE_WARNINGS python3 tests/gpu/numba_suite.py --verbose \
    --json "$LOG/numba_suite.json" >"$LOG/numba_suite.log" 2>&1
  grep -E "^\| |^numba-cuda tests|^(first|added|third|fourth|fifth|sixth|seventh) set|^passed on nbcuda alone|^fallbacks used|^  " \
    "$LOG/numba_suite.log" | tail -n 140
  record "numba-cuda's tests (info)" done "$(grep -E '^numba-cuda tests' "$LOG/numba_suite.log" | sed 's/ (.*//'); $(grep -E '^passed on nbcuda alone' "$LOG/numba_suite.log")"
fi

if want bench; then
  # Every benchmark of bench/RESULTS.md, each writing its tables as JSON to $LOG/bench/, from
  # which bench/results.py writes $LOG/RESULTS.md (copy it to bench/RESULTS.md, or run
  # `python3 bench/results.py DIR` on the fetched folder). meta.json names the run: date,
  # machine, commit ($NBCUDA_COMMIT when the tree has no .git). The probes (cai_probe.py,
  # free_waits_probe.py, *_callgrind.py) answer one question each and are run by hand.
  python3 -c "import nbcuda" 2>/dev/null || python3 -m pip install -q --no-build-isolation --no-deps .
  BENCH=$LOG/bench
  rm -rf "$BENCH"
  mkdir -p "$BENCH"
  # NBCUDA_COMMIT, when given, is the commit the copied tree is: the copy's own .git (if any)
  # may be of another commit, and is then not asked
  if [ -n "${NBCUDA_COMMIT:-}" ]; then
    commit=$NBCUDA_COMMIT
  else
    commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
    [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit (modified)"
  fi
  gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n1)
  cpu=$(grep -m1 "model name" /proc/cpuinfo 2>/dev/null | sed 's/.*: //')
  python3 - "$BENCH/meta.json" "$commit" "$gpu" "$cpu" <<'PY'
import datetime, json, platform, sys
path, commit, gpu, cpu = sys.argv[1:5]
name, _, driver = gpu.partition(", ")
json.dump({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "commit": commit, "gpu": name or None, "driver": driver or None, "cpu": cpu or None,
           "host": platform.node(), "python": platform.python_version(),
           "machine": ", ".join(x for x in (name, driver and "driver " + driver, cpu) if x)},
          open(path, "w"), indent=1)
PY
  bench_failed=()
  # NBCUDA_BENCH="host_calls host_py ..." runs only those (to stay within a time limit: run the
  # rest in a second call and put both bench/ folders' JSON in one folder for results.py)
  run_bench() { # name command...: the command's output to bench.log, its status remembered
    [ -n "${NBCUDA_BENCH:-}" ] && [[ " $NBCUDA_BENCH " != *" ${1%_reuse_off} "* ]] && return 0
    echo "## $1: ${*:2}"
    "${@:2}" || bench_failed+=("$1")
    echo
  }
  HC=$BUILD/tests/host_calls
  {
    run_bench host_calls sh -c "'$HC' --json > '$BENCH/host_calls.json'"
    run_bench host_calls_reuse_off sh -c "NBCUDA_REUSE=0 '$HC' --json > '$BENCH/host_calls_reuse_off.json'"
    run_bench host_py python3 bench/host_py.py --batches 15 \
      --host-calls-lib "$BUILD/tests/libhost_calls.so" --json "$BENCH/host_py.json"
    run_bench launch_batch python3 bench/launch_batch.py \
      --host-calls-lib "$BUILD/tests/libhost_calls.so" --json "$BENCH/launch_batch.json"
    run_bench kernels python3 bench/kernels.py --cli "$BUILD/nbcuda" --json "$BENCH/kernels.json"
    run_bench compile_numba python3 bench/compile_numba.py \
      --bench-bin "$BUILD/tests/compile_bench" --json "$BENCH/compile_numba.json"
  } >"$LOG/bench.log" 2>&1
  cat "$LOG/bench.log"
  python3 bench/results.py "$BENCH" -o "$LOG/RESULTS.md" >>"$LOG/bench.log" 2>&1
  rc=$?
  if [ $rc != 0 ]; then
    record benchmarks FAIL "results.py failed: see bench.log"
  elif [ ${#bench_failed[@]} -gt 0 ]; then
    record benchmarks FAIL "failed: ${bench_failed[*]} (bench.log); RESULTS.md written"
  else
    record benchmarks ok "RESULTS.md and bench/*.json in $LOG"
  fi
fi

echo
echo "| stage                        | result | detail |"
echo "|------------------------------|--------|--------|"
printf '%s\n' "${summary[@]}"
printf '%s\n' "${summary[@]}" >"$LOG/summary.txt"
! printf '%s\n' "${summary[@]}" | grep -q "| FAIL"
