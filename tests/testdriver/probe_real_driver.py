# probe_real_driver.py — asks a CUDA driver (libcuda.so.1, or $PROBE_LIBCUDA) how it answers
# the corner cases the test driver models, and writes the answers to $OUT/probe.json.
# Run on a GPU machine it produced h200_probe.json (real driver 13000, H200); run against
# libnbcuda_testdriver.so by compare_with_real.py it checks that the fixture answers alike.
import ctypes as C, json, os, sys
out = {}
lib = C.CDLL(os.environ.get("PROBE_LIBCUDA", "libcuda.so.1"))
def f(name): return getattr(lib, name)
vp = C.c_void_p
def rc(name, *a):
    try: return int(f(name)(*a))
    except Exception as e: return "EXC:%s" % e
# before init
v = C.c_int(); out["pre_init_driver_version"] = [rc("cuDriverGetVersion", C.byref(v)), v.value]
n = C.c_int(); out["pre_init_device_count"] = rc("cuDeviceGetCount", C.byref(n))
s = C.c_char_p(); out["pre_init_error_name"] = [rc("cuGetErrorName", 1, C.byref(s)), s.value and s.value.decode()]
p = vp(); st = C.c_int(); out["pre_init_getproc"] = [rc("cuGetProcAddress_v2", b"cuInit", C.byref(p), 12000, C.c_uint64(0), C.byref(st)), st.value]
# errors
errs = {}
for code in range(0, 1100):
    s = C.c_char_p(); r = rc("cuGetErrorName", code, C.byref(s))
    if r == 0:
        s2 = C.c_char_p(); rc("cuGetErrorString", code, C.byref(s2))
        errs[code] = [s.value.decode(), s2.value.decode() if s2.value else None]
out["errors"] = errs
s = C.c_char_p(); out["bad_error_name"] = [rc("cuGetErrorName", 12345, C.byref(s)), str(s.value)]
s = C.c_char_p(); out["bad_error_string"] = [rc("cuGetErrorString", 12345, C.byref(s)), str(s.value)]
out["init"] = rc("cuInit", 0)
out["init_flags1"] = rc("cuInit", 1)
rc("cuDriverGetVersion", C.byref(v)); out["driver_version"] = v.value
rc("cuDeviceGetCount", C.byref(n)); out["device_count"] = n.value
d = C.c_int(); out["device_get_99"] = rc("cuDeviceGet", C.byref(d), 99); rc("cuDeviceGet", C.byref(d), 0)
buf = C.create_string_buffer(256); rc("cuDeviceGetName", buf, 256, 0); out["name"] = buf.value.decode()
out["name_len5"] = [rc("cuDeviceGetName", buf, 5, 0), buf.value.decode()]
rc("cuDeviceGetPCIBusId", buf, 256, 0); out["pcibusid"] = buf.value.decode()
u = (C.c_ubyte * 16)(); rc("cuDeviceGetUuid_v2", u, 0); out["uuid"] = bytes(u).hex()
tm = C.c_size_t(); rc("cuDeviceTotalMem_v2", C.byref(tm), 0); out["totalmem"] = tm.value
attrs = {}
for a in range(0, 200):
    x = C.c_int(); r = rc("cuDeviceGetAttribute", C.byref(x), a, 0)
    attrs[a] = [r, x.value]
out["attrs"] = attrs
cp = C.c_int(); out["can_access_peer_self"] = [rc("cuDeviceCanAccessPeer", C.byref(cp), 0, 0), cp.value]
# cuGetProcAddress resolution
names = ["cuInit","cuMemAlloc","cuMemFree","cuMemcpyHtoD","cuMemcpyDtoH","cuMemcpyDtoD","cuMemcpyHtoDAsync","cuMemcpyDtoHAsync","cuMemcpyPeer","cuMemsetD8","cuMemGetInfo","cuDeviceTotalMem","cuCtxCreate","cuCtxDestroy","cuCtxPushCurrent","cuCtxPopCurrent","cuCtxGetDevice","cuCtxSynchronize","cuStreamCreate","cuStreamDestroy","cuStreamSynchronize","cuStreamQuery","cuStreamAddCallback","cuStreamWaitEvent","cuLaunchHostFunc","cuLaunchKernel","cuEventRecord","cuEventElapsedTime","cuEventDestroy","cuEventCreate","cuEventQuery","cuEventSynchronize","cuDevicePrimaryCtxRelease","cuDevicePrimaryCtxReset","cuDeviceGetUuid","cuGetProcAddress","cuModuleLoadData","cuProfilerStart","cuGetErrorName","cuNoSuchThing"]
sufs = ["","_v2","_v3","_v4","_ptds","_ptsz","_v2_ptds","_v2_ptsz"]
addr = {}
for nm in names:
    for sf in sufs:
        try: addr[C.cast(getattr(lib, nm+sf), vp).value] = nm+sf
        except AttributeError: pass
