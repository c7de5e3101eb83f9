"""Memory that Python objects view outlives the context it was made in: cuda.close() and
Device.reset() free the driver's allocations of the context, and an array still viewing one
must not read or write freed memory (issue 33, item 1). Arrays from pinned_array,
mapped_array and Context.memhostalloc stay valid host memory until their last view dies;
device arrays, mapped views of registrations and IPC handles refuse use with an error.

Each case runs in a child interpreter: a use after free crashes it (the test driver makes
freed page-locked memory inaccessible, and under ASan the report ends it), which a test in
this process could not survive. The child inherits NBCUDA_DRIVER and, under
tests/run_all.sh's ASan stage, the sanitizer.
"""
import pytest

ORDERS = {
    "close": "cuda.close()",
    "reset": "cuda.get_current_device().reset(); cuda.close()",
    "close twice": "cuda.close(); cuda.close()",
}


@pytest.mark.parametrize("order", sorted(ORDERS))
@pytest.mark.parametrize("make", ["pinned_array", "mapped_array", "managed_array"])
def test_host_array_outlives_close(cuda, run_py, make, order):
    p = run_py(f"""
        import gc
        import numpy as np
        import nbcuda as cuda
        a = cuda.{make}(5000, dtype=np.int64)
        a[:] = np.arange(5000)
        view = a[10:20]
        {ORDERS[order]}
        assert (a == np.arange(5000)).all(), a[:8]
        a[:] = 7
        del a
        gc.collect()
        view[:] = 9                       # the view alone keeps the memory
        assert view.sum() == 90
        del view
        gc.collect()
        b = cuda.{make}(16, dtype=np.int8)  # a new context after the close
        b[:] = 1
        assert b.sum() == 16
        print("done")
    """)
    assert p.stdout.strip() == "done", p.stderr


@pytest.mark.parametrize("make", ["pinned_array", "managed_array"])
def test_view_freed_after_close_then_new_memory(cuda, run_py, make):
    # Freeing after the close must not free what the new context allocated at that address.
    p = run_py(f"""
        import gc
        import numpy as np
        import nbcuda as cuda
        olds = [cuda.{make}(4096, dtype=np.uint8) for _ in range(8)]
        cuda.close()
        news = [cuda.{make}(4096, dtype=np.uint8) for _ in range(8)]
        for n in news:
            n[:] = 3
        del olds
        gc.collect()
        assert all((n == 3).all() for n in news)
        d = cuda.to_device(news[0])
        assert (d.copy_to_host() == 3).all()
        print("done")
    """)
    assert p.stdout.strip() == "done", p.stderr


def test_mapped_array_refuses_the_device_after_close(cuda, run_py):
    p = run_py("""
        import numpy as np
        import nbcuda as cuda
        m = cuda.mapped_array(8, dtype=np.float32)
        m[:] = 2.0
        cuda.close()
        try:
            m.__cuda_array_interface__
        except ValueError as e:
            print(e)
        # without its interface it is a host array to kernels: copied in and back out
        exec("@cuda.jit\\ndef k(x):\\n    x[0] = 1\\n")
        k[1, 1](m)
        cuda.synchronize()
        assert m[1] == 2.0
    """)
    assert p.stdout.strip() == (
        "the mapped array's memory is no longer on the device: its context was reset "
        "(cuda.close() or Device.reset()) after the array was made; the array stays valid on "
        "the host"), p.stdout


def test_memhostalloc_buffer_outlives_close(cuda, run_py):
    p = run_py("""
        import gc
        import numpy as np
        import nbcuda as cuda
        h = cuda.current_context().memhostalloc(8192, mapped=True)
        a = np.ndarray(1024, np.float64, buffer=h)
        a[:] = 1.5
        del h
        cuda.close()
        assert (a == 1.5).all()
        a[:] = 2.5
        del a
        gc.collect()
        print("done")
    """)
    assert p.stdout.strip() == "done", p.stderr


@pytest.mark.parametrize("scope", ["pinned", "mapped"])
def test_registration_scope_ends_after_close(cuda, run_py, scope):
    # Leaving the block unregisters memory that the close already unpinned: no error, and
    # the user's array is untouched.
    p = run_py(f"""
        import numpy as np
        import nbcuda as cuda
        a = np.arange(16.0)
        with cuda.{scope}(a):
            cuda.close()
        a[:] = 4.0
        with cuda.{scope}(a):             # pinned again in the new context
            pass
        assert (a == 4.0).all()
        print("done")
    """)
    assert p.stdout.strip() == "done", p.stderr


def test_device_array_after_close_raises(cuda, run_py):
    p = run_py("""
        import numpy as np
        import nbcuda as cuda
        d = cuda.to_device(np.arange(4.0))
        v = d[1:]
        cuda.close()
        for use in (d.copy_to_host, v.copy_to_host, lambda: d.copy_to_device(np.zeros(4)),
                    d.get_ipc_handle):
            try:
                use()
                print("no error")
            except cuda.CudaAPIError as e:
                print("reset since" in str(e))
        del d, v
        print("done")
    """)
    assert p.stdout.split() == ["True", "True", "True", "True", "done"], p.stdout + p.stderr


def test_ipc_handle_after_close(cuda, tdrv, run_py):
    # The handle of memory whose context was closed: opening it in another process is the
    # driver's error, not a crash; the handle itself can still be dropped.
    p = run_py("""
        import pickle, subprocess, sys
        import numpy as np
        import nbcuda as cuda
        d = cuda.to_device(np.arange(4.0))
        h = d.get_ipc_handle()
        data = pickle.dumps(h)
        cuda.close()
        code = ("import pickle, sys\\n"
                "h = pickle.loads(sys.stdin.buffer.read())\\n"
                "try:\\n    h.open()\\n    print('opened')\\n"
                "except Exception as e:\\n    print(type(e).__name__)\\n")
        child = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True)
        print(child.stdout.decode().strip(), child.returncode)
        del h, d
        print("done")
    """)
    out = p.stdout.split()
    assert out[-1] == "done" and out[1] == "0" and out[0] != "opened", p.stdout + p.stderr
