"""CUDA IPC as numba.cuda offers it: DeviceNDArray.get_ipc_handle(), Context.get_ipc_handle(),
IpcHandle / IpcArrayHandle (pickling, open, close, `with h as arr:`) and open_ipc_array;
Context.get_ipc_handle takes an array or, as numba's, a MemoryPointer (`array.gpu_data`);
open_staged copies the memory, which open()/open_array() do from a device without peer
access to the exporting one.

CUDA refuses to open a handle in the process that made it. On the test driver the tests that
open their own handles set NBCUDA_TESTDRIVER_IPC_SAME_PROCESS=1 (the `same_process` fixture),
which lets the fixture map them as if they came from another process; the refusal itself is
checked without it. On a GPU (tests/gpu/run.sh) `test_two_processes_*` share memory with a
child started by multiprocessing's 'spawn', as numba-cuda's own IPC tests do.
"""
import multiprocessing as mp
import os
import pickle

import numpy as np
import pytest


@pytest.fixture
def same_process(tdrv, monkeypatch):
    monkeypatch.setenv("NBCUDA_TESTDRIVER_IPC_SAME_PROCESS", "1")
    yield tdrv
    assert tdrv.live_ipc_mappings() == 0


def reopened(h):
    """The handle as another process gets it."""
    return pickle.loads(pickle.dumps(h))


def test_array_handle_round_trip(cuda, same_process):
    a = np.arange(10, dtype=np.intp)
    d = cuda.to_device(a)
    h = d.get_ipc_handle()
    assert isinstance(h, cuda.IpcArrayHandle)
    assert h._array_desc == dict(shape=(10,), strides=(8,), dtype=np.dtype(np.intp))
    assert h.array_desc is h._array_desc and h.ipc_handle is h._ipc_handle
    ipch = h._ipc_handle
    assert ipch.base is d and ipch.size == 80 and ipch.offset == 0
    assert len(ipch.handle.reserved) == 64

    h2 = reopened(h)
    assert h2._ipc_handle.base is None
    assert h2._ipc_handle.size == 80
    assert h2._ipc_handle.handle.reserved == ipch.handle.reserved
    assert h2._ipc_handle.source_info == ipch.source_info
    with h2 as arr:
        assert arr.shape == (10,) and arr.dtype == np.intp
        np.testing.assert_equal(arr.copy_to_host(), a)
        assert same_process.live_ipc_mappings() == 1
        arr.copy_to_device(a * 2)  # writes reach the exporter's memory
    assert same_process.live_ipc_mappings() == 0
    np.testing.assert_equal(d.copy_to_host(), a * 2)
    # open() and close() by hand, again
    arr = h2.open()
    np.testing.assert_equal(arr.copy_to_host(), a * 2)
    h2.close()


@pytest.mark.parametrize("index", [slice(3, None), slice(3, 8), slice(None, 8),
                                   slice(None, None, 2)])
def test_views_share_their_range(cuda, same_process, index):
    d = cuda.to_device(np.arange(10, dtype=np.intp))
    view = d[index]
    h = view.get_ipc_handle()
    start = index.start or 0
    assert h._ipc_handle.offset == 8 * start
    assert h._ipc_handle.size == (view.shape[0] - 1) * view.strides[0] + 8
    with reopened(h) as arr:
        assert arr.strides == view.strides
        np.testing.assert_equal(arr.copy_to_host(), view.copy_to_host())


def test_two_dimensional(cuda, same_process):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = cuda.to_device(a)
    with reopened(d.get_ipc_handle()) as arr:
        assert arr.shape == (3, 4)
        np.testing.assert_equal(arr.copy_to_host(), a)


def test_structured_dtype_keeps_its_fields(cuda, same_process):
    dt = np.dtype([("a", np.float64), ("b", np.int32)], align=True)
    a = np.zeros(5, dt)
    a["a"] = np.arange(5) * 1.5
    a["b"] = np.arange(5)
    d = cuda.to_device(a)
    with reopened(d.get_ipc_handle()) as arr:
        assert arr.dtype == dt and arr.dtype.names == ("a", "b")
        np.testing.assert_equal(arr.copy_to_host(), a)


def test_open_in_exporting_process_is_numbas_error(cuda):
    d = cuda.to_device(np.arange(4))
    h = d.get_ipc_handle()
    with pytest.raises(ValueError, match="^opening IpcHandle from original process$"):
        h.open()
    with pytest.raises(ValueError, match="opening IpcHandle from original process"):
        with h:
            pass


