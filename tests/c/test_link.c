/* test_link.c — link files in the kernel layer: the kind numba-cuda's linker gives a file by
 * its extension (nbc_image_kind_of_extension), CUDA C++ images compiled by NVRTC at the link
 * (named in NVRTC's messages, their #include files found through the load options' search
 * paths), and a kernel (nbc_kernel_t) that links a CUDA C++ image at each load.
 *
 * The links target an explicit architecture (sm_75), so they need NVRTC and nvJitLink but no
 * device; the kernel's load runs on the software test driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/kernel.h"
#include "test.h"
#include "testdriver.h"

static void require_toolkit(void) {
  const char *path;
  int major, minor;
  if (nbc__nvrtc_find(&path, &major, &minor) != NBC_OK) SKIP("no NVRTC");
  if (nbc__jitlink_find(&path, &major, &minor) != NBC_OK) SKIP("no nvJitLink");
}

/* A kernel in PTX that calls plus_one, which the CUDA C++ image defines. */
static const char caller_ptx[] =
    ".version 7.8\n.target sm_75\n.address_size 64\n"
    ".extern .func (.param .b32 r) plus_one(.param .b32 x);\n"
    ".visible .entry k(.param .u64 out)\n{\n"
    "  .reg .b32 %r<3>;\n  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [out];\n  mov.u32 %r1, 41;\n"
    "  { .param .b32 a; st.param.b32 [a], %r1; .param .b32 b;\n"
    "    call.uni (b), plus_one, (a); ld.param.b32 %r2, [b]; }\n"
    "  st.global.u32 [%rd1], %r2;\n  ret;\n}\n";

static const char plus_one_cu[] = "extern \"C\" __device__ int plus_one(int x) { return x + 1; }\n";

TEST(kinds_by_extension) {
  static const struct {
    const char *ext;
    nbc_image_kind_t kind;
  } known[] = {{"ptx", NBC_IMAGE_PTX},       {"cubin", NBC_IMAGE_CUBIN},
               {"fatbin", NBC_IMAGE_FATBIN}, {"ltoir", NBC_IMAGE_LTOIR},
               {"o", NBC_IMAGE_OBJECT},      {"a", NBC_IMAGE_LIBRARY},
               {"cu", NBC_IMAGE_CUDA}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    nbc_image_kind_t kind = NBC_IMAGE_AUTO;
    ASSERT_OK(nbc_image_kind_of_extension(known[i].ext, &kind));
    ASSERT_EQ(kind, known[i].kind);
  }
  nbc_image_kind_t kind = NBC_IMAGE_PTX;
  ASSERT_STATUS(nbc_image_kind_of_extension("txt", &kind), NBC_LINK_ERROR);
  ASSERT_STREQ(nbc_last_error(), "Don't know how to link file with extension .txt");
  ASSERT_EQ(kind, NBC_IMAGE_AUTO);
  ASSERT_STATUS(nbc_image_kind_of_extension("PTX", &kind), NBC_LINK_ERROR); /* as numba's */
  ASSERT_STATUS(nbc_image_kind_of_extension(NULL, &kind), NBC_LINK_ERROR);
  ASSERT_STREQ(nbc_last_error(), "Don't know how to link file with extension (none)");
}

TEST(cuda_images_are_compiled_then_linked) {
  require_toolkit();
  nbc_image_t images[2] = {{caller_ptx, strlen(caller_ptx), NBC_IMAGE_PTX, NULL},
                           {plus_one_cu, strlen(plus_one_cu), NBC_IMAGE_CUDA, "plus_one.cu"}};
  void *cubin = NULL;
  size_t size = 0;
  ASSERT_OK(nbc_link_cubin(images, 2, 7, 5, NULL, &cubin, &size));
  ASSERT(cubin != NULL && memcmp(cubin, "\x7f" "ELF", 4) == 0);
  ASSERT(memmem(cubin, size, "plus_one", 8) != NULL);
  nbc_cubin_free(cubin);
  /* without the CUDA C++ image the call is undefined: the image was what defined it */
  ASSERT_STATUS(nbc_link_cubin(images, 1, 7, 5, NULL, &cubin, &size), NBC_LINK_ERROR);
  /* NVRTC's failure names the image */
  static const char bad[] = "__device__ int f( { }\n";
  images[1] = (nbc_image_t){bad, strlen(bad), NBC_IMAGE_CUDA, "bad.cu"};
  ASSERT_STATUS(nbc_link_cubin(images, 2, 7, 5, NULL, &cubin, &size), NBC_NVRTC_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "bad.cu");
  ASSERT(cubin == NULL);
}

