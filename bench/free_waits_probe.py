"""free_waits_probe.py — does the driver's cuMemFree wait for work in flight? (H200 facts for
src/host/reuse.c, whose reuse of a freed block waits as the cuMemFree it saves would.)

With the raw driver through ctypes (no nbcuda): a kernel spins ~100 ms on a stream (the legacy
default stream, a blocking stream, a non-blocking stream); meanwhile the host times cuMemFree of
an unrelated block, cuMemAlloc of a new one, and cuCtxSynchronize. Prints one line per case.

Usage: python bench/free_waits_probe.py [--ms 100]
"""
import argparse
import ctypes
import time

PTX = rb"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry spin(.param .u64 cycles)
{
  .reg .u64 %r<5>;
  .reg .pred %p;
  ld.param.u64 %r1, [cycles];
  mov.u64 %r2, %clock64;
LOOP:
  mov.u64 %r3, %clock64;
  sub.u64 %r4, %r3, %r2;
  setp.lt.u64 %p, %r4, %r1;
  @%p bra LOOP;
  ret;
}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ms", type=float, default=100.0)
    args = ap.parse_args()
    cu = ctypes.CDLL("libcuda.so.1")

    def check(res, what):
        if res != 0:
            raise RuntimeError(f"{what} failed: CUresult {res}")

    check(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    clock_khz = ctypes.c_int()
    check(cu.cuDeviceGetAttribute(ctypes.byref(clock_khz), 13, dev), "clock rate")  # CLOCK_RATE
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    check(cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(PTX)), "cuModuleLoadData")
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"spin"), "cuModuleGetFunction")
    cycles = ctypes.c_uint64(int(args.ms * clock_khz.value))
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(cycles), ctypes.c_void_p))
    streams = {"legacy default stream": ctypes.c_void_p(1)}
    for name, flags in (("blocking stream", 0), ("non-blocking stream", 1)):
        s = ctypes.c_void_p()
        check(cu.cuStreamCreate(ctypes.byref(s), flags), "cuStreamCreate")
        streams[name] = s
    cu.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    cu.cuMemFree_v2.argtypes = [ctypes.c_uint64]

    def spin(stream):
        check(cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, params, None), "launch")

    def timed(call):
        t = time.perf_counter()
        call()
        return (time.perf_counter() - t) * 1e3

    def alloc(n=1024):
        p = ctypes.c_uint64()
        check(cu.cuMemAlloc_v2(ctypes.byref(p), n), "cuMemAlloc")
        return p.value

    spin(streams["legacy default stream"])  # load and warm up
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    print(f"kernel spins {args.ms:.0f} ms ({cycles.value} cycles at {clock_khz.value} kHz)")
    for name, stream in streams.items():
        block = alloc()
        spin(stream)
        t_free = timed(lambda: check(cu.cuMemFree_v2(block), "cuMemFree"))
        check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
        spin(stream)
        fresh = []
        t_alloc = timed(lambda: fresh.append(alloc()))
        t_sync = timed(lambda: check(cu.cuCtxSynchronize(), "cuCtxSynchronize"))
        check(cu.cuMemFree_v2(fresh[0]), "cuMemFree")
        print(f"{name:22s}: cuMemFree of an unrelated 1 KiB block {t_free:7.2f} ms, "
              f"cuMemAlloc of 1 KiB {t_alloc:7.2f} ms (then cuCtxSynchronize {t_sync:7.2f} ms)")


if __name__ == "__main__":
    main()
