/* nvvm.c — libNVVM and libdevice: finding them, loading them once, and turning NVVM IR
 * text into PTX or LTO-IR.
 *
 * How it works. Nothing NVIDIA is linked at build time: the first compile (or an explicit
 * nbc__nvvm_load) runs a pthread_once that asks the toolkit finder (base/toolkit.c: NBCUDA_NVVM,
 * CUDA_HOME, CUDA_PATH, /usr/local/cuda, the dynamic loader's own path, NVIDIA's pip wheels)
 * for a libnvvm.so that loads and has the dozen entry points we use. When nothing loads, the
 * message names every place searched, so a user can see at once what to fix. libdevice is
 * found the same way (NBCUDA_LIBDEVICE, the toolkit folders, next to the libNVVM that was
 * loaded, the wheels) and read into memory once per process the first time IR needs it.
 *
 * A compile creates its own nvvmProgram, so compiles run concurrently; the only shared
 * state is what the once-functions fill in, which is never written again afterwards.
 * The IR is always verified before it is compiled: libNVVM's optimiser can spin forever on
 * malformed IR (a bad phi, say), while the verifier reports it. libdevice is added with
 * nvvmLazyAddModuleToProgram after the verify, so only the functions used are linked in
 * and the 460 KB module is not re-verified each time.
 *
 * libNVVM runs on a large stack (stack.c: its optimiser recurses along long chains of
 * instructions), or, when the options set a time limit, in a child process that is killed
 * at the deadline (nvvmCompileProgram cannot be cancelled; see run_with_time_limit).
 *
 * Options follow numba-cuda's mapping, in its order: -opt=3|0, -g (debug), -gen-lto
 * (LTO-IR output), -arch=compute_XY, then the fastmath group -ftz=1 -fma=1 -prec-div=0
 * -prec-sqrt=0. The arch is the nearest compute capability at or below the requested one
 * among those this libNVVM accepts (the list below is checked against libNVVM by
 * tests/c/test_nvvm.c, since libNVVM 13 has no call that lists its architectures).
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/numba_env.h"
#include "base/toolkit.h"
#include "compiler/compiler.h"

/* The subset of nvvm.h we use, declared here so that no CUDA header is needed to build. */
typedef void *nvvm_program_t;
typedef int (*nvvm_version_fn)(int *, int *);
typedef int (*nvvm_ir_version_fn)(int *, int *, int *, int *);
typedef int (*nvvm_create_fn)(nvvm_program_t *);
typedef int (*nvvm_destroy_fn)(nvvm_program_t *);
typedef int (*nvvm_add_fn)(nvvm_program_t, const char *, size_t, const char *);
typedef int (*nvvm_run_fn)(nvvm_program_t, int, const char **);
typedef int (*nvvm_size_fn)(nvvm_program_t, size_t *);
typedef int (*nvvm_get_fn)(nvvm_program_t, char *);
typedef const char *(*nvvm_error_string_fn)(int);

enum { NVVM_SUCCESS = 0, NVVM_ERROR_INVALID_OPTION = 7 };

static struct {
  void *handle;
  char path[4096];
  nvvm_version_fn version;
  nvvm_ir_version_fn ir_version;
  nvvm_create_fn create;
  nvvm_destroy_fn destroy;
  nvvm_add_fn add_module;
  nvvm_add_fn lazy_add_module;
  nvvm_run_fn verify;
  nvvm_run_fn compile;
  nvvm_size_fn result_size;
  nvvm_get_fn result;
  nvvm_size_fn log_size;
  nvvm_get_fn log;
  nvvm_error_string_fn error_string;
  nbc_status_t status;
  char error[8192];
} nvvm;

static struct {
  char *data;
  size_t size;
  char path[4096];
  nbc_status_t status;
  char error[8192];
} libdevice;

static pthread_once_t nvvm_once = PTHREAD_ONCE_INIT;
static pthread_once_t libdevice_once = PTHREAD_ONCE_INIT;

/* The compute capabilities libNVVM 13.0 accepts as -arch=compute_XY, ascending. */
static const int supported_cc[] = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
#define SUPPORTED_CC_COUNT ((int)(sizeof supported_cc / sizeof supported_cc[0]))

/* ------------------------------------------------------------------ searching -------- */

/* base/toolkit.c finds the files; here its accept callback is the opener. */
typedef struct {
  nbc__nvvm_opener open;
  void *data;
} opener_call;

