"""The kernel language's reference tables, generated from the compiler's own tables.

What a kernel may call is decided by tables in src/compiler/ (the cuda module's names in
lib_cuda.c, libdevice/fp16/bf16 in their generated headers, math in lib_math.c, cmath in
lib_cmath.c, numpy's ufuncs and dtypes in lib_numpy.c, the operator module in
infer_operator.c, the builtins in infer_global.c) and checked against numba-cuda's typing in
tests/data/*.tsv. This script reads those files and writes the tables of docs'
kernel-language reference, so the page lists exactly what the compiler accepts. A table that cannot be found (its file was
reorganised) is an error, not an empty table: the docs build fails and says which.

Run alone, it prints the page: `python3 docs/gen/language_tables.py`.
"""
import collections
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPILER = os.path.join(ROOT, "src", "compiler")


class TableNotFound(Exception):
    pass


def _read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def _need(rows, what):
    if not rows:
        raise TableNotFound(f"docs/gen/language_tables.py: no rows found for {what}")
    return rows


def _block(text, start, what):
    """The text from `start` to the end of its initializer ('};')."""
    i = text.find(start)
    if i < 0:
        raise TableNotFound(f"docs/gen/language_tables.py: '{start}' not found ({what})")
    return text[i:text.index("};", i)]


def cuda_names():
    """[(section comment, [(name, kind, call)])] of lib_cuda.c's KERNEL_NAMES (an intrinsic's
    I row is a FUNCTION called through the INTRINSIC path)."""
    src = _read("src", "compiler", "lib_cuda.c")
    i = src.index("#define KERNEL_NAMES(X, I)")
    body = src[i:src.index("\n\n", i)]
    sections, cur = [], None
    for line in body.split("\n"):
        m = re.search(r"/\*\s*(.*?)\s*\*/", line)
        if m:
            cur = (m.group(1), [])
            sections.append(cur)
            continue
        m = re.search(r'X\("([\w.]+)",\s*(\w+),\s*(\w+)\)', line)
        intrinsic = re.search(r'I\("([\w.]+)",(?:\s*\w+,){4}\s*\w+\)', line)
        if intrinsic and cur is not None:
            cur[1].append((intrinsic.group(1), "FUNCTION", "INTRINSIC"))
            continue
        if m and cur is not None:
            members = len(re.findall(r'X\("' + m.group(1) + r'\.', body))
            if m.group(2) == "NAMESPACE" and cur[1] and members >= 6:
                # a large namespace (cuda.atomic) listed after another group's rows gets a
                # section of its own
                cur = (f"cuda.{m.group(1)}", [])
                sections.append(cur)
            cur[1].append(m.groups())
    return _need(sections, "lib_cuda.c KERNEL_NAMES")


def libdevice():
    src = _read("src", "compiler", "libdevice_funcs.h")
    return _need(re.findall(r'X\((\w+), (\w+), (\d+), "(\w*)"\)', src), "libdevice_funcs.h")


def half_funcs(header):
    src = _read("src", "compiler", header)
    return _need(re.findall(r"X\((\w+), (\w+), '(\w)', \"(\w*)\"\)", src), header)


def math_funcs():
    """[(name, template)] of lib_math.c's MATH_FUNCTIONS rows, F(name, template, ...): the
    template's name read as words (unary_fp16: "unary, float16", pow_: "pow")."""
    src = _read("src", "compiler", "lib_math.c")
    i = src.index("#define MATH_FUNCTIONS(F)")
    body = src[i:src.index("\n\n", i)]
    rows = []
    for name, template in re.findall(r'F\("(\w+)",\s*(\w+),', body):
        kind = template.rstrip("_").replace("_fp16", ", float16").replace("_", " ")
        rows.append((name, kind))
    return _need(sorted(rows), "lib_math.c MATH_FUNCTIONS")