gp = {}
for nm in names:
    for ver in [2000, 3000, 3020, 4000, 9000, 11000, 11040, 12000, 12050, 12080, 13000]:
        for fl in [0, 1, 2]:
            p = vp(); st = C.c_int()
            r = rc("cuGetProcAddress_v2", nm.encode(), C.byref(p), ver, C.c_uint64(fl), C.byref(st))
            gp["%s/%d/%d" % (nm, ver, fl)] = [r, st.value, addr.get(p.value, hex(p.value) if p.value else None)]
out["getproc"] = gp
p = vp(); out["getproc_v1"] = [rc("cuGetProcAddress", b"cuMemAlloc", C.byref(p), 12000, C.c_uint64(0)), addr.get(p.value)]
# contexts
ctx = vp()
out["pop_empty"] = rc("cuCtxPopCurrent_v2", C.byref(ctx))
out["getdevice_none"] = rc("cuCtxGetDevice", C.byref(d))
ctx = vp(1); out["getcurrent_empty"] = [rc("cuCtxGetCurrent", C.byref(ctx)), ctx.value]
dp = C.c_uint64(); out["memalloc_noctx"] = rc("cuMemAlloc_v2", C.byref(dp), C.c_size_t(16))
out["synchronize_noctx"] = rc("cuCtxSynchronize")
out["push_null"] = rc("cuCtxPushCurrent_v2", vp(0))
out["set_null_empty"] = rc("cuCtxSetCurrent", vp(0))
out["profiler_start_noctx"] = rc("cuProfilerStart")
fl = C.c_uint(); act = C.c_int()
out["state_before_retain"] = [rc("cuDevicePrimaryCtxGetState", 0, C.byref(fl), C.byref(act)), fl.value, act.value]
pc = vp(); out["retain"] = rc("cuDevicePrimaryCtxRetain", C.byref(pc), 0)
out["state_after_retain"] = [rc("cuDevicePrimaryCtxGetState", 0, C.byref(fl), C.byref(act)), fl.value, act.value]
pc2 = vp(); rc("cuDevicePrimaryCtxRetain", C.byref(pc2), 0); out["retain_same"] = pc.value == pc2.value
ctx = vp(); rc("cuCtxGetCurrent", C.byref(ctx)); out["retain_changes_current"] = ctx.value is not None
out["ctxdestroy_primary"] = rc("cuCtxDestroy_v2", pc)
rc("cuDevicePrimaryCtxRelease_v2", 0); rc("cuDevicePrimaryCtxRelease_v2", 0)
out["state_after_release_all"] = [rc("cuDevicePrimaryCtxGetState", 0, C.byref(fl), C.byref(act)), fl.value, act.value]
out["release_extra"] = rc("cuDevicePrimaryCtxRelease_v2", 0)
pc3 = vp(); rc("cuDevicePrimaryCtxRetain", C.byref(pc3), 0); out["retain_again_same_handle"] = pc.value == pc3.value
out["push_primary"] = rc("cuCtxPushCurrent_v2", pc3)
out["reset_while_retained"] = rc("cuDevicePrimaryCtxReset_v2", 0)
out["state_after_reset"] = [rc("cuDevicePrimaryCtxGetState", 0, C.byref(fl), C.byref(act)), fl.value, act.value]
out["memalloc_after_reset"] = rc("cuMemAlloc_v2", C.byref(dp), C.c_size_t(16))
out["state_after_use_after_reset"] = [rc("cuDevicePrimaryCtxGetState", 0, C.byref(fl), C.byref(act)), fl.value, act.value]
pc4 = vp(); rc("cuDevicePrimaryCtxRetain", C.byref(pc4), 0); out["retain_after_reset_same"] = pc.value == pc4.value
out["state_after_retain_after_reset"] = [rc("cuDevicePrimaryCtxGetState", 0, C.byref(fl), C.byref(act)), fl.value, act.value]
out["memalloc_after_reset_retain"] = rc("cuMemAlloc_v2", C.byref(dp), C.c_size_t(16))
ctx = vp(); out["pop_primary"] = [rc("cuCtxPopCurrent_v2", C.byref(ctx)), ctx.value == pc.value]
# non-primary
nc = vp(); out["ctxcreate_v4"] = rc("cuCtxCreate_v4", C.byref(nc), None, 0, 0)
ctx = vp(); rc("cuCtxGetCurrent", C.byref(ctx)); out["ctxcreate_makes_current"] = ctx.value == nc.value
out["ctxcreate_v2"] = rc("cuCtxCreate_v2", C.byref(ctx), 0, 0)
out["ctxdestroy_v2_current"] = rc("cuCtxDestroy_v2", ctx)
c2 = vp(); rc("cuCtxGetCurrent", C.byref(c2)); out["after_destroy_current_is_prev"] = c2.value == nc.value
out["ctxdestroy_again"] = rc("cuCtxDestroy_v2", ctx)
out["ctxcreate_baddev"] = rc("cuCtxCreate_v4", C.byref(ctx), None, 0, 77)
# memory
out["memalloc_0"] = rc("cuMemAlloc_v2", C.byref(dp), C.c_size_t(0))
out["memalloc_huge"] = rc("cuMemAlloc_v2", C.byref(dp), C.c_size_t(1 << 50))
fr = C.c_size_t(); to = C.c_size_t(); rc("cuMemGetInfo_v2", C.byref(fr), C.byref(to)); out["meminfo"] = [fr.value, to.value]
out["memalloc_100"] = rc("cuMemAlloc_v2", C.byref(dp), C.c_size_t(100)); out["dptr"] = hex(dp.value)
dp2 = C.c_uint64(); rc("cuMemAlloc_v2", C.byref(dp2), C.c_size_t(100)); out["dptr2"] = hex(dp2.value)
hb = C.create_string_buffer(4096)
out["htod_bogus"] = rc("cuMemcpyHtoD_v2", C.c_uint64(0x1234), hb, C.c_size_t(8))
out["htod_overrun"] = rc("cuMemcpyHtoD_v2", dp, hb, C.c_size_t(4096))
out["htod_ok"] = rc("cuMemcpyHtoD_v2", dp, hb, C.c_size_t(100))
out["htod_offset"] = rc("cuMemcpyHtoD_v2", C.c_uint64(dp.value + 50), hb, C.c_size_t(50))
out["htod_zero"] = rc("cuMemcpyHtoD_v2", C.c_uint64(0x1234), hb, C.c_size_t(0))
out["memsetd8_bogus"] = rc("cuMemsetD8_v2", C.c_uint64(0x1234), 1, C.c_size_t(8))
out["memfree_bogus"] = rc("cuMemFree_v2", C.c_uint64(0x1234))
out["memfree_0"] = rc("cuMemFree_v2", C.c_uint64(0))
out["memfree_interior"] = rc("cuMemFree_v2", C.c_uint64(dp.value + 8))
out["memfree_ok"] = rc("cuMemFree_v2", dp)
out["memfree_twice"] = rc("cuMemFree_v2", dp)
# events / streams
ev = vp(); ev2 = vp(); evn = vp()
rc("cuEventCreate", C.byref(ev), 0); rc("cuEventCreate", C.byref(ev2), 0); rc("cuEventCreate", C.byref(evn), 2)
out["event_badflags"] = rc("cuEventCreate", C.byref(vp()), 0x100)
fms = C.c_float()
out["elapsed_unrecorded"] = rc("cuEventElapsedTime_v2", C.byref(fms), ev, ev2)
out["query_unrecorded"] = rc("cuEventQuery", ev)
out["sync_unrecorded"] = rc("cuEventSynchronize", ev)
rc("cuEventRecord", ev, vp(0)); rc("cuEventRecord", ev2, vp(0)); rc("cuEventRecord", evn, vp(0)); rc("cuEventSynchronize", ev2)
out["elapsed_ok"] = [rc("cuEventElapsedTime_v2", C.byref(fms), ev, ev2), fms.value]
out["elapsed_v1_ok"] = [rc("cuEventElapsedTime", C.byref(fms), ev, ev2), fms.value]
out["elapsed_disabled"] = rc("cuEventElapsedTime_v2", C.byref(fms), ev, evn)
out["elapsed_reverse"] = [rc("cuEventElapsedTime_v2", C.byref(fms), ev2, ev), fms.value]
out["elapsed_one_unrecorded"] = None
ev3 = vp(); rc("cuEventCreate", C.byref(ev3), 0); out["elapsed_one_unrecorded"] = rc("cuEventElapsedTime_v2", C.byref(fms), ev, ev3)
sm = vp(); out["stream_create"] = rc("cuStreamCreate", C.byref(sm), 0)
out["stream_create_badflags"] = rc("cuStreamCreate", C.byref(vp()), 0x10)
out["stream_query"] = rc("cuStreamQuery", sm)
out["stream_sync_1"] = rc("cuStreamSynchronize", vp(1)); out["stream_sync_2"] = rc("cuStreamSynchronize", vp(2))
out["stream_destroy_0"] = rc("cuStreamDestroy_v2", vp(0))
out["stream_destroy_1"] = rc("cuStreamDestroy_v2", vp(1))
CB = C.CFUNCTYPE(None, vp, C.c_int, vp); got = []
cb = CB(lambda s, st, u: got.append(st))
out["addcallback_flags1"] = rc("cuStreamAddCallback", sm, cb, None, 1)
out["addcallback_ok"] = rc("cuStreamAddCallback", sm, cb, None, 0); rc("cuStreamSynchronize", sm); out["cb_status"] = got
out["waitevent_badflags"] = rc("cuStreamWaitEvent", sm, ev, 0x10)
out["waitevent_unrecorded"] = rc("cuStreamWaitEvent", sm, ev3, 0)
# modules
ptx = b""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 n, .param .align 8 .b8 s[24])
{ ret; }
"""
mod = vp()
out["modload_garbage"] = rc("cuModuleLoadData", C.byref(mod), b"hello world")
out["modload_noversion"] = rc("cuModuleLoadData", C.byref(mod), b".target sm_90\n.entry k() { ret; }\n")
out["modload_sm100"] = rc("cuModuleLoadData", C.byref(mod), ptx.replace(b"sm_90", b"sm_120"))
out["modload_ver99"] = rc("cuModuleLoadData", C.byref(mod), ptx.replace(b".version 8.0", b".version 99.0"))
out["modload_syntax"] = rc("cuModuleLoadData", C.byref(mod), ptx.replace(b"ret;", b"bogus_instr;"))
out["modload_ok"] = rc("cuModuleLoadData", C.byref(mod), ptx)
fn = vp(); out["getfunc_missing"] = rc("cuModuleGetFunction", C.byref(fn), mod, b"nope")
out["getfunc_ok"] = rc("cuModuleGetFunction", C.byref(fn), mod, b"k")
fa = {}
for a in range(0, 12):
    x = C.c_int(); fa[a] = [rc("cuFuncGetAttribute", C.byref(x), a, fn), x.value]
out["funcattrs"] = fa
pv = C.c_uint64(dp2.value); nv = C.c_uint(5); sv = (C.c_ubyte * 24)()
params = (vp * 3)(C.cast(C.byref(pv), vp), C.cast(C.byref(nv), vp), C.cast(sv, vp))
def launch(gx, gy, gz, bx, by, bz, sh, prm=params):
    return rc("cuLaunchKernel", fn, gx, gy, gz, bx, by, bz, sh, vp(0), prm, None)
out["launch_ok"] = launch(1,1,1,32,1,1,0)
out["launch_grid0"] = launch(0,1,1,32,1,1,0)
out["launch_block0"] = launch(1,1,1,0,1,1,0)
out["launch_block2048"] = launch(1,1,1,2048,1,1,0)
out["launch_block_prod"] = launch(1,1,1,1024,2,1,0)
out["launch_blockz128"] = launch(1,1,1,1,1,128,0)
out["launch_gridy70000"] = launch(1,70000,1,1,1,1,0)
out["launch_shared_big"] = launch(1,1,1,1,1,1,100000)
out["launch_shared_49k"] = launch(1,1,1,1,1,1,49153)
out["launch_noparams"] = launch(1,1,1,1,1,1,0,None)
out["sync_after"] = rc("cuCtxSynchronize")
out["modunload"] = rc("cuModuleUnload", mod)
out["profiler_start"] = rc("cuProfilerStart"); out["profiler_stop"] = rc("cuProfilerStop")
out["profiler_stop_again"] = rc("cuProfilerStop")
# fork
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    res = {}
    res["init"] = rc("cuInit", 0)
    res["count"] = rc("cuDeviceGetCount", C.byref(n))
    res["version"] = rc("cuDriverGetVersion", C.byref(v))
    s = C.c_char_p(); res["errname"] = rc("cuGetErrorName", 1, C.byref(s))
    p = vp(); st = C.c_int(); res["getproc"] = rc("cuGetProcAddress_v2", b"cuInit", C.byref(p), 12000, C.c_uint64(0), C.byref(st))
    ctx = vp(); res["getcurrent"] = rc("cuCtxGetCurrent", C.byref(ctx))
    os.write(w, json.dumps(res).encode()); os._exit(0)
os.waitpid(pid, 0); out["fork_child"] = json.loads(os.read(r, 65536))
path = os.path.join(os.environ.get("OUT", "/tmp"), "probe.json")
json.dump(out, open(path, "w"), indent=1)
print("wrote", path, len(json.dumps(out)))
