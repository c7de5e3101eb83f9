"""nbcuda's device arrays in dask.distributed's serialization families.

Dask moves a task's arrays between workers with the serializers of a connection: "cuda" where
the transport carries device memory (UCX), "dask" and "pickle" otherwise. This module gives
nbcuda.DeviceNDArray the first two, as distributed gives numba's DeviceNDArray:

* "cuda": the header describes the array (shape, strides, typestr as in
  ``__cuda_array_interface__``) and the one frame is the array's device memory as a 1-D uint8
  array, which the receiving side wraps again without a copy (any frame with
  ``__cuda_array_interface__`` does: an RMM buffer, a CuPy array).
* "dask": the same header and the elements copied once to host memory, sent as one frame;
  the receiving worker copies them to its current device.

"pickle" needs nothing here: device arrays pickle as a host copy rebuilt by ``to_device``.
A strided array that is neither C- nor F-contiguous is compacted (in C order) first.

Importing this module registers the functions when distributed is installed (``register()``
does so again, idempotently). nbcuda imported into a process where distributed is loaded (a
Dask worker, a client that imported distributed first) arranges that import itself, through
distributed's lazy registration on the module name "nbcuda"; nbcuda never imports Dask.
"""

import numpy as np

import nbcuda


class _Interface:
    """Memory at ptr described as shape/strides/typestr by ``__cuda_array_interface__``,
    holding owner (the object whose memory it is) for as long as the view lives."""

    __slots__ = ("__cuda_array_interface__", "owner")

    def __init__(self, ptr, shape, strides, typestr, descr, owner):
        cai = {"shape": tuple(shape), "strides": None if strides is None else tuple(strides),
               "typestr": typestr, "data": (ptr, False), "version": 3}
        if descr is not None:
            cai["descr"] = [tuple(field) for field in descr]
        self.__cuda_array_interface__ = cai
        self.owner = owner


def _header(cai, strides):
    header = {"shape": tuple(cai["shape"]), "strides": tuple(strides),
              "typestr": cai["typestr"]}
    if "descr" in cai:
        header["descr"] = [list(field) for field in cai["descr"]]
    return header


def _contiguous(x):
    if x.is_c_contiguous() or x.is_f_contiguous():
        return x
    return nbcuda.to_device(np.ascontiguousarray(x.copy_to_host()))


def cuda_serialize_array(x):
    """distributed's "cuda" family: (header, [the array's device memory as uint8])."""
    x = _contiguous(x)
    cai = x.__cuda_array_interface__
    frame = nbcuda.as_cuda_array(
        _Interface(cai["data"][0], (x.nbytes,), None, "|u1", None, x))
    return _header(cai, x.strides), [frame]


def _view(header, ptr, owner):
    return nbcuda.as_cuda_array(_Interface(ptr, header["shape"], header["strides"],
                                           header["typestr"], header.get("descr"), owner))


def cuda_deserialize_array(header, frames):
    """The array of cuda_serialize_array, on the memory of its frame (no copy)."""
    (frame,) = frames
    return _view(header, frame.__cuda_array_interface__["data"][0], frame)


def dask_serialize_array(x):
    """distributed's "dask" family: (header, [the elements in host memory])."""
    host = x.copy_to_host()
    if not (host.flags.c_contiguous or host.flags.f_contiguous):
        host = np.ascontiguousarray(host)
    cai = x.__cuda_array_interface__
    # order "K" keeps an F-ordered array's memory as it is: a view, never a copy
    return _header(cai, host.strides), [memoryview(host.ravel(order="K").view(np.uint8))]


def dask_deserialize_array(header, frames):
    """The array of dask_serialize_array, copied to the current device."""
    (frame,) = frames
    descr = header.get("descr")
    dtype = np.dtype([tuple(f) for f in descr] if descr else header["typestr"])
    host = np.ndarray(tuple(header["shape"]), dtype, buffer=frame,
                      strides=tuple(header["strides"]))
    return nbcuda.to_device(host)


def register():
    """Registers nbcuda.DeviceNDArray with distributed's "cuda" and "dask" serializers in this
    process (ImportError without distributed). Workers need no call: nbcuda registers itself
    where distributed is loaded when it is imported."""
    from distributed.protocol.cuda import cuda_deserialize, cuda_serialize
    from distributed.protocol.serialize import dask_deserialize, dask_serialize

    cuda_serialize.register(nbcuda.DeviceNDArray, cuda_serialize_array)
    cuda_deserialize.register(nbcuda.DeviceNDArray, cuda_deserialize_array)
    dask_serialize.register(nbcuda.DeviceNDArray, dask_serialize_array)
    dask_deserialize.register(nbcuda.DeviceNDArray, dask_deserialize_array)


try:
    import distributed.protocol  # noqa: F401
except ImportError:
    pass
else:
    register()