def test_driver_refuses_same_process(cuda, tdrv, monkeypatch):
    monkeypatch.delenv("NBCUDA_TESTDRIVER_IPC_SAME_PROCESS", raising=False)
    d = cuda.to_device(np.arange(4))
    h = reopened(d.get_ipc_handle())
    with pytest.raises(cuda.CudaAPIError) as e:
        h.open()
    assert e.value.code == 201
    assert "cuIpcOpenMemHandle" in str(e.value)
    assert "CUDA_ERROR_INVALID_CONTEXT" in str(e.value)
    assert "the handle was made by this process" in str(e.value)
    assert tdrv.live_ipc_mappings() == 0
    with pytest.raises(ValueError, match="IpcHandle not opened"):
        h.close()  # the failed open left nothing open


def test_open_twice_and_close_twice(cuda, same_process):
    d = cuda.to_device(np.arange(4))
    h = reopened(d.get_ipc_handle())
    with h as arr:
        with pytest.raises(ValueError, match="IpcHandle is already opened"):
            with h:
                pass
        assert arr.copy_to_host()[3] == 3
    with pytest.raises(ValueError, match="IpcHandle not opened"):
        h.close()


def test_closed_array_raises(cuda, same_process):
    d = cuda.to_device(np.arange(4))
    h = reopened(d.get_ipc_handle())
    with h as arr:
        pass
    with pytest.raises(cuda.CudaAPIError, match="CUDA_ERROR_INVALID_VALUE"):
        arr.copy_to_host()


def test_exporter_freed_its_memory(cuda, same_process):
    h = reopened(cuda.to_device(np.arange(4)).get_ipc_handle())  # the exporter's array died
    with pytest.raises(cuda.CudaAPIError, match="cuIpcOpenMemHandle results in "
                       "CUDA_ERROR_MAP_FAILED"):
        h.open()


def test_handle_that_dies_open_unmaps(cuda, same_process):
    d = cuda.to_device(np.arange(4))
    h = reopened(d.get_ipc_handle())
    arr = h.open()
    assert same_process.live_ipc_mappings() == 1
    del h  # the array keeps the handle, and so the mapping
    assert arr.copy_to_host()[1] == 1
    assert same_process.live_ipc_mappings() == 1
    del arr
    assert same_process.live_ipc_mappings() == 0