static bool accept_nvvm(void *data, const char *path, char *why, size_t why_size) {
  (void)why;
  (void)why_size;
  const opener_call *call = data;
  return call->open(call->data, path);
}

int nbc__nvvm_locate(nbc__getenv_fn get, const char *root, bool use_loader,
                     nbc__nvvm_opener open, void *opener_data, char *path, size_t size,
                     char *message, size_t msize) {
  nbc__toolkit_search *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(message, msize, "  - (out of host memory)\n");
    return 1;
  }
  opener_call call = {open, opener_data};
  s->getenv = get;
  s->root = root;
  s->no_loader = !use_loader;
  s->accept = accept_nvvm;
  s->data = &call;
  int rc = nbc__toolkit_find(NBC__TOOLKIT_NVVM, s) == 0 ? 0 : 1;
  if (rc == 0) {
    snprintf(path, size, "%s", s->path);
    message[0] = '\0';
  } else {
    nbc__toolkit_tried(s, NBC__TOOLKIT_LINES, message, msize);
  }
  free(s);
  return rc;
}

static const char *real_getenv(const char *name) {
  return getenv(name);
}

/* ------------------------------------------------------------------ loading ---------- */

static bool open_nvvm(void *data, const char *path) {
  (void)data;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return false;
#define SYM_(field, name)                                                                      \
  do {                                                                                         \
    *(void **)&nvvm.field = dlsym(h, name);                                                    \
    if (!nvvm.field) {                                                                         \
      dlclose(h);                                                                              \
      return false;                                                                            \
    }                                                                                          \
  } while (0)
  SYM_(version, "nvvmVersion");
  SYM_(ir_version, "nvvmIRVersion");
  SYM_(create, "nvvmCreateProgram");
  SYM_(destroy, "nvvmDestroyProgram");
  SYM_(add_module, "nvvmAddModuleToProgram");
  SYM_(lazy_add_module, "nvvmLazyAddModuleToProgram");
  SYM_(verify, "nvvmVerifyProgram");
  SYM_(compile, "nvvmCompileProgram");
  SYM_(result_size, "nvvmGetCompiledResultSize");
  SYM_(result, "nvvmGetCompiledResult");
  SYM_(log_size, "nvvmGetProgramLogSize");
  SYM_(log, "nvvmGetProgramLog");
  SYM_(error_string, "nvvmGetErrorString");
#undef SYM_
  nvvm.handle = h;
  return true;
}

static void load_nvvm_once(void) {
  char searched_text[6144];
  if (nbc__nvvm_locate(real_getenv, "", true, open_nvvm, NULL, nvvm.path, sizeof nvvm.path,
                       searched_text, sizeof searched_text) == 0) {
    nvvm.status = NBC_OK;
    return;
  }
  nvvm.status = NBC_NO_NVVM;
  snprintf(nvvm.error, sizeof nvvm.error,
           "libNVVM cannot be found or loaded; searched:\n%s"
           "Set NBCUDA_NVVM to the path of libnvvm.so, or CUDA_HOME to a CUDA toolkit.",
           searched_text);
}

nbc_status_t nbc__nvvm_load(void) {
  pthread_once(&nvvm_once, load_nvvm_once);
  return nvvm.status;
}

const char *nbc__nvvm_load_error(void) {
  pthread_once(&nvvm_once, load_nvvm_once);
  return nvvm.status == NBC_OK ? "" : nvvm.error;
}

const char *nbc__nvvm_path(void) {
  pthread_once(&nvvm_once, load_nvvm_once);
  return nvvm.status == NBC_OK ? nvvm.path : NULL;
}

nbc_status_t nbc__nvvm_version(int *pmajor, int *pminor) {
  nbc_status_t st = nbc__nvvm_load();
  if (st != NBC_OK) return st;
  if (nvvm.version(pmajor, pminor) != NVVM_SUCCESS) return NBC_NVVM_ERROR;
  return NBC_OK;
}

