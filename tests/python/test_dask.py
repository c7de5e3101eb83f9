"""nbcuda's device arrays in dask.distributed: the "cuda", "dask" and "pickle" serialization
families through distributed's serialize/deserialize, nbcuda's lazy registration in a process
where distributed is loaded, and examples/dask_multi_gpu.py on a local cluster of 2 workers
(the software driver runs no kernels: --host-math there; the kernels on a real GPU)."""
import os
import sys

import numpy as np
import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")

from conftest import device_array_cases  # noqa: E402
from distributed.protocol import deserialize, serialize  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


@pytest.fixture(scope="module")
def registered(cuda):
    import nbcuda.dask
    nbcuda.dask.register()
    return nbcuda.dask


@pytest.mark.parametrize("family", ["cuda", "dask", "pickle"])
def test_round_trip(cuda, registered, family):
    for name, (d, h) in device_array_cases(cuda).items():
        header, frames = serialize(d, serializers=(family,), on_error="raise")
        assert header["serializer"] == family, name
        r = deserialize(header, frames, deserializers=(family,))
        assert type(r) is cuda.DeviceNDArray, name
        assert r.shape == h.shape and r.dtype == h.dtype, name
        np.testing.assert_array_equal(r.copy_to_host(), h, err_msg=name)
        if name == "2d F":
            assert r.is_f_contiguous()


def test_cuda_family_shares_device_memory(cuda, registered):
    d = cuda.to_device(np.arange(16, dtype=np.int32))
    header, frames = serialize(d, serializers=("cuda",), on_error="raise")
    (frame,) = frames
    assert frame.__cuda_array_interface__["data"][0] == d.device_pointer
    assert frame.shape == (d.nbytes,) and frame.dtype == np.uint8
    r = deserialize(header, frames, deserializers=("cuda",))
    assert r.device_pointer == d.device_pointer
    del d, frames, frame, header
    # the result keeps the memory alive
    np.testing.assert_array_equal(r.copy_to_host(), np.arange(16, dtype=np.int32))


def test_dask_family_one_host_frame(cuda, registered):
    h = np.arange(1000, dtype=np.float64)
    header, frames = serialize(cuda.to_device(h), serializers=("dask",), on_error="raise")
    assert len(frames) == 1 and memoryview(frames[0]).nbytes == h.nbytes
    assert bytes(memoryview(frames[0])) == h.tobytes()


def test_registered_lazily_where_distributed_is_loaded(run_py):
    # no call of register() and no import of nbcuda.dask: distributed imported before nbcuda
    out = run_py("""
        import sys
        import numpy as np
        from distributed.protocol import serialize, deserialize
        import nbcuda
        assert "nbcuda.dask" not in sys.modules
        d = nbcuda.to_device(np.arange(4.0))
        for family in ("dask", "cuda"):
            header, frames = serialize(d, serializers=(family,), on_error="raise")
            r = deserialize(header, frames, deserializers=(family,))
            print(header["serializer"], r.copy_to_host().tolist())
        print("nbcuda.dask" in sys.modules)
    """)
    assert out.stdout.split("\n")[:3] == ["dask [0.0, 1.0, 2.0, 3.0]",
                                          "cuda [0.0, 1.0, 2.0, 3.0]", "True"]


def test_nothing_of_dask_imported_by_nbcuda(run_py):
    out = run_py("""
        import sys, numpy as np, nbcuda
        nbcuda.to_device(np.arange(3)).copy_to_host()
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")))
    """)
    assert out.stdout.strip() == "[]"


def _example_module():
    sys.path.insert(0, EXAMPLES)
    try:
        import dask_multi_gpu
    finally:
        sys.path.remove(EXAMPLES)
    return dask_multi_gpu


def _run_example(cuda, host_math):
    from distributed import Client

    ex = _example_module()
    n, chunk = 10_000, 1_000
    with ex.make_cluster(2) as cluster, Client(cluster) as client:
        total, expected, reports = ex.run(client, n, chunk, host_math=host_math, timeout=240)
    assert total == pytest.approx(expected, rel=1e-12)
    assert len(reports) == 2
    # each worker saw its own device first, and the 10 chunks were spread over both
    assert sorted(r[0] for r in reports.values()) == ["0,1", "1,0"]
    done = [r[2].get("elementwise", [0, 0])[1] for r in reports.values()]
    assert sum(done) == n // chunk
    # device arrays went between the workers through nbcuda's serializers, which a worker
    # loads on the first one it sends or receives
    assert any(r[3] for r in reports.values())


def test_example_on_two_workers(cuda):
    _run_example(cuda, host_math=True)


@pytest.mark.gpu
def test_example_kernels_on_two_workers(cuda):
    _run_example(cuda, host_math=False)