def test_context_get_ipc_handle(cuda, same_process):
    a = np.arange(10, dtype=np.intp)
    d = cuda.to_device(a)
    ctx = cuda.current_context()
    ipch = ctx.get_ipc_handle(d)
    assert isinstance(ipch, cuda.IpcHandle) and ipch.base is d
    assert ipch.size == 80 and ipch.offset == 0
    dev = cuda.get_current_device()
    info = ipch.source_info
    assert (info["pci_domain_id"], info["pci_bus_id"], info["pci_device_id"]) == (
        dev.PCI_DOMAIN_ID, dev.PCI_BUS_ID, dev.PCI_DEVICE_ID)
    assert info["uuid"] == dev.uuid
    other = reopened(ipch)
    ptr = other.open(ctx)
    assert isinstance(ptr, cuda.MemoryPointer) and ptr.owner is other and ptr.size == 80
    assert ptr.context is ctx and ptr.device_pointer != d.__cuda_array_interface__["data"][0]
    desc = {"shape": (10,), "typestr": np.dtype(np.intp).str, "version": 3, "strides": None,
            "data": (ptr.device_pointer, False)}
    np.testing.assert_equal(cuda.from_cuda_array_interface(desc, owner=ptr).copy_to_host(), a)
    other.close()
    arr = other.open_array(ctx, shape=10, dtype=np.intp)
    np.testing.assert_equal(arr.copy_to_host(), a)
    other.close()
    # numba's own tests export array.gpu_data, a MemoryPointer (of a view: its own range)
    for exported, start, size in ((d, 0, 80), (d[3:8], 24, 40)):
        memory = exported.gpu_data
        ipch = ctx.get_ipc_handle(memory)
        assert ipch.base is memory and ipch.size == size and ipch.offset == start
        other = reopened(ipch)
        arr = other.open_array(ctx, shape=size // 8, dtype=np.intp)
        np.testing.assert_equal(arr.copy_to_host(), a[start // 8:(start + size) // 8])
        other.close()
    with pytest.raises(TypeError, match="expected a Context"):
        other.open(42)


def test_open_staged_copies_the_memory(cuda, same_process):
    # numba's _StagedIpcImpl: a copy in new memory of the context, which the returned
    # MemoryPointer owns; the handle is open (nothing mapped) until close()
    a = np.arange(10, dtype=np.intp)
    d = cuda.to_device(a)
    ctx = cuda.current_context()
    other = reopened(ctx.get_ipc_handle(d[2:7]))
    copy = other.open_staged(ctx)
    assert isinstance(copy, cuda.MemoryPointer) and copy.size == 40 and copy.owner is copy
    assert same_process.live_ipc_mappings() == 0  # mapped only while copying
    desc = {"shape": (5,), "typestr": np.dtype(np.intp).str, "version": 3, "strides": None,
            "data": (copy.device_pointer, False)}
    view = cuda.from_cuda_array_interface(desc, owner=copy)
    np.testing.assert_equal(view.copy_to_host(), a[2:7])
    view.copy_to_device(np.zeros(5, np.intp))  # a copy: the exporter's memory is untouched
    np.testing.assert_equal(d.copy_to_host(), a)
    with pytest.raises(ValueError, match="IpcHandle is already opened"):
        other.open(ctx)
    other.close()
    with pytest.raises(ValueError, match="IpcHandle not opened"):
        other.close()
    raw = cuda.open_ipc_array(ctx.get_ipc_handle(d).handle.reserved, shape=10, dtype=np.intp)
    with pytest.raises(ValueError, match="doesn't have source info"):
        raw._ipc_handle.open_staged(ctx)


def test_open_without_peer_access_stages(cuda, same_process, monkeypatch):
    # numba's IpcHandle.open: open_staged when the opening device cannot reach the exporting
    # one (the test driver's NBCUDA_TESTDRIVER_NO_PEER_ACCESS)
    if len(cuda.gpus) < 2:
        pytest.skip("needs two devices")
    a = np.arange(6, dtype=np.float64)
    d = cuda.to_device(a)
    ipch = cuda.current_context().get_ipc_handle(d)
    monkeypatch.setenv("NBCUDA_TESTDRIVER_NO_PEER_ACCESS", "1")
    with cuda.gpus[1]:
        ctx1 = cuda.current_context()
        h = reopened(ipch)
        memory = h.open(ctx1)
        assert memory.owner is memory and memory.context is ctx1  # a copy on device 1
        h.close()
        arr = reopened(ipch).open_array(ctx1, shape=6, dtype=np.float64)
        np.testing.assert_equal(arr.copy_to_host(), a)
        with reopened(d.get_ipc_handle()) as arr:
            np.testing.assert_equal(arr.copy_to_host(), a)
        assert same_process.live_ipc_mappings() == 0
    monkeypatch.delenv("NBCUDA_TESTDRIVER_NO_PEER_ACCESS")
    with cuda.gpus[1]:
        h = reopened(ipch)
        mapped = h.open(cuda.current_context())
        assert mapped.owner is h  # a peer: mapped, as before
        h.close()


def test_open_ipc_array_from_bytes(cuda, same_process):
    a = np.arange(10, dtype=np.intp)
    d = cuda.to_device(a)
    raw = cuda.current_context().get_ipc_handle(d).handle.reserved
    with cuda.open_ipc_array(raw, shape=10, dtype=np.intp) as arr:
        np.testing.assert_equal(arr.copy_to_host(), a)
    # a tuple of ints, an offset, a shape tuple
    with cuda.open_ipc_array(tuple(raw), shape=(2, 2), dtype="int64", offset=16) as arr:
        np.testing.assert_equal(arr.copy_to_host(), [[2, 3], [4, 5]])
    # the mapping is closed when the block raises, and the exception goes on
    with pytest.raises(KeyError):
        with cuda.open_ipc_array(raw, shape=4, dtype=np.intp):
            raise KeyError("body")
    assert same_process.live_ipc_mappings() == 0
    with pytest.raises(ValueError, match="an IPC handle has 64 bytes, not 3"):
        cuda.open_ipc_array(b"abc", shape=4, dtype=np.intp)
    # a range past the exported allocation
    with pytest.raises(ValueError, match="runs past the exported allocation"):
        with cuda.open_ipc_array(raw, shape=20, dtype=np.intp):
            pass


def test_unknown_source_device(cuda):
    d = cuda.to_device(np.arange(4))
    ipch = cuda.current_context().get_ipc_handle(d)
    info = dict(ipch.source_info, uuid="GPU-00000000-0000-0000-0000-000000000000")
    fake = cuda._rebuild_ipc_handle(ipch.handle.reserved, ipch.size, info, 0)
    with pytest.raises(RuntimeError, match="No device of GPU-0000.* is found. Target device "
                       "may not be visible in this process."):
        fake.open(cuda.current_context())


def test_export_errors(cuda, tdrv):
    with pytest.raises(ValueError, match="cannot share an empty array"):
        cuda.device_array(0, np.float32).get_ipc_handle()
    d = cuda.to_device(np.arange(4))
    tdrv.fail("cuIpcGetMemHandle", 1, 999)
    with pytest.raises(cuda.CudaAPIError) as e:
        d.get_ipc_handle()
    assert e.value.code == 999 and "cuIpcGetMemHandle" in str(e.value)
    with pytest.raises(TypeError, match="ipc_handle must be an IpcHandle"):
        cuda.IpcArrayHandle(1, {})


# ---- two processes on a real GPU ---------------------------------------------------------

def _child_double(ipcarr, parent_pid):
    import nbcuda as cuda
    assert os.getpid() != parent_pid
    with ipcarr as darr:
        host = darr.copy_to_host()
        darr.copy_to_device(host * 2)
        with pytest.raises(ValueError, match="IpcHandle is already opened"):
            with ipcarr:
                pass
    cuda.synchronize()
    return host


def _child_raw(handle_bytes, size, parent_pid):
    import nbcuda as cuda
    assert os.getpid() != parent_pid
    dtype = np.dtype(np.intp)
    with cuda.open_ipc_array(handle_bytes, shape=size // dtype.itemsize, dtype=dtype) as darr:
        return darr.copy_to_host()


@pytest.mark.gpu
@pytest.mark.parametrize("index", [None, slice(3, None), slice(3, 8)])
def test_two_processes_array_handle(cuda, gpu, index):
    import concurrent.futures
    a = np.arange(10, dtype=np.intp)
    d = cuda.to_device(a)
    view = d if index is None else d[index]
    expect = view.copy_to_host()
    with concurrent.futures.ProcessPoolExecutor(mp_context=mp.get_context("spawn")) as exe:
        seen = exe.submit(_child_double, view.get_ipc_handle(), os.getpid()).result(timeout=60)
    np.testing.assert_equal(seen, expect)
    np.testing.assert_equal(view.copy_to_host(), expect * 2)


def _child_staged(handle, parent_pid):
    import nbcuda as cuda
    assert os.getpid() != parent_pid
    ctx = cuda.current_context()
    copy = handle.open_staged(ctx)
    desc = {"shape": (handle.size // 8,), "typestr": np.dtype(np.intp).str, "version": 3,
            "strides": None, "data": (copy.device_pointer, False)}
    host = cuda.from_cuda_array_interface(desc, owner=copy).copy_to_host()
    handle.close()
    return host


@pytest.mark.gpu
def test_two_processes_staged(cuda, gpu):
    # numba-cuda's TestIpcStaged: the child copies the memory into its own allocation
    import concurrent.futures
    a = np.arange(10, dtype=np.intp)
    d = cuda.to_device(a)
    ipch = cuda.current_context().get_ipc_handle(d.gpu_data)
    with concurrent.futures.ProcessPoolExecutor(mp_context=mp.get_context("spawn")) as exe:
        out = exe.submit(_child_staged, ipch, os.getpid()).result(60)
    np.testing.assert_equal(out, a)


@pytest.mark.gpu
def test_two_processes_raw_handle(cuda, gpu):
    import concurrent.futures
    a = np.arange(10, dtype=np.intp)
    d = cuda.to_device(a)
    for memory in (d, d.gpu_data):  # an array, or its MemoryPointer as numba's tests give it
        ipch = cuda.current_context().get_ipc_handle(memory)
        with concurrent.futures.ProcessPoolExecutor(mp_context=mp.get_context("spawn")) as exe:
            out = exe.submit(_child_raw, ipch.handle.reserved, ipch.size, os.getpid()).result(60)
        np.testing.assert_equal(out, a)


@pytest.mark.parametrize("shape, strides", [((4, 2**62), None), ((2**62,), (2**62,)),
                                            ((3, 2**61), None)])
def test_open_ipc_array_refuses_sizes_beyond_the_address_space(cuda, shape, strides):
    # the strides and extent of the description overflowed (UBSan) before; numpy's message now
    with pytest.raises(ValueError, match="array is too big"):
        with cuda.open_ipc_array(bytes(64), shape, np.float64, strides=strides):
            pass