def cmath_funcs():
    block = _block(_read("src", "compiler", "lib_cmath.c"), "} functions[] = {", "cmath")
    kinds = {"LOWERED": "complex64/complex128, real arguments converted",
             "PREDICATE": "predicate", "OVERLOAD": "complex arguments only",
             "RECT": "rect(r, phi)"}
    rows = re.findall(r'\{"(\w+)",\s*NBC__CMATH_(\w+)\}', block)
    return _need([(n, kinds.get(k, k.lower())) for n, k in rows], "lib_cmath.c functions")


def operator_funcs():
    block = _block(_read("src", "compiler", "infer_operator.c"), "} functions[] = {", "operator")
    return _need(re.findall(r'\{"(\w+)",\s*(\w+),', block), "infer_operator.c functions")


def builtins():
    src = _read("src", "compiler", "infer_global.c")
    m = re.search(r"builtin_names\[\]\s*=\s*\{(.*?)\};", src, re.S)
    if not m:
        raise TableNotFound("docs/gen/language_tables.py: infer_global.c builtin_names not found")
    return _need(re.findall(r'"(\w+)"', m.group(1)), "infer_global.c builtin_names")


def numpy_ufuncs():
    src = _read("src", "compiler", "lib_numpy.c")
    i = src.index("#define UFUNCS(U)")
    block = src[i:src.index("\n\n", i)]
    rows = re.findall(r'U\("(\w+)",\s*(NULL|"\w+"),\s*(\d),\s*(\w+),\s*(NULL|"\w+"),', block)
    return _need([(n, a.strip('"') if a != "NULL" else "", int(nin), loops.lower(),
                   m.strip('"') if m != "NULL" else "") for n, a, nin, loops, m in rows],
                 "lib_numpy.c UFUNCS")


def numpy_dtypes():
    block = _block(_read("src", "compiler", "lib_numpy.c"), "} dtypes[] = {", "numpy dtypes")
    by_kind = collections.OrderedDict()
    for name, kind in re.findall(r'\{"(\w+)",\s*NBC__T_(\w+)\}', block):
        by_kind.setdefault(kind.lower(), []).append(name)
    return _need(list(by_kind.items()), "lib_numpy.c dtypes")


def typing_counts(name):
    """{operation: rows} of a typing table in tests/data, checked row by row by the tests."""
    counts = collections.Counter()
    with open(os.path.join(ROOT, "tests", "data", name), encoding="utf-8") as f:
        next(f)
        for line in f:
            if line.strip():
                counts[line.split("\t")[0]] += 1
    return _need(counts, f"tests/data/{name}")


LETTERS = {"f": "float32", "d": "float64", "h": "int16", "i": "int32", "l": "int64"}
HALF = {"h": "float16", "B": "bfloat16", "f": "float32", "d": "float64", "b": "bool",
        "a": "int8", "A": "uint8", "s": "int16", "S": "uint16", "i": "int32", "I": "uint32",
        "l": "int64", "L": "uint64"}
KINDS = {"F32": "float32", "F64": "float64", "I16": "int16", "I32": "int32", "I64": "int64",
         "VOID": "none"}


def _libdevice_sig(ret, codes):
    args, outs = [], []
    for t, how in zip(codes[::2], codes[1::2]):
        (outs if how == "p" else args).append(LETTERS[t])
    result = [KINDS.get(ret, ret.lower())] if ret != "VOID" else []
    result += outs
    res = result[0] if len(result) == 1 else "(" + ", ".join(result) + ")" if result else "none"
    return f"({', '.join(args)}) → {res}"


