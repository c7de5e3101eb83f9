"""Loaded on the GPU machine by tests/gpu/run.sh (PYTHONPATH): numba-cuda 0.30.4 breaks on
numpy 2.5, so the names it still uses are aliased — lazily, when numba is first imported,
so that processes that never import numba (e.g. the check that `import nbcuda` does not pull
in numpy) are left untouched. Under numba_suite.py (NBCUDA_STUB_FILECHECK set), the
processes its tests spawn get its stand-in for the filecheck package as well, without which
numba-cuda's testing module does not import."""
import importlib.abc
import os
import sys


class _AliasNumpyForNumba(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "numba" or name.startswith("numba."):
            sys.meta_path.remove(self)
            import numpy as np
            for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
                if not hasattr(np, old):
                    setattr(np, old, getattr(np, new))
        return None


sys.meta_path.insert(0, _AliasNumpyForNumba())

if os.environ.get("NBCUDA_STUB_FILECHECK"):
    from numba_suite import stub_filecheck
    stub_filecheck()
