#!/usr/bin/env python3
"""Every nbc_ function include/nbcuda.h declares has an entry in the C API reference.

The reference page is generated from the header by docs/gen/c_reference.py, which parses
declarations and their comments. This check finds the header's functions independently
(comments and preprocessor lines removed, the rest split at ';', every statement that is not
a typedef and names an nbc_ function before its '(') and fails, naming them, when the
generated page lacks an entry for one: a declaration the generator cannot read stays out of
the reference no longer silently. `--self-test` also checks that a page with an entry removed
is caught.

Run by ctest (docs_c_reference) and by hand: python3 tests/docs/check_c_reference.py
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "docs", "gen"))
import c_reference  # noqa: E402


def declared_functions(path):
    with open(path, encoding="utf-8") as f:
        src = f.read()
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", src, flags=re.M)
    src = src.replace('extern "C" {', " ")
    names = set()
    for stmt in src.split(";"):
        stmt = stmt.strip().lstrip("}").strip()
        if not stmt or stmt.startswith("typedef"):
            continue
        m = re.match(r"[\w\s\*]*?\b(nbc_\w+)\s*\(", stmt)
        if m:
            names.add(m.group(1))
    return names


def missing(header, page):
    return sorted(declared_functions(header) - c_reference.documented_functions(page))


def main(argv):
    header = os.path.join(ROOT, "include", "nbcuda.h")
    page = c_reference.page(header)
    declared = declared_functions(header)
    if len(declared) < 100:
        print(f"found only {len(declared)} nbc_ functions in {header}: the check is broken")
        return 1
    gone = missing(header, page)
    if gone:
        print("nbc_ functions of include/nbcuda.h missing from the C API reference "
              "(docs/gen/c_reference.py cannot read their declarations): " + ", ".join(gone))
        return 1
    if "--self-test" in argv:
        victim = sorted(declared)[len(declared) // 2]
        cut = re.sub(rf"^### `{victim}` .*$", "", page, flags=re.M)
        if victim not in (set(declared) - c_reference.documented_functions(cut)):
            print(f"self-test: removing {victim}'s entry was not noticed")
            return 1
    print(f"{len(declared)} nbc_ functions, each in the C API reference")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