def page():
    out = ["# Kernel language reference", "",
           "Generated from the compiler's own tables when the documentation is built "
           "(`docs/gen/language_tables.py` reads `src/compiler/`), so it lists exactly what "
           "the compiler accepts. How each construct behaves is in the "
           "[kernel language guide](../guide/kernel-language.md).", ""]
    # statements: the grammar is not a table in the compiler; this list follows parse.c
    out += ["## Statements and expressions {#statements}", "",
            "| construct | in kernels and device functions |", "|---|---|"]
    for row in STATEMENTS:
        out.append(f"| {row[0]} | {row[1]} |")
    out += ["", "## Types {#types}", "", "| type | spelled in signatures |", "|---|---|"]
    for row in TYPES:
        out.append(f"| {row[0]} | {row[1]} |")
    out += ["", "numpy's names of the scalar types, usable as `np.<name>` (dtypes and "
            "conversions; `lib_numpy.c`):", "", "| type | numpy names |", "|---|---|"]
    for kind, names in numpy_dtypes():
        out.append(f"| {kind} | " + ", ".join(f"`{n}`" for n in names) + " |")
    out += ["", "## Builtins {#builtins}", "",
            ", ".join(f"`{b}`" for b in builtins()) + " (`infer_global.c`).", ""]
    out += ["## The cuda module {#cuda}", "",
            "`cuda.<name>` in a kernel, or the name imported (`from nbcuda import grid`) "
            "or bound at module level (`add = cuda.atomic.add`); `lib_cuda.c`.", ""]
    for title, rows in cuda_names():
        vectors = [r for r in rows if r[2] == "VECTOR"]
        rows = [r for r in rows if r[2] != "VECTOR"]
        title = title if title.startswith("cuda.") else title[0].upper() + title[1:]
        out += ["### " + title.replace("<", "&lt;").replace(">", "&gt;"), ""]
        if rows:
            out += ["| name | kind |", "|---|---|"]
            out += [f"| `cuda.{n}` | {k.lower()} |" for n, k, _ in rows]
            out.append("")
        if vectors:
            out += [", ".join(f"`{n}`" for n, _, _ in vectors) + ".", ""]
    ld = libdevice()
    out += ["## math {#math}", "",
            "`import math` / `from math import ...`, through libdevice (float32 variants for "
            "float32 arguments, fast variants under `fastmath`); `lib_math.c`. *float16*: also "
            "defined for float16 arguments (cuda_fp16.h's functions).", "",
            "| function | cases |", "|---|---|"]
    out += [f"| `math.{n}` | {k} |" for n, k in math_funcs()]
    out += ["", "## cmath {#cmath}", "",
            "numba-cuda's algorithms, ported in `src/library/cmath.py`; `lib_cmath.c`.", "",
            "| function | arguments |", "|---|---|"]
    out += [f"| `cmath.{n}` | {k} |" for n, k in cmath_funcs()]
    out += ["", "## operator {#operator}", "", "| function | kind |", "|---|---|"]
    out += [f"| `operator.{n}` | {k.lower()} |" for n, k in operator_funcs()]
    out += ["", "## numpy ufuncs {#numpy}", "",
            "Called on scalars, or on arrays with an explicit output (`np.sin(x, out)`); "
            "typed by numpy's loops as numba types them (`lib_numpy.c`). *loops*: the input "
            "types the ufunc has loops for.", "",
            "| ufunc | also | inputs | loops | computed as |", "|---|---|---|---|---|"]
    for n, alias, nin, loops, m in numpy_ufuncs():
        out.append(f"| `np.{n}` | {'`np.' + alias + '`' if alias else ''} | {nin} | {loops} "
                   f"| {'`math.' + m + '`' if m else ''} |")
    out += ["", "## Typing checked against numba-cuda {#typing}", "",
            "Each row of these tables is a typing numba-cuda gave, compiled by nbcuda and "
            "compared by the tests (`test_typing_table`, `test_numpy`): operators and builtins "
            "in `tests/data/numba_typing.tsv`, numpy ufuncs in `tests/data/numpy_typing.tsv`.",
            "", "| operation | typings checked |", "|---|---|"]
    for op, c in sorted(typing_counts("numba_typing.tsv").items()):
        out.append(f"| `{op}` | {c} |")
    out += ["", "| ufunc | typings checked |", "|---|---|"]
    for op, c in sorted(typing_counts("numpy_typing.tsv").items()):
        out.append(f"| `np.{op}` | {c} |")
    out += ["", f"## libdevice ({len(ld)} functions) {{#libdevice}}", "",
            "`cuda.libdevice.<name>` (or `from nbcuda import libdevice`, numba's "
            "`numba.cuda.libdevice`): the arguments convert to the declared types; functions "
            "that store extra results through pointers return tuples. "
            "`libdevice_funcs.h`, generated by `tools/gen_libdevice.py`.", "",
            "| function | signature |", "|---|---|"]
    out += [f"| `{n}` | {_libdevice_sig(r, c)} |" for n, r, _, c in ld]
    for header, mod, title in (("fp16_funcs.h", "fp16", "numba.cuda.fp16"),
                               ("bf16_funcs.h", "bf16", "numba.cuda.bf16")):
        rows = half_funcs(header)
        out += ["", f"## {title} ({len(rows)} functions) {{#{mod}}}", "",
                f"`cuda.{mod}.<name>`, each calling cuda_{mod}.h's function (`{header}`).", "",
                "| function | calls | signature |", "|---|---|---|"]
        out += [f"| `{n}` | `{c}` | ({', '.join(HALF[a] for a in args)}) → {HALF[r]} |"
                for n, c, r, args in rows]
    return "\n".join(out) + "\n"