static void load_libdevice_once(void) {
  libdevice.status = NBC_NO_LIBDEVICE;
  nbc__toolkit_search *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(libdevice.error, sizeof libdevice.error, "libdevice: out of host memory");
    return;
  }
  /* Next to the libNVVM in use: <root>/nvvm/lib64/libnvvm.so -> <root>/nvvm/libdevice. */
  s->beside = nvvm.status == NBC_OK ? nvvm.path : NULL;
  if (nbc__toolkit_find(NBC__TOOLKIT_LIBDEVICE, s) != 0) {
    char searched_text[6144];
    snprintf(libdevice.error, sizeof libdevice.error,
             "libdevice (libdevice.10.bc) cannot be found; searched:\n%s"
             "Set NBCUDA_LIBDEVICE to its path, or CUDA_HOME to a CUDA toolkit.",
             nbc__toolkit_tried(s, NBC__TOOLKIT_LINES, searched_text, sizeof searched_text));
    free(s);
    return;
  }
  snprintf(libdevice.path, sizeof libdevice.path, "%s", s->path);
  free(s);
  FILE *f = fopen(libdevice.path, "rb");
  if (!f) {
    snprintf(libdevice.error, sizeof libdevice.error, "libdevice %s cannot be opened",
             libdevice.path);
    return;
  }
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = len > 0 ? malloc((size_t)len) : NULL;
  if (!data || fread(data, 1, (size_t)len, f) != (size_t)len) {
    free(data);
    fclose(f);
    snprintf(libdevice.error, sizeof libdevice.error, "libdevice %s cannot be read",
             libdevice.path);
    return;
  }
  fclose(f);
  /* Kept for the life of the process: every compile that uses math shares it. */
  libdevice.data = data;
  libdevice.size = (size_t)len;
  libdevice.status = NBC_OK;
}

nbc_status_t nbc__libdevice_get(const char **pdata, size_t *psize, const char **perror) {
  pthread_once(&libdevice_once, load_libdevice_once);
  *pdata = libdevice.data;
  *psize = libdevice.size;
  *perror = libdevice.status == NBC_OK ? "" : libdevice.error;
  return libdevice.status;
}

const char *nbc__libdevice_path(void) {
  pthread_once(&libdevice_once, load_libdevice_once);
  return libdevice.status == NBC_OK ? libdevice.path : NULL;
}

/* ------------------------------------------------------------------ options ---------- */

/* "M.m" at the start of s (numba's re.match(r"(\d+)\.(\d+)")); false when it does not
 * parse. */
static bool parse_cc(const char *s, int *pmajor, int *pminor) {
  if (!s) return false;
  char *end;
  long major = strtol(s, &end, 10);
  if (end == s || *end != '.' || major < 0 || major > 1000) return false;
  const char *m = end + 1;
  if (*m < '0' || *m > '9') return false;
  long minor = strtol(m, &end, 10);
  if (minor < 0 || minor > 1000) return false;
  *pmajor = (int)major;
  *pminor = (int)minor;
  return true;
}

void nbc__nvvm_default_cc(int *pmajor, int *pminor) {
  int major = 7, minor = 5;
  const char *vars[] = {"NBCUDA_DEFAULT_PTX_CC", "NUMBA_CUDA_DEFAULT_PTX_CC"};
  for (int i = 0; i < 2; i++)
    if (parse_cc(getenv(vars[i]), &major, &minor)) break;
  /* Like numba-cuda, the default is never below the lowest supported cc. */
  if (major * 10 + minor < supported_cc[0]) {
    major = supported_cc[0] / 10;
    minor = supported_cc[0] % 10;
  }
  *pmajor = major;
  *pminor = minor;
}

void nbc_default_ptx_cc(int *pmajor, int *pminor) {
  int major, minor;
  nbc__nvvm_default_cc(&major, &minor);
  if (pmajor) *pmajor = major;
  if (pminor) *pminor = minor;
}

nbc_status_t nbc__nvvm_arch(int cc_major, int cc_minor, char cc_arch, char *out, size_t size) {
  /* numba-cuda's get_arch_option: NUMBA_FORCE_CUDA_CC replaces whatever was asked for, taken
   * as given (no closest supported cc, no arch suffix). */
  int forced = nbc__numba_forced_cc(&cc_major, &cc_minor, out, size);
  if (forced < 0) return NBC_UNSUPPORTED_CC;
  if (forced) {
    snprintf(out, size, "compute_%d%d", cc_major, cc_minor);
    return NBC_OK;
  }
  if (cc_major == 0 && cc_minor == 0) nbc__nvvm_default_cc(&cc_major, &cc_minor);
  if (cc_major < 0 || cc_minor < 0 || cc_minor > 9) {
    snprintf(out, size, "invalid compute capability %d.%d", cc_major, cc_minor);
    return NBC_UNSUPPORTED_CC;
  }
  int want = cc_major * 10 + cc_minor;
  if (want < supported_cc[0]) {
    snprintf(out, size, "GPU compute capability %d.%d is not supported (requires >=%d.%d)",
             cc_major, cc_minor, supported_cc[0] / 10, supported_cc[0] % 10);
    return NBC_UNSUPPORTED_CC;
  }
  int best = supported_cc[0];
  for (int i = 0; i < SUPPORTED_CC_COUNT; i++)
    if (supported_cc[i] <= want) best = supported_cc[i];
  if (cc_arch && cc_arch != 'a' && cc_arch != 'f') {
    snprintf(out, size,
             "invalid architecture suffix '%c' of compute capability %d.%d "
             "(expected 'a' or 'f')",
             cc_arch, cc_major, cc_minor);
    return NBC_UNSUPPORTED_CC;
  }
  /* numba-cuda's get_arch_option: a specific target is only the cc asked for. */
  if (cc_arch && best != want) {
    snprintf(out, size,
             "Can't use arch-specific compute_%d%d%c with closest found compute "
             "capability compute_%d",
             cc_major, cc_minor, cc_arch, best);
    return NBC_UNSUPPORTED_CC;
  }
  if (cc_arch)
    snprintf(out, size, "compute_%d%c", best, cc_arch);
  else
    snprintf(out, size, "compute_%d", best);
  return NBC_OK;
}

