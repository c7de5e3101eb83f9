#!/usr/bin/env python3
"""The layer check: every #include "..." in src/ and tools/ points down the layers or stays in
its own folder (docs/contributing.md, "Layers").

    base                     -> base
    driver                   -> driver, base
    host                     -> host, driver, base
    compiler                 -> compiler, base
    kernel (src/kernel/)     -> kernel, host, compiler, driver, base
    top (src/*.c, src/*.h)   -> top, kernel, host, compiler, driver, base
    python (src/python/)     -> python
    tools (tools/)           -> tools

and every file may include the public header (include/nbcuda.h), the contract every layer
implements. An include is resolved as the compiler resolves it: beside the including file,
then under src/, include/ and third_party/ (vendored libraries, each usable by the layers
THIRD_PARTY names); headers CMake generates (cmake_generated) belong to
the layer named there.

Arrows that break the rule today are listed in ALLOWED, each with the reason, so the check
passes now; the list may only shrink: an entry that no longer matches an include is an error
too, so that the list stays true. Prints one line per broken arrow (file:line: from -> to),
then the counts. Exit status 0 when every arrow is allowed, 1 otherwise.

    python3 tools/check_layers.py [--root DIR] [--self-test]
"""
import argparse
import os
import re
import sys

DOWN = {
    "base": {"base"},
    "driver": {"driver", "base"},
    "host": {"host", "driver", "base"},
    "compiler": {"compiler", "base"},
    "library": {"library", "base"},
    "kernel": {"kernel", "host", "compiler", "driver", "base"},
    "top": {"top", "kernel", "host", "compiler", "driver", "base"},
    "python": {"python"},
    "tools": {"tools"},
}

# Vendored libraries (third_party/NAME/), below every layer, and the layers that may use each.
THIRD_PARTY = {"nvtx3": {"host"}}

# Headers CMake writes into the build tree, and the layer of the code that includes them.
CMAKE_GENERATED = {"library/all.h": "library"}

# Known exceptions: (including file, included header) -> why it is still there. Remove an
# entry when its include goes; the check fails on an entry that matches nothing.
ALLOWED = {
    ("src/compiler/compile.c", "driver/driver_api.h"):
        "the per-thread error (nbc__set_error) lives in driver/error.c until it moves to base",
    ("src/library/sources.c", "driver/driver_api.h"):
        "the per-thread error (nbc__set_error) lives in driver/error.c until it moves to base",
    ("src/compiler/signature_api.c", "driver/driver_api.h"):
        "the per-thread error (nbc__error_set) lives in driver/error.c until it moves to base",
}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(rel):
    """The layer of a file given by its path relative to the root, or None outside them."""
    parts = rel.split("/")
    if parts[0] == "include":
        return "public"
    if parts[0] == "tools":
        return "tools"
    if parts[0] == "third_party" and len(parts) > 2:
        return "third_party/" + parts[1]
    if parts[0] != "src":
        return None
    if len(parts) == 2:
        return "top"
    return parts[1] if parts[1] in DOWN else None


def resolve(root, rel, name):
    """The included file's path relative to root, or None when it is not in the tree."""
    for base in (os.path.dirname(rel), "src", "include", "third_party"):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate.replace(os.sep, "/")
    return None


def sources(root):
    for top in ("src", "tools"):
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(folder, f), root).replace(os.sep, "/")


def check(root, allowed=None):
    """(errors, counts): the broken arrows and unused exceptions, and what was counted."""
    allowed = ALLOWED if allowed is None else allowed
    errors, used = [], set()
    counts = {"files": 0, "includes": 0, "exceptions used": 0}
    for rel in sources(root):
        src_layer = layer_of(rel)
        if src_layer is None:
            continue
        counts["files"] += 1
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            name = m.group(1)
            counts["includes"] += 1
            target = resolve(root, rel, name)
            if target is not None:
                dst_layer = layer_of(target)
            elif name in CMAKE_GENERATED:
                dst_layer = CMAKE_GENERATED[name]
            else:
                errors.append(f"{rel}:{number}: #include \"{name}\" is not in the tree "
                              "(add it to CMAKE_GENERATED if CMake writes it)")
                continue
            if dst_layer == "public" or dst_layer in DOWN[src_layer]:
                continue
            if dst_layer.startswith("third_party/") and \
                    src_layer in THIRD_PARTY.get(dst_layer[len("third_party/"):], ()):
                continue
            key = (rel, name)
            if key in allowed:
                used.add(key)
                continue
            way = "up" if src_layer in DOWN.get(dst_layer, set()) else "sideways"
            errors.append(f"{rel}:{number}: {src_layer} -> {dst_layer} ({way}): "
                          f"#include \"{name}\"")
    for key in sorted(set(allowed) - used):
        errors.append(f"tools/check_layers.py: ALLOWED lists {key[0]} -> {key[1]}, which no "
                      "longer exists: remove the entry")
    counts["exceptions used"] = len(used)
    counts["exceptions allowed"] = len(allowed)
    return errors, counts


def self_test():
    """The check on a small tree built here: it must name an upward and a sideways arrow with
    file:line, pass the allowed ones and the public header, and flag a stale exception."""
    import tempfile
    files = {
        "include/nbcuda.h": "",
        "src/base/util.h": "",
        "src/base/util.c": '#include "base/util.h"\n#include "nbcuda.h"\n',
        "src/host/host.h": '#include "base/util.h"\n',
        "src/compiler/compiler.h": "",
        "src/compiler/lex.c": '#include "compiler.h"\n\n#include "host/host.h"\n',
        "src/base/bad.c": '/* x */\n#include "host/host.h"\n',
        "src/info.c": '#include "compiler/compiler.h"\n#include "host/host.h"\n',
        "src/python/mod.c": '#include "nbcuda.h"\n#include "base/util.h"\n',
        "tools/cli.c": '#include "nbcuda.h"\n',
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        allowed = {("src/python/mod.c", "base/util.h"): "test",
                   ("tools/cli.c", "compiler/compiler.h"): "stale"}
        errors, counts = check(root, allowed)
    expected = [
        'src/base/bad.c:2: base -> host (up): #include "host/host.h"',
        'src/compiler/lex.c:3: compiler -> host (sideways): #include "host/host.h"',
        "tools/check_layers.py: ALLOWED lists tools/cli.c -> compiler/compiler.h, which no "
        "longer exists: remove the entry",
    ]
    if errors != expected or counts["exceptions used"] != 1 or counts["files"] != 9:
        print("self-test failed:\n  got      %r %r\n  expected %r" % (errors, counts, expected))
        return 1
    print("self-test: ok")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                        help="the source tree (default: this script's parent folder)")
    parser.add_argument("--self-test", action="store_true",
                        help="check the checker on a small tree built in a temporary folder")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    root = os.path.abspath(args.root)
    errors, counts = check(root)
    for e in errors:
        print(e)
    print("layer check: " + ", ".join(f"{v} {k}" for k, v in counts.items()) +
          f", {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