STATEMENTS = [
    ("`x = e`, `a, b = t`, `x = y = e`, `x op= e`", "assignment, tuple unpacking, chained and augmented assignment"),
    ("`if` / `elif` / `else`", "yes; branches on compile-time constants are pruned (`if a.ndim == 2:`)"),
    ("`while`, `for ... in range(...)`", "yes, with `break`, `continue` and `else`"),
    ("`for` over an array, tuple, `enumerate`, `zip`, `np.ndindex`, `a.flat`, `literal_unroll`", "yes"),
    ("`return`, `pass`", "yes; a kernel returns nothing"),
    ("`raise`, `assert`", "the thread ends; reported to the host by `debug=True` kernels"),
    ("`def` inside a function, `lambda`", "nested functions and closures (`nonlocal` too)"),
    ("`import` / `from ... import` at module level", "modules, their device functions and constants"),
    ("conditional expressions, chained comparisons, `and` / `or` / `not`", "yes, short-circuit"),
    ("`is`, `is not`, `in`, `not in`", "as numba's"),
    ("`print(...)`", "numbers, booleans, string literals and tuples of them (`vprintf`)"),
    ("`with`, `try`, `global`, `del`, `yield`, classes", "not in kernels (refused with the statement named)"),
]

TYPES = [
    ("boolean, int8…int64, uint8…uint64", "`boolean`, `int32`, `uint64`, `i4`, `u8`…"),
    ("float16, float32, float64", "`float16`, `float32`, `f8`…"),
    ("bfloat16 (compute capability ≥ 8.0)", "`bfloat16`"),
    ("complex64, complex128", "`complex64`, `c16`"),
    ("arrays of any rank and layout", "`float32[:]`, `float32[::1]`, `float64[:, ::1]`, `float64[::1, :]`, `array(float32, 0d, C)`"),
    ("tuples, named tuples", "`UniTuple(float64, 2)`, `Tuple((int32, float64))`, `NamedTuple(Point, x: int64, y: float64)`"),
    ("records (structured dtypes)", "`Record(a[type=float64;offset=0],...;24;True)` (`from_dtype(dt)`)"),
    ("strings in arrays and records", "`[char x 5][::1]`, `[unichr x 5]`"),
    ("datetime64, timedelta64", "`NPDatetime('D')`, `NPTimedelta('s')`, `datetime64[D]`"),
    ("CUDA vector types", "`cuda.float32x4`, `float4`…"),
    ("pointers", "`CPointer(uint8)`, `uint8*`"),
    ("Optional, None", "`OptionalType(int64)`, `none`"),
    ("enum members", "`Enum<int64>(module.Color)`, `IntEnum<int64>(module.Shape)`"),
]


if __name__ == "__main__":
    sys.stdout.write(page())
