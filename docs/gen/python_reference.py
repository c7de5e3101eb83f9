"""The Python API reference page, generated from the installed nbcuda module.

The docs build imports nbcuda and walks its public names (those not starting with '_'): each
function, class and module is shown with its signature and docstring, under the section of
SECTIONS that lists it; classes with their public methods and properties. Type objects
(nbcuda.float32, ...) and the kernel language's host-side placeholders (nbcuda.grid, ...)
are tables of their own, found by their class. A public name that no section lists, or a
listed name the module lacks, is an error (MissingNames): the docs build fails, and so does
tests/python/test_docs_reference.py, so new API cannot go undocumented.

Run alone, it prints the page: `python3 docs/gen/python_reference.py`.
"""
import inspect
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from c_reference import _escape  # noqa: E402  (one Markdown escaper for both pages)

# (title, introduction, names). Order is the page's order.
SECTIONS = [
    ("Devices and contexts",
     "Detecting CUDA, choosing a device, the current context. Guide: [host API](../guide/host-api.md).",
     ["detect", "info", "is_available", "cuda_error", "is_supported_version", "runtime", "gpus",
      "list_devices", "select_device", "get_current_device", "current_context",
      "require_context", "close", "synchronize", "Device", "Context",
      "is_float16_supported", "is_bfloat16_supported", "is_fp8_supported"]),
    ("Streams, events and profiling",
     "Guide: [streams and events](../guide/streams-events.md).",
     ["stream", "default_stream", "legacy_default_stream", "per_thread_default_stream",
      "external_stream", "Stream", "event", "event_elapsed_time", "Event", "profile_start",
      "profile_stop", "profiling"]),
    ("Device arrays",
     "Guide: [memory](../guide/memory.md).",
     ["to_device", "device_array", "device_array_like", "DeviceNDArray", "In", "Out", "InOut"]),
    ("Host memory the device can reach",
     "Guide: [memory](../guide/memory.md#host-memory-the-device-can-reach).",
     ["pinned", "pinned_array", "pinned_array_like", "mapped", "mapped_array",
      "mapped_array_like", "managed_array", "managed_array_like"]),
    ("Raw memory and memory managers",
     "Guide: [memory](../guide/memory.md#raw-memory-numbas-context-allocators).",
     ["MemoryPointer", "MemoryInfo", "defer_cleanup", "set_memory_manager",
      "BaseCUDAMemoryManager", "HostOnlyCUDAMemoryManager", "NumbaCUDAMemoryManager",
      "GetIpcHandleMixin"]),
    ("Interprocess memory",
     "Guide: [memory](../guide/memory.md#memory-shared-between-processes-cuda-ipc).",
     ["IpcHandle", "IpcArrayHandle", "open_ipc_array"]),
    ("Interoperability",
     "Guide: [interop](../guide/interop.md).",
     ["is_cuda_array", "as_cuda_array", "from_cuda_array_interface", "from_dlpack",
      "from_dtype"]),
    ("Kernels and device functions",
     "Guide: [kernels](../guide/kernels.md).",
     ["jit", "declare_device", "literal_unroll"]),
    ("Compiling ahead of time",
     "Guide: [compile and AOT](../guide/compile.md).",
     ["compile", "compile_ptx", "compile_for_current_device", "compile_ptx_for_current_device",
      "compile_all"]),
    ("Code to link",
     "Guide: [linking](../guide/linking.md).",
     ["LinkableCode", "CUSource", "PTXSource", "Cubin", "Fatbin", "LTOIR", "Object", "Archive"]),
    ("GPU ufuncs and reductions",
     "Guide: [ufuncs, reductions, random numbers](../guide/library.md).",
     ["vectorize", "guvectorize", "UFunc", "GUFunc", "reduce", "Reduce"]),
    ("Modules and settings",
     "Guide: [configuration](../guide/configuration.md).",
     ["config", "random", "types"]),
    ("Errors",
     "Guide: [troubleshooting](../guide/troubleshooting.md#errors).",
     ["CompileError", "TypingError", "NvvmError", "NvvmSupportError", "LinkerError",
      "CudaAPIError", "CudaDriverError", "CudaRuntimeError", "CudaSupportError",
      "CCSupportError", "KernelRuntimeError"]),
    ("Warnings",
     "Guide: [kernels](../guide/kernels.md#warnings).",
     ["NumbaWarning", "NumbaPerformanceWarning", "NumbaInvalidConfigWarning",
      "NumbaDebugInfoWarning"]),
]

# Special methods worth a line in a class's entry (others are Python's protocol).
DUNDERS = ("__call__", "__getitem__", "__setitem__", "__len__", "__iter__", "__enter__",
           "__exit__", "__cuda_array_interface__", "__array__", "__int__", "__index__")


class MissingNames(Exception):
    pass


def _python_submodule(module, name):
    """Whether module.name is one of the package's Python submodules (nbcuda.dask), read
    without running properties (some need a driver, which the docs build has not)."""
    try:
        value = inspect.getattr_static(module, name)
    except AttributeError:
        return False
    return inspect.ismodule(value) and (getattr(value, "__file__", None) or "").endswith(".py")