void nbc__nvvm_supported_ccs(const int **plist, int *pcount) {
  *plist = supported_cc;
  *pcount = SUPPORTED_CC_COUNT;
}

int nbc__nvvm_options(const nbc_compile_options_t *o, const char *arch, char buf[][32],
                      const char **argv) {
  int n = 0;
  snprintf(buf[n], 32, "-opt=%d", o->opt ? 3 : 0);
  n++;
  if (o->debug) snprintf(buf[n++], 32, "-g");
  if (o->output == NBC_OUTPUT_LTOIR) snprintf(buf[n++], 32, "-gen-lto");
  snprintf(buf[n++], 32, "-arch=%s", arch);
  if (o->fastmath) {
    snprintf(buf[n++], 32, "-ftz=1");
    snprintf(buf[n++], 32, "-fma=1");
    snprintf(buf[n++], 32, "-prec-div=0");
    snprintf(buf[n++], 32, "-prec-sqrt=0");
  }
  for (int i = 0; i < n; i++)
    argv[i] = buf[i];
  return n;
}

/* ------------------------------------------------------------------ compiling -------- */

/* Records a message that has no source position (libNVVM's own errors). Only the first
 * error of a compilation is kept, as with nbc__diag_error. */
static void fail(nbc__ctx *ctx, nbc_status_t status, const char *fmt, ...) {
  if (ctx->status != NBC_OK) return;
  ctx->status = status;
  va_list ap;
  va_start(ap, fmt);
  nbc__buf_vprintf(&ctx->diag, fmt, ap);
  va_end(ap);
}

/* libNVVM's log, malloc'd, trailing NULs and whitespace trimmed; "" when empty. */
static char *program_log(nvvm_program_t prog) {
  size_t size = 0;
  char *text = NULL;
  if (nvvm.log_size(prog, &size) == NVVM_SUCCESS && size > 0) {
    text = malloc(size + 1);
    if (text && nvvm.log(prog, text) == NVVM_SUCCESS) {
      text[size] = '\0';
      size_t len = strlen(text);
      while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        text[--len] = '\0';
      return text;
    }
    free(text);
  }
  text = malloc(1);
  if (text) text[0] = '\0';
  return text;
}

static void fail_with_log(nbc__ctx *ctx, nvvm_program_t prog, const char *what, int result) {
  char *log = program_log(prog);
  fail(ctx, NBC_NVVM_ERROR, "libNVVM failed to %s (%s):\n%s", what,
       nvvm.error_string ? nvvm.error_string(result) : "error", log ? log : "");
  free(log);
}

/* One libNVVM compilation: its inputs, and the output or the error (in ctx). */
typedef struct nvvm_job {
  nbc__ctx *ctx;
  const char *ir;
  size_t size;
  const char *ld_data; /* libdevice, or NULL */
  size_t ld_size;
  int argc;
  const char **argv;
  nbc__nvvm_output *out;
  bool ok;
} nvvm_job;