TEST(include_files_come_from_the_search_paths) {
  require_toolkit();
  char dir[] = "/tmp/nbc_test_link.XXXXXX", header[64];
  ASSERT(mkdtemp(dir) != NULL);
  snprintf(header, sizeof header, "%s/nbc_test_one.h", dir);
  FILE *f = fopen(header, "w");
  ASSERT(f != NULL);
  fputs("#define NBC_TEST_ONE 1\n", f);
  fclose(f);
  static const char uses[] = "#include \"nbc_test_one.h\"\n"
                             "extern \"C\" __device__ int plus_one(int x) "
                             "{ return x + NBC_TEST_ONE; }\n";
  nbc_image_t images[2] = {{caller_ptx, strlen(caller_ptx), NBC_IMAGE_PTX, NULL},
                           {uses, strlen(uses), NBC_IMAGE_CUDA, "uses.cu"}};
  void *cubin = NULL;
  size_t size = 0;
  ASSERT_STATUS(nbc_link_cubin(images, 2, 7, 5, NULL, &cubin, &size), NBC_NVRTC_ERROR);
  ASSERT_CONTAINS(nbc_last_error(), "nbc_test_one.h");
  nbc_module_load_options_t o = {.nvrtc_search_paths = dir};
  ASSERT_OK(nbc_link_cubin(images, 2, 7, 5, &o, &cubin, &size));
  nbc_cubin_free(cubin);
  ASSERT_EQ(unlink(header), 0);
  ASSERT_EQ(rmdir(dir), 0);
}

static const char kernel_source[] = "from numba import cuda\n"
                                    "\n"
                                    "def fill(r):\n"
                                    "    i = cuda.grid(1)\n"
                                    "    if i < r.size:\n"
                                    "        r[i] = 1\n";

TEST(a_kernel_links_its_cuda_images_at_each_load) {
  require_toolkit();
  if (!tdrv_available()) SKIP("counts the software test driver's calls");
  char *code = strdup(plus_one_cu); /* the kernel keeps a copy: this one is freed first */
  char *name = strdup("plus_one.cu");
  nbc_image_t link = {code, strlen(code), NBC_IMAGE_CUDA, name};
  nbc_kernel_options_t o = {.links = &link, .nlinks = 1};
  nbc_source_t src = {.text = kernel_source, .filename = "test_link.py"};
  nbc_kernel_t *k = NULL;
  ASSERT_OK(nbc_kernel_create(&src, "fill", "void(int32[::1])", NULL, NULL, &o, &k));
  memset(code, 0, strlen(code));
  free(code);
  free(name);
  int64_t n = 32;
  nbc_devptr_t r;
  ASSERT_OK(nbc_mem_alloc(n * 4, &r));
  nbc_arg_t arg = nbc_arg_array(r, 'i', 4, 1, &n, NULL);
  const unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  ASSERT_OK(nbc_kernel_launch(k, grid, block, 0, NULL, &arg, 1));
  ASSERT_OK(nbc_kernel_launch(k, grid, block, 0, NULL, &arg, 1));
  ASSERT_EQ(nbc_kernel_load_count(k), 1);
  nbc_kernel_destroy(k);
  ASSERT_OK(nbc_mem_free(r));
}

TEST_LIST(X(kinds_by_extension) X(cuda_images_are_compiled_then_linked)
              X(include_files_come_from_the_search_paths)
                  X(a_kernel_links_its_cuda_images_at_each_load))
TEST_MAIN()