def public_names(module):
    """module's public names, less the package's Python submodules (nbcuda.dask, from
    src/python/package/): attributes only once imported, documented in the guide."""
    return sorted(n for n in dir(module)
                  if not n.startswith("_") and not _python_submodule(module, n))


def _placeholder_class(module):
    return type(module.grid)


def _type_class(module):
    return type(module.float32)


def classify(module):
    """(sections, types, placeholders): the curated sections, and the names of type objects
    and of kernel-language placeholders. Raises MissingNames when the module and SECTIONS
    disagree."""
    names = public_names(module)
    stub, tcls = _placeholder_class(module), _type_class(module)
    types = [n for n in names if isinstance(getattr(module, n), tcls)]
    placeholders = [n for n in names if isinstance(getattr(module, n), stub)]
    listed = [n for _, _, ns in SECTIONS for n in ns]
    auto = set(types) | set(placeholders)
    unlisted = [n for n in names if n not in auto and n not in listed]
    absent = [n for n in listed if not hasattr(module, n)]
    if unlisted or absent:
        msg = []
        if unlisted:
            msg.append("public names of nbcuda no section of docs/gen/python_reference.py "
                       "lists: " + ", ".join(unlisted))
        if absent:
            msg.append("names docs/gen/python_reference.py lists that nbcuda lacks: "
                       + ", ".join(absent))
        raise MissingNames("; ".join(msg))
    return SECTIONS, types, placeholders


def signature(name, obj):
    """The call form: inspect.signature when it works, else the one the docstring's first
    line begins with (`name(arg, ...)`), else None."""
    try:
        return name + str(inspect.signature(obj))
    except (TypeError, ValueError):
        pass
    doc = inspect.getdoc(obj) or ""
    m = re.match(r"(?:with\s+)?(\w+\(.*?\))(?=[:\s]|$)", doc.split("\n")[0])
    if m and m.group(1).split("(")[0] in (name, getattr(obj, "__name__", name)):
        return m.group(1).replace(m.group(1).split("(")[0], name, 1)
    return None


def _doc(obj):
    doc = inspect.getdoc(obj)
    if not doc:
        return "*No docstring.*"
    paras = []
    for para in re.split(r"\n\s*\n", doc):
        lines = para.split("\n")
        if all(l.startswith("    ") or l.startswith(">>>") for l in lines if l.strip()):
            paras.append("```python\n" + "\n".join(l[4:] if l.startswith("    ") else l
                                                  for l in lines) + "\n```")
        else:
            paras.append(_escape(" ".join(l.strip() for l in lines)).replace("  \n", " "))
    return "\n\n".join(paras)


def _members(cls):
    out = []
    for name, raw in vars(cls).items():
        if name.startswith("_") and name not in DUNDERS:
            continue
        obj = getattr(cls, name, raw)
        if isinstance(raw, (property,)) or type(raw).__name__ in ("getset_descriptor",
                                                                  "member_descriptor"):
            kind = "property"
        elif callable(obj) or isinstance(raw, (staticmethod, classmethod)):
            kind = "method"
        else:
            kind = "attribute"
        out.append((name, kind, raw, obj))
    return sorted(out, key=lambda m: (m[1] != "method", m[0].startswith("_"), m[0]))


def _entry(out, module, name, level="###"):
    obj = getattr(module, name)
    qual = f"nbcuda.{name}"
    if inspect.isclass(obj):
        bases = [b.__name__ for b in obj.__bases__ if b is not object]
        sig = signature(name, obj)
        out += [f"{level} `{name}` {{#{name}}}", "",
                f"*class* `{sig or name}`" + (f" — bases: {', '.join(f'`{b}`' for b in bases)}"
                                               if bases else ""), "", _doc(obj), ""]
        members = _members(obj)
        if members:
            out += ["| member | kind | description |", "|---|---|---|"]
            for mname, kind, raw, mobj in members:
                target = raw if kind == "property" else mobj
                if kind == "method":
                    msig = signature(mname, mobj)
                    label = f"`{msig}`" if msig else f"`{mname}()`"
                else:
                    label = f"`{mname}`"
                mdoc = inspect.getdoc(target) if kind != "attribute" else None
                text = " ".join((mdoc or "").split()) or "—"
                out.append(f"| {label} | {kind} | {_escape(text)} |")
            out.append("")
    elif inspect.ismodule(obj):
        out += [f"{level} `{qual}` {{#{name}}}", "", "*module*", "", _doc(obj), ""]
        out += ["| name | description |", "|---|---|"]
        for sub in public_names(obj):
            sobj = getattr(obj, sub)
            sig = signature(sub, sobj) if callable(sobj) else None
            text = " ".join((inspect.getdoc(sobj) or "").split()) if callable(sobj) else ""
            if not callable(sobj) or text == " ".join((inspect.getdoc(type(sobj)) or "").split()):
                text = f"`{sobj!r}`" if not callable(sobj) else text
            out.append(f"| `{sig or sub}` | {_escape(text) or '—'} |")
        out.append("")
    elif callable(obj):
        sig = signature(name, obj)
        out += [f"{level} `{name}` {{#{name}}}", "", f"```python\nnbcuda.{sig or name + '(...)'}\n```",
                "", _doc(obj), ""]
        if not inspect.isroutine(obj):  # a callable object (profiling): its methods too
            out += ["| member | description |", "|---|---|"]
            for mname, kind, raw, mobj in _members(type(obj)):
                if mname.startswith("_"):
                    continue
                mobj = getattr(obj, mname)
                label = signature(mname, mobj) if kind == "method" else mname
                text = " ".join((inspect.getdoc(raw if kind == "property" else mobj)
                                 or "").split())
                out.append(f"| `{name}.{label}` | {_escape(text) or '—'} |")
            out.append("")
    else:
        out += [f"{level} `{qual}` {{#{name}}}", "", f"*{type(obj).__name__} object*", "",
                _doc(type(obj)) if not obj.__doc__ or obj.__doc__ == type(obj).__doc__
                else _doc(obj), ""]
        attrs = public_names(obj)
        if attrs:
            out += ["Attributes: " + ", ".join(f"`{a}`" for a in attrs) + ".", ""]