static void run_job(nvvm_job *j) {
  nbc__ctx *ctx = j->ctx;
  nvvm_program_t prog = NULL;
  int r = nvvm.create(&prog);
  if (r != NVVM_SUCCESS) {
    fail(ctx, NBC_NVVM_ERROR, "libNVVM failed to create a program (%s)", nvvm.error_string(r));
    return;
  }
  r = nvvm.add_module(prog, j->ir, j->size, "nbcuda");
  if (r != NVVM_SUCCESS) {
    fail_with_log(ctx, prog, "add the module", r);
    goto done;
  }
  r = nvvm.verify(prog, j->argc, j->argv);
  if (r != NVVM_SUCCESS) {
    fail_with_log(ctx, prog, "verify", r);
    goto done;
  }
  if (j->ld_data) {
    r = nvvm.lazy_add_module(prog, j->ld_data, j->ld_size, "libdevice");
    if (r != NVVM_SUCCESS) {
      fail_with_log(ctx, prog, "add libdevice", r);
      goto done;
    }
  }
  r = nvvm.compile(prog, j->argc, j->argv);
  if (r != NVVM_SUCCESS) {
    fail_with_log(ctx, prog, "compile", r);
    goto done;
  }
  size_t rsize = 0;
  r = nvvm.result_size(prog, &rsize);
  char *code = r == NVVM_SUCCESS ? malloc(rsize + 1) : NULL;
  if (!code || nvvm.result(prog, code) != NVVM_SUCCESS) {
    free(code);
    fail(ctx, code ? NBC_NVVM_ERROR : NBC_NO_MEMORY, "libNVVM failed to return its result");
    goto done;
  }
  code[rsize] = '\0';
  if (ctx->options->output == NBC_OUTPUT_PTX) {
    rsize = strlen(code); /* libNVVM counts the trailing NUL */
  }
  j->out->code = code;
  j->out->size = rsize;
  j->out->log = program_log(prog);
  j->ok = true;
done:
  nvvm.destroy(&prog);
}

/* libNVVM's optimiser recurses along chains of dependent instructions (100,000 `x += a`
 * overflow 8 MB), and the caller may be a thread with a small stack (a Python thread): the
 * job runs on a large stack (stack.c), the compile's own when nbc_compile made one. */
static void run_job_thunk(void *job) { run_job(job); }

static void run_on_large_stack(nvvm_job *j) { nbc__stack_run(run_job_thunk, j); }

/* ------------------------------------------------------ compiling with a time limit --- */

/* libNVVM cannot be interrupted: nvvmCompileProgram runs until it returns, and a thread
 * cannot be stopped safely inside it. With a time limit the job runs in a child process
 * (fork) that sends back what it made through a pipe; past the deadline the parent kills
 * it (SIGKILL) and reaps it, so nothing is left behind: no process, no memory, no thread.
 * The message is a header of four sizes and the status, then the diagnostic, the code and
 * the log. */
typedef struct job_header {
  uint64_t ok, status, diag_size, code_size, log_size;
} job_header;

static bool write_all(int fd, const void *data, size_t size) {
  const char *p = data;
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= (size_t)n;
  }
  return true;
}

