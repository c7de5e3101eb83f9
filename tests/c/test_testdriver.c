/* test_testdriver.c — tests of the software CUDA test driver itself.
 *
 * The fixture is what every host-API test trusts, so it is tested directly, the way
 * nbcuda uses a driver: dlopen $NBCUDA_TESTDRIVER, take cuGetProcAddress_v2 with dlsym,
 * resolve every entry point through it, then check the behaviour the real driver has
 * (the expected codes come from a real H200, see tests/testdriver/h200_probe.json):
 * per-thread context stacks under 64 threads, primary-context refcounting and reset,
 * streams that run copies, launches and callbacks in order on worker threads, event
 * timing, memory range checks, PTX loading and launch validation, fault injection, the
 * init modes and fork detection. Each test runs in its own forked process (test.h).
 */
#include <cuda.h>
#include <cudaProfiler.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <time.h>

#include "test.h"
#include "testdriver.h"

#define CU_OK(call)                                                                            \
  do {                                                                                         \
    CUresult r_ = (call);                                                                      \
    if (r_ != CUDA_SUCCESS) TEST_FAIL_("%s returned %d", #call, (int)r_);                      \
  } while (0)
#define CU_IS(call, expected)                                                                  \
  do {                                                                                         \
    CUresult r_ = (call);                                                                      \
    if (r_ != (expected))                                                                      \
      TEST_FAIL_("%s returned %d, expected %d", #call, (int)r_, (int)(expected));              \
  } while (0)

/* The entry points, resolved the way nbcuda resolves them (cudaVersion 12000). */
static struct {
  PFN_cuGetProcAddress_v12000 GetProcAddress;
  PFN_cuInit_v2000 Init;
  PFN_cuDriverGetVersion_v2020 DriverGetVersion;
  PFN_cuGetErrorName_v6000 GetErrorName;
  PFN_cuGetErrorString_v6000 GetErrorString;
  PFN_cuDeviceGetCount_v2000 DeviceGetCount;
  PFN_cuDeviceGet_v2000 DeviceGet;
  PFN_cuDeviceGetName_v2000 DeviceGetName;
  PFN_cuDeviceGetUuid_v11040 DeviceGetUuid;
  PFN_cuDeviceGetAttribute_v2000 DeviceGetAttribute;
  PFN_cuDeviceTotalMem_v3020 DeviceTotalMem;
  PFN_cuDeviceGetPCIBusId_v4010 DeviceGetPCIBusId;
  PFN_cuDeviceCanAccessPeer_v4000 DeviceCanAccessPeer;
  PFN_cuDevicePrimaryCtxRetain_v7000 PrimaryCtxRetain;
  PFN_cuDevicePrimaryCtxRelease_v11000 PrimaryCtxRelease;
  PFN_cuDevicePrimaryCtxReset_v11000 PrimaryCtxReset;
  PFN_cuDevicePrimaryCtxGetState_v7000 PrimaryCtxGetState;
  PFN_cuCtxCreate_v11040 CtxCreate_v3;
  PFN_cuCtxDestroy_v4000 CtxDestroy;
  PFN_cuCtxPushCurrent_v4000 CtxPushCurrent;
  PFN_cuCtxPopCurrent_v4000 CtxPopCurrent;
  PFN_cuCtxGetCurrent_v4000 CtxGetCurrent;
  PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
  PFN_cuCtxGetDevice_v2000 CtxGetDevice;
  PFN_cuCtxSynchronize_v2000 CtxSynchronize;
  PFN_cuCtxEnablePeerAccess_v4000 CtxEnablePeerAccess;
  PFN_cuMemGetInfo_v3020 MemGetInfo;
  PFN_cuMemAlloc_v3020 MemAlloc;
  PFN_cuMemFree_v3020 MemFree;
  PFN_cuMemcpyHtoD_v3020 MemcpyHtoD;
  PFN_cuMemcpyDtoH_v3020 MemcpyDtoH;
  PFN_cuMemcpyDtoD_v3020 MemcpyDtoD;
  PFN_cuMemcpyHtoDAsync_v3020 MemcpyHtoDAsync;
  PFN_cuMemcpyDtoHAsync_v3020 MemcpyDtoHAsync;
  PFN_cuMemHostRegister_v6050 MemHostRegister;
  PFN_cuMemHostUnregister_v4000 MemHostUnregister;
  PFN_cuMemcpyPeer_v4000 MemcpyPeer;
  PFN_cuMemsetD8_v3020 MemsetD8;
  PFN_cuStreamCreate_v2000 StreamCreate;
  PFN_cuStreamDestroy_v4000 StreamDestroy;
  PFN_cuStreamSynchronize_v2000 StreamSynchronize;
  PFN_cuStreamQuery_v2000 StreamQuery;
  PFN_cuStreamAddCallback_v5000 StreamAddCallback;
  PFN_cuStreamWaitEvent_v3020 StreamWaitEvent;
  PFN_cuLaunchHostFunc_v10000 LaunchHostFunc;
  PFN_cuEventCreate_v2000 EventCreate;
  PFN_cuEventDestroy_v4000 EventDestroy;
  PFN_cuEventRecord_v2000 EventRecord;
  PFN_cuEventQuery_v2000 EventQuery;
  PFN_cuEventSynchronize_v2000 EventSynchronize;
  PFN_cuEventElapsedTime_v2000 EventElapsedTime;
  PFN_cuModuleLoadData_v2000 ModuleLoadData;
  PFN_cuModuleLoadDataEx_v2010 ModuleLoadDataEx;
  PFN_cuModuleUnload_v2000 ModuleUnload;
  PFN_cuModuleGetFunction_v2000 ModuleGetFunction;
  PFN_cuFuncGetAttribute_v2020 FuncGetAttribute;
  PFN_cuLaunchKernel_v4000 LaunchKernel;
  PFN_cuProfilerStart_v4000 ProfilerStart;
  PFN_cuProfilerStop_v4000 ProfilerStop;
} cu;

/* The address cuGetProcAddress_v2 gives for (name, version, flags), or NULL. */
static void *proc(const char *name, int version, cuuint64_t flags,
                  CUdriverProcAddressQueryResult *status) {
  void *p = NULL;
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
  CU_OK(cu.GetProcAddress(name, &p, version, flags, &st));
  if (status) *status = st;
  return p;
}

#define RESOLVE(field, name)                                                                   \
  do {                                                                                         \
    void *p_ = proc(name, 12000, 0, NULL);                                                     \
    if (!p_) TEST_FAIL_("cuGetProcAddress(%s) gave NULL", name);                               \
    memcpy(&cu.field, &p_, sizeof p_);                                                         \
  } while (0)

static void load(void) {
  void *gpa = tdrv_sym("cuGetProcAddress_v2");
  ASSERT(gpa != NULL);
  memcpy(&cu.GetProcAddress, &gpa, sizeof gpa);
  RESOLVE(Init, "cuInit");
  RESOLVE(DriverGetVersion, "cuDriverGetVersion");
  RESOLVE(GetErrorName, "cuGetErrorName");
  RESOLVE(GetErrorString, "cuGetErrorString");
  RESOLVE(DeviceGetCount, "cuDeviceGetCount");
  RESOLVE(DeviceGet, "cuDeviceGet");
  RESOLVE(DeviceGetName, "cuDeviceGetName");
  RESOLVE(DeviceGetUuid, "cuDeviceGetUuid");
  RESOLVE(DeviceGetAttribute, "cuDeviceGetAttribute");
  RESOLVE(DeviceTotalMem, "cuDeviceTotalMem");
  RESOLVE(DeviceGetPCIBusId, "cuDeviceGetPCIBusId");
  RESOLVE(DeviceCanAccessPeer, "cuDeviceCanAccessPeer");
  RESOLVE(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  RESOLVE(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease");
  RESOLVE(PrimaryCtxReset, "cuDevicePrimaryCtxReset");
  RESOLVE(PrimaryCtxGetState, "cuDevicePrimaryCtxGetState");
  RESOLVE(CtxCreate_v3, "cuCtxCreate");
  RESOLVE(CtxDestroy, "cuCtxDestroy");
  RESOLVE(CtxPushCurrent, "cuCtxPushCurrent");
  RESOLVE(CtxPopCurrent, "cuCtxPopCurrent");
  RESOLVE(CtxGetCurrent, "cuCtxGetCurrent");
  RESOLVE(CtxSetCurrent, "cuCtxSetCurrent");
  RESOLVE(CtxGetDevice, "cuCtxGetDevice");
  RESOLVE(CtxSynchronize, "cuCtxSynchronize");
  RESOLVE(CtxEnablePeerAccess, "cuCtxEnablePeerAccess");
  RESOLVE(MemGetInfo, "cuMemGetInfo");
  RESOLVE(MemAlloc, "cuMemAlloc");
  RESOLVE(MemFree, "cuMemFree");
  RESOLVE(MemcpyHtoD, "cuMemcpyHtoD");
  RESOLVE(MemcpyDtoH, "cuMemcpyDtoH");
  RESOLVE(MemcpyDtoD, "cuMemcpyDtoD");
  RESOLVE(MemcpyHtoDAsync, "cuMemcpyHtoDAsync");
  RESOLVE(MemcpyDtoHAsync, "cuMemcpyDtoHAsync");
  RESOLVE(MemHostRegister, "cuMemHostRegister");
  RESOLVE(MemHostUnregister, "cuMemHostUnregister");
  RESOLVE(MemcpyPeer, "cuMemcpyPeer");
  RESOLVE(MemsetD8, "cuMemsetD8");
  RESOLVE(StreamCreate, "cuStreamCreate");
  RESOLVE(StreamDestroy, "cuStreamDestroy");
  RESOLVE(StreamSynchronize, "cuStreamSynchronize");
  RESOLVE(StreamQuery, "cuStreamQuery");
  RESOLVE(StreamAddCallback, "cuStreamAddCallback");
  RESOLVE(StreamWaitEvent, "cuStreamWaitEvent");
  RESOLVE(LaunchHostFunc, "cuLaunchHostFunc");
  RESOLVE(EventCreate, "cuEventCreate");
  RESOLVE(EventDestroy, "cuEventDestroy");
  RESOLVE(EventRecord, "cuEventRecord");
  RESOLVE(EventQuery, "cuEventQuery");
  RESOLVE(EventSynchronize, "cuEventSynchronize");
  RESOLVE(EventElapsedTime, "cuEventElapsedTime");
  RESOLVE(ModuleLoadData, "cuModuleLoadData");
  RESOLVE(ModuleLoadDataEx, "cuModuleLoadDataEx");
  RESOLVE(ModuleUnload, "cuModuleUnload");
  RESOLVE(ModuleGetFunction, "cuModuleGetFunction");
  RESOLVE(FuncGetAttribute, "cuFuncGetAttribute");
  RESOLVE(LaunchKernel, "cuLaunchKernel");
  RESOLVE(ProfilerStart, "cuProfilerStart");
  RESOLVE(ProfilerStop, "cuProfilerStop");
}

/* load + cuInit + the primary context of device 0 made current. */
static CUcontext setup(void) {
  load();
  CU_OK(cu.Init(0));
  CUcontext ctx = NULL;
  CU_OK(cu.PrimaryCtxRetain(&ctx, 0));
  CU_OK(cu.CtxPushCurrent(ctx));
  return ctx;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char kPtx[] = "// a commented .entry ghost( is not a kernel\n"
                           ".version 8.0\n"
                           ".target sm_90\n"
                           ".address_size 64\n"
                           "\n"
                           ".visible .entry kern(\n"
                           "\t.param .u64 kern_param_0,\n"
                           "\t.param .u32 kern_param_1,\n"
                           "\t.param .align 8 .b8 kern_param_2[24]\n"
                           ")\n"
                           "{\n\tret;\n}\n"
                           ".visible .entry noargs()\n{\n\tret;\n}\n";

/* ---- cuGetProcAddress and initialization --------------------------------------------- */

TEST(procaddr_versions_and_variants) {
  load(); /* no cuInit: cuGetProcAddress works before it, like the real driver */
  ASSERT(proc("cuMemAlloc", 12000, 0, NULL) == tdrv_sym("cuMemAlloc_v2"));
  ASSERT(proc("cuCtxDestroy", 12000, 0, NULL) == tdrv_sym("cuCtxDestroy_v2"));
  ASSERT(proc("cuEventElapsedTime", 12000, 0, NULL) == tdrv_sym("cuEventElapsedTime"));
  ASSERT(proc("cuEventElapsedTime", 12080, 0, NULL) == tdrv_sym("cuEventElapsedTime_v2"));
  ASSERT(proc("cuCtxCreate", 12000, 0, NULL) == tdrv_sym("cuCtxCreate_v3"));
  ASSERT(proc("cuCtxCreate", 13000, 0, NULL) == tdrv_sym("cuCtxCreate_v4"));
  ASSERT(proc("cuCtxGetDevice", 12000, 0, NULL) == tdrv_sym("cuCtxGetDevice"));
  ASSERT(proc("cuCtxGetDevice", 13000, 0, NULL) == tdrv_sym("cuCtxGetDevice_v2"));
  ASSERT(proc("cuGetProcAddress", 12000, 0, NULL) == tdrv_sym("cuGetProcAddress_v2"));
  /* Per-thread default stream variants with flag 2 only. */
  ASSERT(proc("cuStreamSynchronize", 12000, 0, NULL) == tdrv_sym("cuStreamSynchronize"));
  ASSERT(proc("cuStreamSynchronize", 12000, 1, NULL) == tdrv_sym("cuStreamSynchronize"));
  ASSERT(proc("cuStreamSynchronize", 12000, 2, NULL) == tdrv_sym("cuStreamSynchronize_ptsz"));
  ASSERT(proc("cuMemcpyHtoD", 12000, 2, NULL) == tdrv_sym("cuMemcpyHtoD_v2_ptds"));
  ASSERT(proc("cuLaunchKernel", 12000, 2, NULL) == tdrv_sym("cuLaunchKernel_ptsz"));
  ASSERT(proc("cuMemAlloc", 12000, 2, NULL) == tdrv_sym("cuMemAlloc_v2"));
  /* Unknown names and too-old versions: success, NULL, and the reason in the status. */
  CUdriverProcAddressQueryResult st;
  ASSERT(proc("cuNoSuchThing", 12000, 0, &st) == NULL);
  ASSERT_EQ(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  ASSERT(proc("cuMemAlloc", 2000, 0, &st) == NULL);
  ASSERT_EQ(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  ASSERT(proc("cuLaunchKernel", 4000, 2, &st) == NULL);
  ASSERT_EQ(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  ASSERT(proc("cuInit", 12000, 0, &st) == tdrv_sym("cuInit"));
  ASSERT_EQ(st, CU_GET_PROC_ADDRESS_SUCCESS);
  void *p = NULL;
  CU_IS(cu.GetProcAddress(NULL, &p, 12000, 0, NULL), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.GetProcAddress("cuInit", NULL, 12000, 0, NULL), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.GetProcAddress("cuInit", &p, 12000, 8, NULL), CUDA_ERROR_INVALID_VALUE);
  /* The v1 entry point (no status argument) resolves the same way. */
  PFN_cuGetProcAddress_v11030 v1;
  void *v1p = tdrv_sym("cuGetProcAddress");
  memcpy(&v1, &v1p, sizeof v1p);
  CU_OK(v1("cuMemFree", &p, 12000, 0));
  ASSERT(p == tdrv_sym("cuMemFree_v2"));
  ASSERT_EQ(tdrv()->calls("cuGetProcAddress"), tdrv()->variant_calls("cuGetProcAddress_v2") +
                                                   tdrv()->variant_calls("cuGetProcAddress"));
}

TEST(init_before_and_after) {
  load();
  int n = -1, version = 0;
  const char *s = NULL;
  CU_IS(cu.DeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
  CU_OK(cu.DriverGetVersion(&version));
  ASSERT_EQ(version, 13000);
  CU_OK(cu.GetErrorName(CUDA_ERROR_INVALID_CONTEXT, &s));
  ASSERT_STREQ(s, "CUDA_ERROR_INVALID_CONTEXT");
  CU_IS(cu.Init(1), CUDA_ERROR_INVALID_VALUE);
  CU_OK(cu.Init(0));
  CU_OK(cu.Init(0));
  CU_OK(cu.DeviceGetCount(&n));
  ASSERT_EQ(n, 2);
  ASSERT_EQ(tdrv()->calls("cuInit"), 3);
  ASSERT_EQ(tdrv()->calls("cuDeviceGetCount"), 2);
}

TEST(error_names_and_strings) {
  load();
  const char *name = NULL, *str = NULL;
  CU_OK(cu.GetErrorName(CUDA_SUCCESS, &name));
  ASSERT_STREQ(name, "CUDA_SUCCESS");
  CU_OK(cu.GetErrorString(CUDA_ERROR_NO_DEVICE, &str));
  ASSERT_STREQ(str, "no CUDA-capable device is detected");
  CU_OK(cu.GetErrorString(CUDA_ERROR_STUB_LIBRARY, &str));
  ASSERT_STREQ(str, "CUDA driver is a stub library");
  CU_OK(cu.GetErrorName(CUDA_ERROR_UNKNOWN, &name));
  ASSERT_STREQ(name, "CUDA_ERROR_UNKNOWN");
  CU_IS(cu.GetErrorName((CUresult)12345, &name), CUDA_ERROR_INVALID_VALUE);
  ASSERT(name == NULL);
  CU_IS(cu.GetErrorString((CUresult)12345, &str), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.GetErrorName(CUDA_SUCCESS, NULL), CUDA_ERROR_INVALID_VALUE);
  /* Every code below 1000 that has a name has a string, and the name is CUDA_*. */
  int named = 0;
  for (int code = 0; code < 1000; code++) {
    if (cu.GetErrorName((CUresult)code, &name) != CUDA_SUCCESS) continue;
    named++;
    ASSERT(strncmp(name, "CUDA_", 5) == 0);
    CU_OK(cu.GetErrorString((CUresult)code, &str));
    ASSERT(str && *str);
  }
  ASSERT_EQ(named, 101);
}

TEST(modes) {
  load();
  setenv("NBCUDA_TESTDRIVER_MODE", "stub", 1);
  CU_IS(cu.Init(0), CUDA_ERROR_STUB_LIBRARY);
  setenv("NBCUDA_TESTDRIVER_MODE", "nodevice", 1);
  CU_IS(cu.Init(0), CUDA_ERROR_NO_DEVICE);
  setenv("NBCUDA_TESTDRIVER_MODE", "initfail", 1);
  CU_IS(cu.Init(0), CUDA_ERROR_UNKNOWN);
  int n;
  CU_IS(cu.DeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
  unsetenv("NBCUDA_TESTDRIVER_MODE");
  CU_OK(cu.Init(0));
  CU_OK(cu.DeviceGetCount(&n));
}

TEST(zero_devices_is_no_device) {
  load();
  setenv("NBCUDA_TESTDRIVER_DEVICES", "0", 1);
  CU_IS(cu.Init(0), CUDA_ERROR_NO_DEVICE);
}

TEST(devices_and_attributes) {
  setenv("NBCUDA_TESTDRIVER_DEVICES", "3", 1);
  setenv("NBCUDA_TESTDRIVER_CC", "9.0,5.2", 1);
  setenv("NBCUDA_TESTDRIVER_MEM", "256M", 1);
  load();
  CU_OK(cu.Init(0));
  int n = 0;
  CU_OK(cu.DeviceGetCount(&n));
  ASSERT_EQ(n, 3);
  const int majors[3] = {9, 5, 5}, minors[3] = {0, 2, 2};
  CUuuid uuids[3];
  char bus[3][32];
  for (int d = 0; d < 3; d++) {
    CUdevice dev;
    CU_OK(cu.DeviceGet(&dev, d));
    char name[64], expect[64];
    CU_OK(cu.DeviceGetName(name, sizeof name, dev));
    snprintf(expect, sizeof expect, "nbcuda test device %d", d);
    ASSERT_STREQ(name, expect);
    int v;
    CU_OK(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    ASSERT_EQ(v, majors[d]);
    CU_OK(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    ASSERT_EQ(v, minors[d]);
    CU_OK(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
    ASSERT_EQ(v, 32);
    CU_OK(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev));
    ASSERT_EQ(v, 1024);
    CU_OK(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    ASSERT_EQ(v, 132);
    size_t mem = 0;
    CU_OK(cu.DeviceTotalMem(&mem, dev));
    ASSERT_EQ(mem, 256u << 20);
    CU_OK(cu.DeviceGetUuid(&uuids[d], dev));
    CU_OK(cu.DeviceGetPCIBusId(bus[d], sizeof bus[d], dev));
    ASSERT_EQ(strlen(bus[d]), 12);
  }
  ASSERT(memcmp(&uuids[0], &uuids[1], sizeof uuids[0]) != 0);
  ASSERT(memcmp(&uuids[1], &uuids[2], sizeof uuids[0]) != 0);
  ASSERT(strcmp(bus[0], bus[1]) != 0 && strcmp(bus[1], bus[2]) != 0);
  ASSERT_STREQ(bus[0], "0000:01:00.0");
  char shortname[5];
  CU_OK(cu.DeviceGetName(shortname, sizeof shortname, 0));
  ASSERT_STREQ(shortname, "nbcu");
  int v;
  CUdevice dev;
  CU_IS(cu.DeviceGet(&dev, 3), CUDA_ERROR_INVALID_DEVICE);
  CU_IS(cu.DeviceGetAttribute(&v, (CUdevice_attribute)0, 0), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 7), CUDA_ERROR_INVALID_DEVICE);
  tdrv()->set_attribute(1, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 7);
  CU_OK(cu.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1));
  ASSERT_EQ(v, 7);
  int can = -1;
  CU_OK(cu.DeviceCanAccessPeer(&can, 0, 0));
  ASSERT_EQ(can, 0);
  CU_OK(cu.DeviceCanAccessPeer(&can, 0, 2));
  ASSERT_EQ(can, 1);
}

/* ---- contexts ------------------------------------------------------------------------- */

typedef struct stack_job {
  int index;
  int failed;
  char why[128];
} stack_job;

#define JOB_CHECK(cond)                                                                        \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      snprintf(job->why, sizeof job->why, "line %d: %s", __LINE__, #cond);                     \
      job->failed = 1;                                                                         \
      return NULL;                                                                             \
    }                                                                                          \
  } while (0)

/* One thread's session: its own stack starts empty, retains and pushes a primary context,
 * creates (and so pushes) its own context, pops both and checks what it sees each time. */
static void *stack_thread(void *arg) {
  stack_job *job = arg;
  CUcontext cur = (CUcontext)1, primary = NULL, mine = NULL, popped = NULL;
  CUdevice dev = -1;
  int d = job->index % 2;
  JOB_CHECK(cu.CtxGetCurrent(&cur) == CUDA_SUCCESS && cur == NULL);
  JOB_CHECK(cu.CtxGetDevice(&dev) == CUDA_ERROR_INVALID_CONTEXT);
  JOB_CHECK(tdrv()->stack_depth() == 0);
  JOB_CHECK(cu.PrimaryCtxRetain(&primary, d) == CUDA_SUCCESS);
  JOB_CHECK(cu.CtxPushCurrent(primary) == CUDA_SUCCESS);
  JOB_CHECK(cu.CtxGetDevice(&dev) == CUDA_SUCCESS && dev == d);
  JOB_CHECK(cu.CtxCreate_v3(&mine, NULL, 0, 0, 1 - d) == CUDA_SUCCESS);
  JOB_CHECK(tdrv()->stack_depth() == 2);
  JOB_CHECK(cu.CtxGetCurrent(&cur) == CUDA_SUCCESS && cur == mine);
  JOB_CHECK(cu.CtxGetDevice(&dev) == CUDA_SUCCESS && dev == 1 - d);
  for (int i = 0; i < 50; i++) {
    JOB_CHECK(cu.CtxPushCurrent(primary) == CUDA_SUCCESS);
    JOB_CHECK(cu.CtxPopCurrent(&popped) == CUDA_SUCCESS && popped == primary);
  }
  JOB_CHECK(cu.CtxDestroy(mine) == CUDA_SUCCESS); /* current: also popped */
  JOB_CHECK(cu.CtxGetCurrent(&cur) == CUDA_SUCCESS && cur == primary);
  JOB_CHECK(cu.CtxPopCurrent(&popped) == CUDA_SUCCESS && popped == primary);
  JOB_CHECK(cu.CtxPopCurrent(&popped) == CUDA_ERROR_INVALID_CONTEXT);
  JOB_CHECK(cu.PrimaryCtxRelease(d) == CUDA_SUCCESS);
  return NULL;
}

TEST(context_stack_per_thread_64_threads) {
  load();
  CU_OK(cu.Init(0));
  CUcontext main_ctx;
  CU_OK(cu.PrimaryCtxRetain(&main_ctx, 0));
  CU_OK(cu.CtxPushCurrent(main_ctx));
  pthread_t threads[64];
  stack_job jobs[64];
  for (int i = 0; i < 64; i++) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    jobs[i].index = i;
    ASSERT_EQ(pthread_create(&threads[i], NULL, stack_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 64; i++) {
    pthread_join(threads[i], NULL);
    if (jobs[i].failed) TEST_FAIL_("thread %d: %s", i, jobs[i].why);
  }
  /* This thread's stack was untouched by the others. */
  CUcontext cur;
  CU_OK(cu.CtxGetCurrent(&cur));
  ASSERT(cur == main_ctx);
  ASSERT_EQ(tdrv()->stack_depth(), 1);
  ASSERT_EQ(tdrv()->primary_refcount(0), 1);
  ASSERT_EQ(tdrv()->primary_refcount(1), 0);
  ASSERT_EQ(tdrv()->live_contexts(), 0);
}

TEST(primary_context_refcount_and_reset) {
  load();
  CU_OK(cu.Init(0));
  CUcontext a, b, cur;
  unsigned flags;
  int active;
  CU_OK(cu.PrimaryCtxGetState(0, &flags, &active));
  ASSERT_EQ(active, 0);
  CU_OK(cu.PrimaryCtxRetain(&a, 0));
  CU_OK(cu.PrimaryCtxRetain(&b, 0));
  ASSERT(a == b);
  ASSERT_EQ(tdrv()->primary_refcount(0), 2);
  CU_OK(cu.CtxGetCurrent(&cur)); /* retain does not push */
  ASSERT(cur == NULL);
  CU_OK(cu.PrimaryCtxGetState(0, &flags, &active));
  ASSERT_EQ(active, 1);
  CU_IS(cu.CtxDestroy(a), CUDA_ERROR_INVALID_CONTEXT);
  CU_OK(cu.CtxPushCurrent(a));
  CUdeviceptr p;
  CU_OK(cu.MemAlloc(&p, 64));
  ASSERT_EQ(tdrv()->live_allocations(), 1);
  /* Reset frees everything and deactivates, keeping the retain count. */
  CU_OK(cu.PrimaryCtxReset(0));
  ASSERT_EQ(tdrv()->primary_reset_count(0), 1);
  ASSERT_EQ(tdrv()->primary_refcount(0), 2);
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  CU_OK(cu.PrimaryCtxGetState(0, &flags, &active));
  ASSERT_EQ(active, 0);
  CU_IS(cu.MemAlloc(&p, 64), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  CU_OK(cu.PrimaryCtxRetain(&b, 0));
  ASSERT(a == b);
  CU_OK(cu.MemAlloc(&p, 64));
  for (int i = 0; i < 3; i++)
    CU_OK(cu.PrimaryCtxRelease(0));
  ASSERT_EQ(tdrv()->primary_refcount(0), 0);
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  CU_IS(cu.PrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT);
  CU_IS(cu.PrimaryCtxRelease(9), CUDA_ERROR_INVALID_DEVICE);
}

TEST(created_contexts) {
  load();
  CU_OK(cu.Init(0));
  CUcontext c1, c2, cur, popped;
  CU_OK(cu.CtxCreate_v3(&c1, NULL, 0, 0, 0));
  CU_OK(cu.CtxCreate_v3(&c2, NULL, 0, 0, 1));
  ASSERT(c1 != c2);
  ASSERT_EQ(tdrv()->live_contexts(), 2);
  ASSERT_EQ(tdrv()->stack_depth(), 2);
  CU_OK(cu.CtxDestroy(c1)); /* not current: the stack keeps its (now dead) entry */
  CU_IS(cu.CtxDestroy(c1), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  CU_IS(cu.CtxPushCurrent(c1), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  CU_OK(cu.CtxDestroy(c2)); /* current: popped */
  CU_OK(cu.CtxGetCurrent(&cur));
  ASSERT(cur == c1);
  CUdevice dev;
  CU_IS(cu.CtxGetDevice(&dev), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  CU_OK(cu.CtxPopCurrent(&popped));
  ASSERT_EQ(tdrv()->live_contexts(), 0);
  CU_IS(cu.CtxCreate_v3(&c1, NULL, 0, 0, 5), CUDA_ERROR_INVALID_DEVICE);
  CU_IS(cu.CtxPushCurrent(NULL), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.CtxPushCurrent((CUcontext)&dev), CUDA_ERROR_INVALID_CONTEXT);
  CU_OK(cu.CtxSetCurrent(NULL)); /* empty stack: nothing to unbind */
  /* SetCurrent replaces the top. */
  CUcontext p0, p1;
  CU_OK(cu.PrimaryCtxRetain(&p0, 0));
  CU_OK(cu.PrimaryCtxRetain(&p1, 1));
  CU_OK(cu.CtxSetCurrent(p0));
  CU_OK(cu.CtxSetCurrent(p1));
  ASSERT_EQ(tdrv()->stack_depth(), 1);
  CU_OK(cu.CtxGetDevice(&dev));
  ASSERT_EQ(dev, 1);
  /* The v4 form with a params struct, and the 13000 cuCtxGetDevice_v2. */
  PFN_cuCtxCreate_v12050 create4;
  PFN_cuCtxGetDevice_v13000 getdev2;
  void *p4 = proc("cuCtxCreate", 12050, 0, NULL), *g2 = proc("cuCtxGetDevice", 13000, 0, NULL);
  memcpy(&create4, &p4, sizeof p4);
  memcpy(&getdev2, &g2, sizeof g2);
  CUctxCreateParams params = {0};
  CUcontext c4;
  CU_OK(create4(&c4, &params, 0, 0));
  CU_OK(getdev2(&dev, p1));
  ASSERT_EQ(dev, 1);
  CU_OK(getdev2(&dev, NULL));
  ASSERT_EQ(dev, 0);
  ASSERT_EQ(tdrv()->calls("cuCtxCreate"), 4); /* c1, c2, device 5, c4 */
  ASSERT_EQ(tdrv()->variant_calls("cuCtxCreate_v4"), 1);
}

TEST(peer_access_and_copy) {
  load();
  CU_OK(cu.Init(0));
  CUcontext c0, c1;
  CU_OK(cu.PrimaryCtxRetain(&c0, 0));
  CU_OK(cu.PrimaryCtxRetain(&c1, 1));
  CU_OK(cu.CtxPushCurrent(c1));
  CUdeviceptr d1;
  CU_OK(cu.MemAlloc(&d1, 16));
  CU_OK(cu.MemsetD8(d1, 0x5a, 16));
  CU_OK(cu.CtxPushCurrent(c0));
  CU_OK(cu.CtxEnablePeerAccess(c1, 0));
  CU_IS(cu.CtxEnablePeerAccess(c1, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  CU_IS(cu.CtxEnablePeerAccess(c0, 0), CUDA_ERROR_INVALID_DEVICE);
  CU_IS(cu.CtxEnablePeerAccess(c1, 1), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr d0;
  CU_OK(cu.MemAlloc(&d0, 16));
  CU_OK(cu.MemcpyPeer(d0, c0, d1, c1, 16));
  unsigned char host[16];
  CU_OK(cu.MemcpyDtoH(host, d0, 16));
  for (int i = 0; i < 16; i++)
    ASSERT_EQ(host[i], 0x5a);
  CU_IS(cu.MemcpyPeer(d0, c0, d1, c1, 17), CUDA_ERROR_INVALID_VALUE);
}

/* ---- streams, callbacks, events ------------------------------------------------------- */

typedef struct trace {
  pthread_mutex_t lock;
  int order[16];
  int n;
  CUstream streams[16];
  CUresult statuses[16];
  pthread_t threads[16];
  double when[16];
} trace;

static trace tr = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void note(int tag, CUstream s, CUresult status) {
  pthread_mutex_lock(&tr.lock);
  if (tr.n < 16) {
    tr.order[tr.n] = tag;
    tr.streams[tr.n] = s;
    tr.statuses[tr.n] = status;
    tr.threads[tr.n] = pthread_self();
    tr.when[tr.n] = now_ms();
    tr.n++;
  }
  pthread_mutex_unlock(&tr.lock);
}

static void CUDA_CB on_callback(CUstream s, CUresult status, void *user) {
  note((int)(intptr_t)user, s, status);
}

static void CUDA_CB on_hostfn(void *user) {
  note((int)(intptr_t)user, NULL, CUDA_SUCCESS);
}

static CUfunction load_kernel(const char *name) {
  CUmodule mod;
  CUfunction f;
  CU_OK(cu.ModuleLoadData(&mod, kPtx));
  CU_OK(cu.ModuleGetFunction(&f, mod, name));
  return f;
}

TEST(stream_runs_work_in_order_with_callbacks) {
  setup();
  CUfunction k = load_kernel("noargs");
  CUstream s;
  CU_OK(cu.StreamCreate(&s, 0));
  ASSERT_EQ(tdrv()->live_streams(), 1);
  tdrv()->set_launch_delay_ms(150);
  unsigned char in[256], out[256];
  for (int i = 0; i < 256; i++)
    in[i] = (unsigned char)i;
  memset(out, 0, sizeof out);
  CUdeviceptr d;
  CU_OK(cu.MemAlloc(&d, sizeof in));
  /* page-locked: a device-to-host copy into pageable memory returns only when done */
  CU_OK(cu.MemHostRegister(out, sizeof out, 0));
  CU_OK(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
  CU_OK(cu.StreamAddCallback(s, on_callback, (void *)1, 0));
  CU_OK(cu.MemcpyHtoDAsync(d, in, sizeof in, s));
  CU_OK(cu.LaunchHostFunc(s, on_hostfn, (void *)2));
  CU_OK(cu.MemcpyDtoHAsync(out, d, sizeof out, s));
  CU_OK(cu.StreamAddCallback(s, on_callback, (void *)3, 0));
  CU_IS(cu.StreamQuery(s), CUDA_ERROR_NOT_READY); /* the launch takes 150 ms */
  ASSERT_EQ(tr.n, 0);
  CU_OK(cu.StreamSynchronize(s));
  CU_OK(cu.StreamQuery(s));
  ASSERT_EQ(tr.n, 3);
  ASSERT_EQ(tr.order[0], 1);
  ASSERT_EQ(tr.order[1], 2);
  ASSERT_EQ(tr.order[2], 3);
  ASSERT(tr.streams[0] == s);
  ASSERT_EQ(tr.statuses[0], CUDA_SUCCESS);
  ASSERT(!pthread_equal(tr.threads[0], pthread_self())); /* ran on the stream's worker */
  ASSERT(memcmp(in, out, sizeof in) == 0);
  CU_OK(cu.MemHostUnregister(out));
  ASSERT_EQ(tdrv()->host_callbacks_run(), 3);
  ASSERT_EQ(tdrv()->launch_count(), 1);
  CU_IS(cu.StreamAddCallback(s, on_callback, NULL, 1), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.StreamAddCallback(s, NULL, NULL, 0), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.StreamCreate(&s, 0x10), CUDA_ERROR_INVALID_VALUE);
  CU_OK(cu.StreamDestroy(s));
  ASSERT_EQ(tdrv()->live_streams(), 0);
  CU_IS(cu.StreamDestroy(s), CUDA_ERROR_INVALID_HANDLE);
  CU_IS(cu.StreamDestroy(NULL), CUDA_ERROR_INVALID_HANDLE);
  CU_IS(cu.StreamDestroy(CU_STREAM_LEGACY), CUDA_ERROR_INVALID_HANDLE);
  CU_IS(cu.StreamQuery((CUstream)&s), CUDA_ERROR_INVALID_HANDLE);
}

TEST(default_streams_and_per_thread_variants) {
  setup();
  CUfunction k = load_kernel("noargs");
  tdrv()->set_launch_delay_ms(150);
  PFN_cuLaunchKernel_v7000_ptsz launch_pt;
  PFN_cuStreamSynchronize_v7000_ptsz sync_pt;
  void *a = proc("cuLaunchKernel", 12000, 2, NULL),
       *b = proc("cuStreamSynchronize", 12000, 2, NULL);
  memcpy(&launch_pt, &a, sizeof a);
  memcpy(&sync_pt, &b, sizeof b);
  CU_OK(launch_pt(k, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
  tdrv_launch_info info;
  ASSERT(tdrv()->last_launch(&info));
  ASSERT_EQ(info.per_thread, 1);
  CU_IS(cu.StreamQuery(NULL), CUDA_ERROR_NOT_READY);
  CU_OK(sync_pt(CU_STREAM_PER_THREAD));
  CU_OK(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_LEGACY, NULL, NULL));
  ASSERT(tdrv()->last_launch(&info));
  ASSERT_EQ(info.per_thread, 0);
  ASSERT_EQ(info.stream, (uintptr_t)CU_STREAM_LEGACY);
  /* A synchronous copy waits for the default stream's launch first. */
  CUdeviceptr d;
  CU_OK(cu.MemAlloc(&d, 4));
  int v = 7;
  CU_OK(cu.MemcpyHtoD(d, &v, sizeof v));
  CU_OK(cu.StreamQuery(NULL));
  ASSERT_EQ(tdrv()->variant_calls("cuLaunchKernel_ptsz"), 1);
  ASSERT_EQ(tdrv()->variant_calls("cuLaunchKernel"), 1);
  ASSERT_EQ(tdrv()->calls("cuLaunchKernel"), 2);
  ASSERT_EQ(tdrv()->variant_calls("cuStreamSynchronize_ptsz"), 1);
  CU_OK(cu.CtxSynchronize());
}

TEST(event_timing) {
  setup();
  CUfunction k = load_kernel("noargs");
  CUstream s;
  CU_OK(cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUevent start, end, notiming, never;
  CU_OK(cu.EventCreate(&start, CU_EVENT_DEFAULT));
  CU_OK(cu.EventCreate(&end, CU_EVENT_DEFAULT));
  CU_OK(cu.EventCreate(&notiming, CU_EVENT_DISABLE_TIMING));
  CU_OK(cu.EventCreate(&never, CU_EVENT_DEFAULT));
  ASSERT_EQ(tdrv()->live_events(), 4);
  CU_IS(cu.EventCreate(&never, 0x100), CUDA_ERROR_INVALID_VALUE);
  float ms = -1;
  CU_IS(cu.EventElapsedTime(&ms, start, never), CUDA_ERROR_INVALID_HANDLE);
  CU_OK(cu.EventQuery(never)); /* never recorded counts as complete */
  CU_OK(cu.EventSynchronize(never));
  tdrv()->set_launch_delay_ms(150);
  CU_OK(cu.EventRecord(start, s));
  CU_OK(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
  CU_OK(cu.EventRecord(end, s));
  CU_OK(cu.EventRecord(notiming, s));
  CU_IS(cu.EventQuery(end), CUDA_ERROR_NOT_READY);
  CU_IS(cu.EventElapsedTime(&ms, start, end), CUDA_ERROR_NOT_READY);
  CU_OK(cu.EventSynchronize(end));
  CU_OK(cu.EventQuery(end));
  CU_OK(cu.EventElapsedTime(&ms, start, end));
  ASSERT(ms >= 145.0f && ms < 5000.0f);
  float back;
  CU_OK(cu.EventElapsedTime(&back, end, start));
  ASSERT(back == -ms);
  CU_OK(cu.EventSynchronize(notiming));
  CU_IS(cu.EventElapsedTime(&ms, start, notiming), CUDA_ERROR_INVALID_HANDLE);
  /* v1 and v2 answer alike. */
  PFN_cuEventElapsedTime_v12080 v2;
  void *p = proc("cuEventElapsedTime", 12080, 0, NULL);
  memcpy(&v2, &p, sizeof p);
  float ms2;
  CU_OK(v2(&ms2, start, end));
  ASSERT(ms2 == -back);
  CU_OK(cu.EventDestroy(never));
  CU_IS(cu.EventQuery(never), CUDA_ERROR_INVALID_HANDLE);
  CU_OK(cu.StreamDestroy(s));
  CU_OK(cu.EventDestroy(start));
  CU_OK(cu.EventDestroy(end));
  CU_OK(cu.EventDestroy(notiming));
  ASSERT_EQ(tdrv()->live_events(), 0);
}

TEST(stream_waits_for_event_of_another_stream) {
  setup();
  CUfunction k = load_kernel("noargs");
  CUstream a, b;
  CU_OK(cu.StreamCreate(&a, CU_STREAM_NON_BLOCKING));
  CU_OK(cu.StreamCreate(&b, CU_STREAM_NON_BLOCKING));
  CUevent ev;
  CU_OK(cu.EventCreate(&ev, CU_EVENT_DISABLE_TIMING));
  CU_IS(cu.StreamWaitEvent(b, ev, 0x10), CUDA_ERROR_INVALID_VALUE);
  CU_OK(cu.StreamWaitEvent(b, ev, 0)); /* unrecorded: no-op */
  tdrv()->set_launch_delay_ms(50);
  double t0 = now_ms();
  CU_OK(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, a, NULL, NULL));
  CU_OK(cu.EventRecord(ev, a));
  CU_OK(cu.StreamWaitEvent(b, ev, 0));
  CU_OK(cu.LaunchHostFunc(b, on_hostfn, (void *)9));
  CU_OK(cu.StreamSynchronize(b));
  ASSERT_EQ(tr.n, 1);
  ASSERT(tr.when[0] - t0 >= 45.0); /* b's host function waited for a's launch */
  CU_OK(cu.EventQuery(ev));
}

static void CUDA_CB destroy_own_stream(CUstream s, CUresult status, void *user) {
  (void)status;
  (void)user;
  note(cu.StreamDestroy(s) == CUDA_SUCCESS ? 1 : -1, s, CUDA_SUCCESS);
}

TEST(callback_may_destroy_its_own_stream) {
  setup();
  CUstream s;
  CU_OK(cu.StreamCreate(&s, 0));
  CU_OK(cu.StreamAddCallback(s, destroy_own_stream, NULL, 0));
  for (int i = 0; i < 200 && tdrv()->live_streams() != 0; i++)
    usleep(5000);
  ASSERT_EQ(tdrv()->live_streams(), 0);
  ASSERT_EQ(tr.n, 1);
  ASSERT_EQ(tr.order[0], 1);
}

TEST(reset_drops_pending_work) {
  setup();
  CUfunction k = load_kernel("noargs");
  CUstream s;
  CU_OK(cu.StreamCreate(&s, 0));
  CUevent ev;
  CU_OK(cu.EventCreate(&ev, 0));
  tdrv()->set_launch_delay_ms(300);
  CU_OK(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
  CU_OK(cu.StreamAddCallback(s, on_callback, (void *)1, 0));
  CU_OK(cu.EventRecord(ev, s));
  CU_OK(cu.PrimaryCtxReset(0));
  ASSERT_EQ(tr.n, 0); /* the callback never runs, as with the real driver */
  ASSERT_EQ(tdrv()->live_streams(), 0);
  ASSERT_EQ(tdrv()->live_events(), 0);
  ASSERT_EQ(tdrv()->live_modules(), 0);
  CU_IS(cu.StreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
  CU_IS(cu.StreamQuery(NULL), CUDA_ERROR_CONTEXT_IS_DESTROYED);
}

/* ---- memory --------------------------------------------------------------------------- */

TEST(memory_ranges_and_info) {
  load();
  CU_OK(cu.Init(0));
  CUdeviceptr d;
  CU_IS(cu.MemAlloc(&d, 16), CUDA_ERROR_INVALID_CONTEXT);
  CUcontext ctx;
  CU_OK(cu.PrimaryCtxRetain(&ctx, 0));
  CU_OK(cu.CtxPushCurrent(ctx));
  size_t free0, total;
  CU_OK(cu.MemGetInfo(&free0, &total));
  ASSERT_EQ(total, 1u << 30);
  ASSERT_EQ(free0, total);
  CU_IS(cu.MemAlloc(&d, 0), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.MemAlloc(&d, (size_t)2 << 30), CUDA_ERROR_OUT_OF_MEMORY);
  CU_OK(cu.MemAlloc(&d, 100));
  CUdeviceptr d2;
  CU_OK(cu.MemAlloc(&d2, 100));
  ASSERT(d2 != d && d % 256 == 0);
  size_t free1;
  CU_OK(cu.MemGetInfo(&free1, &total));
  ASSERT_EQ(free0 - free1, 1024);
  ASSERT_EQ(tdrv()->allocated_bytes(0), 1024);
  unsigned char in[100], out[100];
  for (int i = 0; i < 100; i++)
    in[i] = (unsigned char)(3 * i);
  CU_OK(cu.MemcpyHtoD(d, in, 100));
  CU_OK(cu.MemcpyDtoD(d2, d, 100));
  CU_OK(cu.MemsetD8(d2 + 10, 0xee, 5));
  CU_OK(cu.MemcpyDtoH(out, d2, 100));
  for (int i = 0; i < 100; i++)
    ASSERT_EQ(out[i], i >= 10 && i < 15 ? 0xee : in[i]);
  CU_OK(cu.MemcpyDtoH(out, d + 50, 50)); /* interior pointers are fine for copies */
  ASSERT(memcmp(out, in + 50, 50) == 0);
  CU_IS(cu.MemcpyHtoD(d, in, 101), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.MemcpyHtoD(d + 90, in, 11), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.MemcpyHtoD(0x1234, in, 8), CUDA_ERROR_INVALID_VALUE);
  CU_OK(cu.MemcpyHtoD(0x1234, in, 0));
  CU_IS(cu.MemsetD8(0x1234, 0, 8), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.MemcpyHtoDAsync(0x1234, in, 8, NULL), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.MemFree(d + 8), CUDA_ERROR_INVALID_VALUE);
  CU_OK(cu.MemFree(0));
  CU_OK(cu.MemFree(d));
  CU_IS(cu.MemFree(d), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.MemcpyDtoH(out, d, 4), CUDA_ERROR_INVALID_VALUE); /* freed: never reused */
  ASSERT_EQ(tdrv()->live_allocations(), 1);
  /* Large allocations are charged in 2 MiB pages and cannot exceed what is free. */
  CUdeviceptr big;
  CU_OK(cu.MemAlloc(&big, (3u << 20) + 1));
  ASSERT_EQ(tdrv()->allocated_bytes(0), 512 + (4u << 20));
  CU_OK(cu.MemGetInfo(&free1, &total));
  CU_IS(cu.MemAlloc(&d, free1 + 1), CUDA_ERROR_OUT_OF_MEMORY);
  tdrv()->set_total_memory(0, (size_t)4 << 30);
  CU_OK(cu.MemAlloc(&d, (size_t)1 << 30));
  CU_OK(cu.MemFree(d));
  CU_OK(cu.MemFree(big));
  CU_OK(cu.MemFree(d2));
  ASSERT_EQ(tdrv()->allocated_bytes(0), 0);
}

/* ---- modules and launches ------------------------------------------------------------- */

TEST(module_loading) {
  setup();
  CUmodule mod;
  CUfunction f;
  CU_IS(cu.ModuleLoadData(&mod, "hello world"), CUDA_ERROR_INVALID_IMAGE);
  CU_IS(cu.ModuleLoadData(&mod, ".target sm_90\n.entry k() { ret; }\n"),
        CUDA_ERROR_INVALID_IMAGE);
  CU_IS(cu.ModuleLoadData(&mod, ".version 99.0\n.target sm_90\n"),
        CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  CU_IS(cu.ModuleLoadData(&mod, ".version 8.0\n.target sm_120\n"), CUDA_ERROR_INVALID_PTX);
  CU_IS(cu.ModuleLoadData(NULL, kPtx), CUDA_ERROR_INVALID_VALUE);
  char log[256] = "untouched";
  CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
  CU_IS(cu.ModuleLoadDataEx(&mod, ".version 8.0\n.target sm_100\n", 2, opts, vals),
        CUDA_ERROR_INVALID_PTX);
  ASSERT_CONTAINS(log, "SM version specified by .target is higher");
  ASSERT_EQ(tdrv()->live_modules(), 0);
  CU_OK(cu.ModuleLoadDataEx(&mod, kPtx, 2, opts, vals));
  ASSERT_EQ(tdrv()->live_modules(), 1);
  CU_OK(cu.ModuleGetFunction(&f, mod, "kern"));
  CU_OK(cu.ModuleGetFunction(&f, mod, "noargs"));
  CU_IS(cu.ModuleGetFunction(&f, mod, "ghost"), CUDA_ERROR_NOT_FOUND);
  CU_IS(cu.ModuleGetFunction(&f, (CUmodule)&f, "kern"), CUDA_ERROR_INVALID_HANDLE);
  int v;
  CU_OK(cu.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
  ASSERT_EQ(v, 1024);
  CU_OK(cu.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_PTX_VERSION, f));
  ASSERT_EQ(v, 90);
  CU_OK(cu.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
  ASSERT_EQ(v, 49152);
  CU_IS(cu.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, f), CUDA_ERROR_INVALID_VALUE);
  CU_OK(cu.ModuleUnload(mod));
  CU_IS(cu.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_ERROR_INVALID_HANDLE);
  CU_IS(cu.ModuleUnload(mod), CUDA_ERROR_INVALID_HANDLE);
  /* A cubin: every .text.NAME section is a kernel. */
  static const char strtab[] = "\0.shstrtab\0.text.elfkern\0";
  struct fake_cubin {
    Elf64_Ehdr eh;
    Elf64_Shdr sh[3];
    char str[sizeof strtab];
  } elf;
  memset(&elf, 0, sizeof elf);
  memcpy(elf.eh.e_ident, ELFMAG, SELFMAG);
  elf.eh.e_ident[EI_CLASS] = ELFCLASS64;
  elf.eh.e_shoff = offsetof(struct fake_cubin, sh);
  elf.eh.e_shentsize = sizeof(Elf64_Shdr);
  elf.eh.e_shnum = 3;
  elf.eh.e_shstrndx = 1;
  elf.sh[1].sh_name = 1;
  elf.sh[1].sh_offset = offsetof(struct fake_cubin, str);
  elf.sh[2].sh_name = 11;
  memcpy(elf.str, strtab, sizeof strtab);
  CU_OK(cu.ModuleLoadData(&mod, &elf));
  CU_OK(cu.ModuleGetFunction(&f, mod, "elfkern"));
  CU_OK(cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
}

TEST(launch_validation_and_parameters) {
  setup();
  CUfunction k = load_kernel("kern");
  unsigned long long p0 = 0x1122334455667788ull;
  unsigned p1 = 42;
  unsigned char p2[24];
  for (int i = 0; i < 24; i++)
    p2[i] = (unsigned char)(100 + i);
  void *params[3] = {&p0, &p1, p2};
  CU_OK(cu.LaunchKernel(k, 4, 2, 1, 128, 2, 1, 1024, NULL, params, NULL));
  tdrv_launch_info info;
  ASSERT(tdrv()->last_launch(&info));
  ASSERT_STREQ(info.function, "kern");
  ASSERT_EQ(info.grid[0], 4);
  ASSERT_EQ(info.grid[1], 2);
  ASSERT_EQ(info.block[0], 128);
  ASSERT_EQ(info.block[1], 2);
  ASSERT_EQ(info.shared_bytes, 1024);
  ASSERT_EQ(info.nparams, 3);
  ASSERT_EQ(info.param_size[0], 8);
  ASSERT_EQ(info.param_size[1], 4);
  ASSERT_EQ(info.param_size[2], 24);
  ASSERT_EQ(info.param_offset[1], 8);
  ASSERT_EQ(info.param_offset[2], 16); /* .align 8 after a 4-byte parameter */
  ASSERT_EQ(info.param_total, 40);
  ASSERT(memcmp(info.param_bytes, &p0, 8) == 0);
  ASSERT(memcmp(info.param_bytes + 8, &p1, 4) == 0);
  ASSERT(memcmp(info.param_bytes + 16, p2, 24) == 0);
  /* The real driver's answers for bad configurations. */
  CU_IS(cu.LaunchKernel(k, 0, 1, 1, 32, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.LaunchKernel(k, 1, 1, 1, 0, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.LaunchKernel(k, 1, 1, 1, 2048, 1, 1, 0, NULL, params, NULL),
        CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.LaunchKernel(k, 1, 1, 1, 1024, 2, 1, 0, NULL, params, NULL),
        CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 128, 0, NULL, params, NULL),
        CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.LaunchKernel(k, 1, 70000, 1, 1, 1, 1, 0, NULL, params, NULL),
        CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 49153, NULL, params, NULL),
        CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
  CU_IS(cu.LaunchKernel((CUfunction)&p0, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
        CUDA_ERROR_INVALID_HANDLE);
  ASSERT_EQ(tdrv()->launch_count(), 1);
  /* The `extra` form passes one packed buffer. */
  unsigned char buf[40] = {1, 2, 3};
  size_t size = sizeof buf;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  CU_OK(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
  ASSERT(tdrv()->last_launch(&info));
  ASSERT_EQ(info.param_total, 40);
  ASSERT_EQ(info.param_bytes[2], 3);
  /* Refusal, by the API and by fault injection, leaves no trace. */
  tdrv()->set_refuse_launch(1);
  CU_IS(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_NOT_SUPPORTED);
  tdrv()->set_refuse_launch(0);
  tdrv()->fail("cuLaunchKernel", 1, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  CU_IS(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  ASSERT_EQ(tdrv()->launch_count(), 2);
  CU_OK(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
  ASSERT_EQ(tdrv()->launch_count(), 3);
  /* A kernel of another context is refused. */
  CUcontext other;
  CU_OK(cu.CtxCreate_v3(&other, NULL, 0, 0, 1));
  CU_IS(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
        CUDA_ERROR_INVALID_CONTEXT);
}

TEST(launch_refused_by_env) {
  setenv("NBCUDA_TESTDRIVER_REFUSE_LAUNCH", "1", 1);
  setup();
  CUfunction k = load_kernel("noargs");
  CU_IS(cu.LaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(tdrv()->launch_count(), 0);
}

/* ---- fault injection, profiler, fork -------------------------------------------------- */

TEST(fault_injection_env_and_api) {
  setenv("NBCUDA_TESTDRIVER_FAIL", "cuStreamCreate:2:201,cuMemAlloc:1:2", 1);
  setup();
  CUstream s1, s2, s3;
  CU_OK(cu.StreamCreate(&s1, 0));
  CU_IS(cu.StreamCreate(&s2, 0), CUDA_ERROR_INVALID_CONTEXT);
  ASSERT_EQ(tdrv()->live_streams(), 1); /* no side effect */
  CU_OK(cu.StreamCreate(&s3, 0));
  CUdeviceptr d;
  CU_IS(cu.MemAlloc(&d, 8), CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(tdrv()->live_allocations(), 0);
  CU_OK(cu.MemAlloc(&d, 8));
  CUevent ev;
  CU_OK(cu.EventCreate(&ev, 0));
  tdrv()->fail("cuEventRecord", 2, CUDA_ERROR_ILLEGAL_ADDRESS);
  CU_OK(cu.EventRecord(ev, s1));
  CU_IS(cu.EventRecord(ev, s1), CUDA_ERROR_ILLEGAL_ADDRESS);
  CU_OK(cu.EventRecord(ev, s1));
  /* Counting is by base name over all variants; 0 clears pending faults. */
  PFN_cuEventRecord_v7000_ptsz record_pt;
  void *p = proc("cuEventRecord", 12000, 2, NULL);
  memcpy(&record_pt, &p, sizeof p);
  tdrv()->fail("cuEventRecord", 1, CUDA_ERROR_UNKNOWN);
  CU_IS(record_pt(ev, s1), CUDA_ERROR_UNKNOWN);
  tdrv()->fail("cuEventRecord", 1, CUDA_ERROR_UNKNOWN);
  tdrv()->fail("cuEventRecord", 0, 0);
  CU_OK(record_pt(ev, s1));
  ASSERT_EQ(tdrv()->calls("cuEventRecord"), 5);
  ASSERT_EQ(tdrv()->variant_calls("cuEventRecord_ptsz"), 2);
  ASSERT_EQ(tdrv()->variant_calls("cuEventRecord"), 3);
  ASSERT_EQ(tdrv()->calls("cuStreamCreate"), 3);
  /* cuInit itself can be made to fail. */
  tdrv()->fail("cuInit", 1, CUDA_ERROR_NO_DEVICE);
  CU_IS(cu.Init(0), CUDA_ERROR_NO_DEVICE);
  CU_OK(cu.Init(0));
}

TEST(profiler_start_stop) {
  load();
  CU_OK(cu.Init(0));
  CU_IS(cu.ProfilerStart(), CUDA_ERROR_INVALID_CONTEXT);
  CUcontext ctx;
  CU_OK(cu.PrimaryCtxRetain(&ctx, 1));
  CU_OK(cu.CtxPushCurrent(ctx));
  ASSERT_EQ(tdrv()->profiler_state(), 0);
  CU_OK(cu.ProfilerStart());
  ASSERT_EQ(tdrv()->profiler_state(), 1);
  CU_OK(cu.ProfilerStop());
  CU_OK(cu.ProfilerStop());
  ASSERT_EQ(tdrv()->profiler_state(), 0);
  ASSERT_EQ(tdrv()->calls("cuProfilerStop"), 2);
}

TEST(fork_after_init_is_not_initialized) {
  setup();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    int n, version;
    const char *name;
    CUcontext cur;
    int codes[5] = {cu.Init(0), cu.DeviceGetCount(&n), cu.CtxGetCurrent(&cur),
                    cu.DriverGetVersion(&version), cu.GetErrorName(CUDA_ERROR_UNKNOWN, &name)};
    if (write(fds[1], codes, sizeof codes) != (ssize_t)sizeof codes) _exit(2);
    _exit(0);
  }
  int codes[5] = {0};
  ASSERT_EQ(read(fds[0], codes, sizeof codes), (long long)sizeof codes);
  int status;
  waitpid(pid, &status, 0);
  ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(codes[0], CUDA_ERROR_NOT_INITIALIZED);
  ASSERT_EQ(codes[1], CUDA_ERROR_NOT_INITIALIZED);
  ASSERT_EQ(codes[2], CUDA_ERROR_NOT_INITIALIZED);
  ASSERT_EQ(codes[3], CUDA_SUCCESS);
  ASSERT_EQ(codes[4], CUDA_SUCCESS);
  int n;
  CU_OK(cu.DeviceGetCount(&n)); /* the parent is unaffected */
}

TEST_LIST(X(procaddr_versions_and_variants) X(init_before_and_after) X(error_names_and_strings)
              X(modes) X(zero_devices_is_no_device) X(devices_and_attributes)
                  X(context_stack_per_thread_64_threads) X(primary_context_refcount_and_reset)
                      X(created_contexts) X(peer_access_and_copy)
                          X(stream_runs_work_in_order_with_callbacks)
                              X(default_streams_and_per_thread_variants) X(event_timing)
                                  X(stream_waits_for_event_of_another_stream)
                                      X(callback_may_destroy_its_own_stream) X(
                                          reset_drops_pending_work) X(memory_ranges_and_info)
                                          X(module_loading) X(launch_validation_and_parameters)
                                              X(launch_refused_by_env)
                                                  X(fault_injection_env_and_api)
                                                      X(profiler_start_stop)
                                                          X(fork_after_init_is_not_initialized))

TEST_MAIN()