def page(module=None):
    if module is None:
        import nbcuda as module
    sections, types, placeholders = classify(module)
    out = ["# Python API reference", "",
           "Every public name of the `nbcuda` module, generated from the installed module's "
           "signatures and docstrings when the documentation is built "
           "(`docs/gen/python_reference.py`).", "", _doc(module), "", "Sections: "
           + ", ".join(f"[{t}](#{_slug(t)})" for t, _, _ in sections)
           + ", [Types](#types), [Kernel-language names](#kernel-language-names).", ""]
    for title, intro, names in sections:
        out += [f"## {title} {{#{_slug(title)}}}", "", intro, ""]
        for name in names:
            _entry(out, module, name)
    # type objects: one row per type, its aliases beside it
    by_repr = {}
    for n in types:
        by_repr.setdefault(repr(getattr(module, n)), []).append(n)
    out += ["## Types {#types}", "",
            "numba's type objects, for signatures (`float32[::1]`, `void(int32)`), dtypes "
            "in kernels (`cuda.local.array(4, float32)`) and conversions (`float32(x)`). "
            + _escape(" ".join((inspect.getdoc(_type_class(module)) or "").split())), "",
            "| type | names in `nbcuda` |", "|---|---|"]
    for r, ns in sorted(by_repr.items()):
        out.append(f"| `{r}` | " + ", ".join(f"<code id=\"{n}\">{n}</code>" for n in ns) + " |")
    out += ["", "## Kernel-language names {#kernel-language-names}", "",
            "Host-side placeholders of the names kernels use (`nbcuda.grid`, `nbcuda.atomic`): "
            "calling one on the host raises `NotImplementedError`. What each does in a kernel is "
            "in the [kernel language reference](../language/reference.md).", "",
            "| name | kind |", "|---|---|"]
    for n in placeholders:
        obj = getattr(module, n)
        doc = inspect.getdoc(obj) or ""
        m = re.search(r":\s*an?\s+(\w+)", doc)
        kind = m.group(1) if m else ""
        members = public_names(obj)
        extra = f" ({len(members)} members)" if members else ""
        out.append(f"| <code id=\"{n}\">{n}</code> | {kind}{extra} |")
    return "\n".join(out) + "\n"


def _slug(title):
    return "py-" + re.sub(r"[\s_]+", "-", re.sub(r"[^\w\s-]", "", title.lower()).strip())


def documented_names(markdown):
    """The public names a generated page has an entry or a table row for."""
    return set(re.findall(r"\{#(\w+)\}", markdown)) | set(
        re.findall(r'<code id="(\w+)">', markdown))


def undocumented(module=None):
    """Public callables whose docstring is missing, and those with no signature that
    inspect or the docstring's first line gives: what the reference cannot show."""
    if module is None:
        import nbcuda as module
    _, types, placeholders = classify(module)
    skip = set(types) | set(placeholders)
    nodoc, nosig = [], []
    for n in public_names(module):
        if n in skip:
            continue
        obj = getattr(module, n)
        if not inspect.getdoc(obj):
            nodoc.append(n)
        if callable(obj) and not inspect.isclass(obj) and not signature(n, obj):
            nosig.append(n)
        if inspect.isclass(obj):
            for mname, kind, raw, mobj in _members(obj):
                if kind != "attribute" and not inspect.getdoc(raw if kind == "property" else mobj):
                    nodoc.append(f"{n}.{mname}")
    return nodoc, nosig


if __name__ == "__main__":
    if sys.argv[1:] == ["--undocumented"]:
        nodoc, nosig = undocumented()
        print("no docstring:", ", ".join(nodoc))
        print("no signature (inspect or docstring):", ", ".join(nosig))
    else:
        sys.stdout.write(page())
