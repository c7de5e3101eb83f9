"""Every public callable of nbcuda has a signature inspect can read and a docstring, and the
type stubs (src/python/package, installed next to the extension) declare every public
name of the module and its submodules, nothing the module lacks, with the runtime's
parameter names.

The kernel language's objects (types such as float32, intrinsics such as threadIdx, the
device functions of nbcuda.random) are values in these namespaces, not host callables; the
walk covers functions, classes and the methods of classes."""
import ast
import inspect
import os
import types as pytypes

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
STUBS = os.path.join(HERE, "..", "..", "src", "python", "package")


def public(obj):
    """obj's public names, less the package's Python submodules (nbcuda.dask, from
    src/python/package/): an attribute only once imported, typed by their own source."""
    return sorted(n for n in dir(obj) if not n.startswith("_") and not (
        isinstance(getattr(obj, n), pytypes.ModuleType)
        and (getattr(getattr(obj, n), "__file__", None) or "").endswith(".py")))


def namespaces(cuda):
    return {"__init__": cuda, "types": cuda.types, "random": cuda.random}


def host_callables(cuda):
    """(qualified name, object) of each function, class and method of a class."""
    for modname, mod in namespaces(cuda).items():
        for name in public(mod):
            obj = getattr(mod, name)
            if isinstance(obj, (pytypes.BuiltinFunctionType, pytypes.FunctionType)):
                yield f"{modname}.{name}", obj
            elif isinstance(obj, type) and obj.__module__.startswith("nbcuda"):
                yield f"{modname}.{name}", obj
                for attr, raw in vars(obj).items():
                    if attr.startswith("_") and attr not in ("__enter__", "__exit__"):
                        continue
                    if callable(raw) or isinstance(raw, (classmethod, staticmethod)):
                        yield f"{modname}.{name}.{attr}", getattr(obj, attr)


def test_every_callable_has_a_signature_and_a_docstring(cuda):
    found = list(host_callables(cuda))
    assert len(found) > 150
    nosig = []
    nodoc = []
    for qualname, obj in found:
        try:
            inspect.signature(obj)
        except (ValueError, TypeError):
            nosig.append(qualname)
        if not inspect.getdoc(obj):
            nodoc.append(qualname)
    assert nosig == []
    assert nodoc == []


def test_properties_and_submodules_have_docstrings(cuda):
    missing = []
    for obj in (cuda.types, cuda.random, type(cuda.config)):
        if not obj.__doc__:
            missing.append(obj)
    for modname, mod in namespaces(cuda).items():
        for name in public(mod):
            cls = getattr(mod, name)
            if not isinstance(cls, type) or not cls.__module__.startswith("nbcuda"):
                continue
            for attr, raw in vars(cls).items():
                if not attr.startswith("_") and not callable(raw) and hasattr(raw, "__get__"):
                    if not raw.__doc__:
                        missing.append(f"{name}.{attr}")
    assert missing == []


def test_text_signature_names_what_the_function_accepts(cuda):
    """A keyword named in the text signature is accepted by the C parser: the call fails
    for another reason than an unexpected keyword."""
    sig = inspect.signature(cuda.device_array)
    assert list(sig.parameters) == ["shape", "dtype", "strides", "order", "stream"]
    assert cuda.device_array(shape=4, dtype=sig.parameters["dtype"].default).shape == (4,)
    sig = inspect.signature(cuda.to_device)
    assert list(sig.parameters) == ["obj", "stream", "copy", "to"]
    assert list(inspect.signature(cuda.DeviceNDArray.copy_to_host).parameters) == [
        "self", "ary", "stream"]
    assert list(inspect.signature(cuda.CudaAPIError).parameters) == ["code", "msg"]
    assert str(inspect.signature(cuda.CompileError)) == "(*args)"


def stub_module(name):
    with open(os.path.join(STUBS, name + ".pyi")) as f:
        return ast.parse(f.read())


def stub_names(tree):
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                names[t.id] = node
        elif isinstance(node, ast.ImportFrom) and node.module is None:
            for alias in node.names:
                if alias.asname == alias.name:  # re-exported: `from . import types as types`
                    names[alias.name] = node
    return names


@pytest.mark.parametrize("modname", ["__init__", "types", "random"])
def test_stub_declares_exactly_the_public_names(cuda, modname):
    mod = namespaces(cuda)[modname]
    declared = {n for n in stub_names(stub_module(modname)) if not n.startswith("_")}
    assert sorted(set(public(mod)) - declared) == []  # not stubbed
    assert sorted(declared - set(public(mod))) == []  # stubbed, but not in the module


def stub_params(fn):
    a = fn.args
    return [p.arg for p in a.posonlyargs + a.args] + (
        ["*" + a.vararg.arg] if a.vararg else []) + [p.arg for p in a.kwonlyargs] + (
        ["**" + a.kwarg.arg] if a.kwarg else [])


def runtime_params(obj):
    out = []
    for p in inspect.signature(obj).parameters.values():
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        out.append(prefix + p.name)
    return out


@pytest.mark.parametrize("modname", ["__init__", "types", "random"])
def test_stub_signatures_match_the_module(cuda, modname):
    mod = namespaces(cuda)[modname]
    wrong = []
    for name, node in stub_names(stub_module(modname)).items():
        obj = getattr(mod, name, None)
        if isinstance(node, ast.FunctionDef):
            if stub_params(node) != runtime_params(obj):
                wrong.append((name, stub_params(node), runtime_params(obj)))
        elif isinstance(node, ast.ClassDef) and isinstance(obj, type):
            for item in node.body:
                if not isinstance(item, ast.FunctionDef):
                    continue
                deco = [d.id for d in item.decorator_list if isinstance(d, ast.Name)]
                if "property" in deco:
                    assert hasattr(obj, item.name), (name, item.name)
                    continue
                params = stub_params(item)[1:]  # self or cls
                target = obj if item.name == "__init__" else getattr(obj, item.name, None)
                if target is None:
                    wrong.append((name, item.name, "missing at run time"))
                    continue
                if item.name in ("__call__", "__getitem__"):
                    continue  # slot wrappers: (*args, **kwargs) at run time
                got = runtime_params(target)
                if got[:1] in (["self"], ["cls"]) and "classmethod" not in deco:
                    got = got[1:]
                if params != got:
                    wrong.append((name, item.name, params, got))
    assert wrong == []