static void send_job(int fd, const nvvm_job *j) {
  const nbc__nvvm_output *o = j->out;
  job_header h = {j->ok, (uint64_t)j->ctx->status, j->ctx->diag.len, o->code ? o->size : 0,
                  o->log ? strlen(o->log) : 0};
  if (write_all(fd, &h, sizeof h) && write_all(fd, j->ctx->diag.data, h.diag_size) &&
      write_all(fd, o->code ? o->code : "", h.code_size))
    write_all(fd, o->log ? o->log : "", h.log_size);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads everything the child sends until it closes the pipe, or the deadline; *ptimed_out
 * set when the deadline came first. The bytes are malloc'd (NULL when out of memory). */
static char *receive(int fd, double deadline, size_t *psize, bool *ptimed_out) {
  size_t size = 0, cap = 4096;
  char *buf = malloc(cap);
  *ptimed_out = false;
  while (buf) {
    double left = deadline - now_s();
    if (left <= 0) {
      *ptimed_out = true;
      break;
    }
    struct pollfd pfd = {fd, POLLIN, 0};
    int r = poll(&pfd, 1, left > 1e6 ? 1000000000 : (int)(left * 1000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    if (r == 0) continue; /* the deadline is checked above */
    if (size == cap) {
      char *grown = realloc(buf, cap * 2);
      if (!grown) {
        free(buf);
        return NULL;
      }
      buf = grown;
      cap *= 2;
    }
    ssize_t n = read(fd, buf + size, cap - size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; /* the child closed the pipe: all is sent */
    size += (size_t)n;
  }
  *psize = size;
  return buf;
}

/* What the child sent back, into j (false: the message is incomplete). */
static bool unpack_job(nvvm_job *j, const char *buf, size_t size) {
  job_header h;
  if (size < sizeof h) return false;
  memcpy(&h, buf, sizeof h);
  if (h.diag_size > size || h.code_size > size || h.log_size > size ||
      sizeof h + h.diag_size + h.code_size + h.log_size != size)
    return false;
  const char *p = buf + sizeof h;
  if (h.status != NBC_OK) {
    fail(j->ctx, (nbc_status_t)h.status, "%.*s", (int)h.diag_size, p);
    return true;
  }
  p += h.diag_size;
  char *code = malloc(h.code_size + 1), *log = malloc(h.log_size + 1);
  if (!code || !log) {
    free(code);
    free(log);
    fail(j->ctx, NBC_NO_MEMORY, "out of memory receiving libNVVM's result");
    return true;
  }
  memcpy(code, p, h.code_size);
  code[h.code_size] = '\0';
  memcpy(log, p + h.code_size, h.log_size);
  log[h.log_size] = '\0';
  j->out->code = code;
  j->out->size = h.code_size;
  j->out->log = log;
  j->ok = h.ok != 0;
  return true;
}

static void run_with_time_limit(nvvm_job *j, double limit) {
  double deadline = now_s() + limit;
  int fds[2];
  if (pipe(fds) != 0) {
    fail(j->ctx, NBC_COMPILE_ERROR, "cannot start the timed compile: pipe: %s",
         strerror(errno));
    return;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    fail(j->ctx, NBC_COMPILE_ERROR, "cannot start the timed compile: fork: %s",
         strerror(errno));
    return;
  }
  if (pid == 0) { /* the child: compile, send, leave without running any exit handler */
    close(fds[0]);
    run_on_large_stack(j);
    send_job(fds[1], j);
    _exit(0);
  }
  close(fds[1]);
  size_t size = 0;
  bool timed_out = false;
  char *buf = receive(fds[0], deadline, &size, &timed_out);
  close(fds[0]);
  if (timed_out || !buf) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    fail(j->ctx, NBC_COMPILE_ERROR, "compile exceeded the time limit of %g s", limit);
  else if (!buf)
    fail(j->ctx, NBC_NO_MEMORY, "out of memory receiving libNVVM's result");
  else if (!unpack_job(j, buf, size))
    fail(j->ctx, NBC_NVVM_ERROR, "libNVVM's process ended before returning a result (%s %d)",
         WIFSIGNALED(wstatus) ? "signal" : "exit status",
         WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus));
  free(buf);
}

bool nbc__nvvm_compile(nbc__ctx *ctx, const char *ir, size_t size, bool needs_libdevice,
                       nbc__nvvm_output *pout) {
  memset(pout, 0, sizeof *pout);
  nbc_status_t st = nbc__nvvm_load();
  if (st != NBC_OK) {
    fail(ctx, st, "%s", nbc__nvvm_load_error());
    return false;
  }
  const nbc_compile_options_t *o = ctx->options;
  char arch[128];
  int cc_major = o->cc_major, cc_minor = o->cc_minor;
  /* a kernel bounding its blocks per cluster needs clusters (compute capability 9.0): with
   * no cc given it is compiled for at least that, or libNVVM drops the .maxclusterrank */
  if (!cc_major && !cc_minor && !o->device && o->nlaunch_bounds >= 3 && o->launch_bounds[2]) {
    nbc__nvvm_default_cc(&cc_major, &cc_minor);
    if (cc_major * 10 + cc_minor < 90) cc_major = 9, cc_minor = 0;
  }
  st = nbc__nvvm_arch(cc_major, cc_minor, o->cc_arch, arch, sizeof arch);
  if (st != NBC_OK) {
    fail(ctx, st, "%s", arch);
    return false;
  }
  const char *ld_data = NULL;
  size_t ld_size = 0;
  if (needs_libdevice) {
    const char *why;
    st = nbc__libdevice_get(&ld_data, &ld_size, &why);
    if (st != NBC_OK) {
      fail(ctx, st, "%s", why);
      return false;
    }
  }
  char optbuf[16][32];
  const char *argv[16];
  int argc = nbc__nvvm_options(o, arch, optbuf, argv);
  nvvm_job job = {ctx, ir, size, ld_data, ld_size, argc, argv, pout, false};
  if (o->time_limit > 0)
    run_with_time_limit(&job, o->time_limit);
  else
    run_on_large_stack(&job);
  return job.ok;
}

void nbc__nvvm_output_free(nbc__nvvm_output *out) {
  if (!out) return;
  free(out->code);
  free(out->log);
  out->code = out->log = NULL;
}
