"""Writes what the compiler makes of every case of tests/corpus/ and tests/gpu/cases/ into a
folder, so two builds of the compiler can be compared byte for byte (`diff -r`).

A refactoring of the compiler (a file split, a table that replaces a chain of strcmp) must not
change its output. For every case (function, signature, kind) this runs the CLI three times
and keeps each result in its own file:
  <module>.<function>.<n>.types   --dump=types (what typing decided)
  <module>.<function>.<n>.ll      --dump=ir (the NVVM IR handed to libNVVM)
  <module>.<function>.<n>.ptx     the PTX libNVVM makes of it
Kernels are compiled as tests/gpu/corpus_compare.py compiles them (--kernel --abi numba
--cc 9.0); device functions as device functions (C ABI) and, as corpus_compare.py runs them,
through a wrapper kernel `out[i] = f(a0[i], ...)` (files <module>.nbwrap_<function>.<n>.*).
A compile that fails keeps its exit status and diagnostics in the .ptx file, so a change in
an error shows up in the diff as well.

Usage: python3 tools/compiler_baseline.py --cli build/dev/nbcuda --out /tmp/before
       (change the compiler, rebuild)
       python3 tools/compiler_baseline.py --cli build/dev/nbcuda --out /tmp/after
       diff -r /tmp/before /tmp/after
"""
import argparse
import ast
import os
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ("tests/corpus", "tests/gpu/cases")


def cases_of(source):
    """The module's CASES list. The module is not imported (it imports nbcuda or numba): its
    top-level assignments (constants such as N = 1024, then CASES) run without builtins."""
    ns = {"__builtins__": {}}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Assign):
            continue
        try:
            exec(compile(ast.Module([node], []), "<cases>", "exec"), ns)
        except Exception:  # an assignment that needs more than literals: not a case's
            pass
    return ns.get("CASES", [])


def wrapper(name, arg_types, source):
    """corpus_compare.py's wrapper kernel around device function `name`, and its signature
    (the result's type read from the case's signature, else float64)."""
    args = ", ".join(f"a{k}" for k in range(len(arg_types)))
    call = ", ".join(f"a{k}[i]" for k in range(len(arg_types)))
    text = source + textwrap.dedent(f"""

        def nbwrap_{name}(out, {args}):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = {name}({call})
        """)
    return text


def run(cli, path, name, sig, extra, what):
    cmd = [cli, "compile", f"{path}:{name}", "--sig", sig, "--cc", "9.0"] + extra
    if what != "ptx":
        cmd.append(f"--dump={what}")
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode != 0:
        return b"exit status %d\n" % r.returncode + r.stderr
    return r.stdout


def compile_all(cli, out, tmp, label, path, name, sig, extra):
    for what, ext in (("types", "types"), ("ir", "ll"), ("ptx", "ptx")):
        with open(os.path.join(out, f"{label}.{ext}"), "wb") as f:
            f.write(run(cli, path, name, sig, extra, what))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    cli = os.path.abspath(args.cli)
    os.makedirs(args.out, exist_ok=True)
    count = 0
    with tempfile.TemporaryDirectory(prefix="nbcuda-baseline-") as tmp:
        for folder in FOLDERS:
            for fname in sorted(os.listdir(os.path.join(ROOT, folder))):
                if not fname.endswith(".py"):
                    continue
                path = os.path.join(ROOT, folder, fname)
                source = open(path).read()
                module = fname[:-3]
                for n, case in enumerate(cases_of(source)):
                    name, sig, kind, inputs = case
                    label = f"{module}.{name}.{n}"
                    if kind == "kernel":
                        compile_all(cli, args.out, tmp, label, path, name, sig,
                                    ["--kernel", "--abi", "numba"])
                        count += 1
                        continue
                    compile_all(cli, args.out, tmp, label, path, name, sig, [])
                    arg_types = [dt for dt, _ in inputs["args"]]
                    ret = sig.split("(", 1)[0].strip() or "float64"
                    wpath = os.path.join(tmp, f"{module}_{n}.py")
                    with open(wpath, "w") as f:
                        f.write(wrapper(name, arg_types, source))
                    wsig = f"void({ret}[::1], " + ", ".join(f"{t}[::1]" for t in arg_types) + ")"
                    wsig = wsig.replace("bool[", "boolean[")
                    compile_all(cli, args.out, tmp, f"{module}.nbwrap_{name}.{n}", wpath,
                                f"nbwrap_{name}", wsig, ["--kernel", "--abi", "numba"])
                    count += 1
    print(f"{count} cases written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
