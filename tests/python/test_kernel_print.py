"""print() in kernels, as numba-cuda's printimpl.py lowers it: one vprintf per print, items
joined by spaces — integers "%lld"/"%llu", floats "%f", booleans "True"/"False", string
literals, tuples "(a, b)" / "(a,)". Without a GPU the PTX goes through ptxas; on the GPU the
output of a kernel is compared with numba-cuda's for the same kernel."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nbcuda as cuda

from test_compile import check_ptx


def shout(out, x):
    i = cuda.grid(1)
    print("item", i, x[i], i == 0, (i, x[0]), (np.uint32(7),), np.float32(1.5))
    print()


def ptx_string(ptx, text):
    """The .const declaration's bytes of a NUL-terminated string, as ptxas prints them."""
    return "{" + ", ".join(str(b) for b in text.encode()) + "};"


def test_print_is_one_vprintf_with_numbas_format(tmp_path):
    ptx, resty = cuda.compile_ptx(shout, "void(float64[::1], float64[::1])", cc=(9, 0))
    assert str(resty) == "none"
    assert ".extern .func  (.param .b32 func_retval0) vprintf" in ptx
    assert ptx.count("call.uni") >= 2 or ptx.count("vprintf,") >= 2
    decls = [line for line in ptx.splitlines() if "__conststring__" in line and ".const" in line]
    texts = {d.split("= ", 1)[1] for d in decls}
    for text in ("%s %lld %f %s (%lld, %f) (%llu,) %f\n", "\n", "item", "True", "False"):
        assert ptx_string(ptx, text) in texts, text
    check_ptx(ptx, tmp_path)


def test_what_cannot_be_printed_is_refused():
    def arrays(out, x):
        print(x)

    def keywords(out, x):
        print(x[0], end="")

    with pytest.raises(cuda.TypingError, match="printing unimplemented for values of type "
                                               r"array\(float64, 1d, C\)"):
        cuda.compile_ptx(arrays, "void(float64[::1], float64[::1])", cc=(9, 0))
    with pytest.raises(cuda.TypingError):
        cuda.compile_ptx(keywords, "void(float64[::1], float64[::1])", cc=(9, 0))


SCRIPT = textwrap.dedent('''
    import numpy
    for old, new in (("row_stack", "vstack"), ("in1d", "isin"), ("trapz", "trapezoid")):
        if not hasattr(numpy, old) and hasattr(numpy, new):
            setattr(numpy, old, getattr(numpy, new))
    import numpy as np
    {import_cuda}

    def shout(out, x):
        i = cuda.grid(1)
        print("item", i, x[i], i == 0, (i, x[0]), (np.uint32(7),), np.float32(1.5))
        print()

    k = cuda.jit("void(float64[::1], float64[::1])")(shout)
    x = cuda.to_device(np.array([0.25, -1.5, 3.0, 1e6]))
    k[1, 4](cuda.device_array(4), x)
    cuda.synchronize()
''')


def run_script(tmp_path, name, import_cuda):
    path = tmp_path / f"{name}.py"
    path.write_text(SCRIPT.format(import_cuda=import_cuda))
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    return sorted(p.stdout.splitlines())


@pytest.mark.gpu
def test_kernel_prints_what_numba_prints(gpu, tmp_path):
    mine = run_script(tmp_path, "mine", "import nbcuda as cuda")
    assert "item 0 0.250000 True (0, 0.250000) (7,) 1.500000" in mine
    assert "item 3 1000000.000000 False (3, 0.250000) (7,) 1.500000" in mine
    assert mine.count("") == 4  # the empty prints
    pytest.importorskip("numba.cuda")
    theirs = run_script(tmp_path, "theirs", "from numba import cuda")
    assert mine == theirs
