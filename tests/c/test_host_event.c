/* test_host_event.c — events: create with and without timing (and failing), complete events
 * kept for the next create, record on streams, query pending/done, synchronize, stream waits,
 * elapsed time (recorded, unrecorded, kept, non-timing events) and fault injection on every
 * call.
 *
 * Runs against the test driver (CI) and the real driver (GPU machine). Tests that make a
 * kernel "run" for a set time (the fixture's launch delay) or inject faults need
 * REQUIRE_TESTDRIVER(); their real-GPU counterparts, with a kernel that spins for a known
 * time, are in test_gpu.c.
 */
#include "nbcuda.h"
#include "test.h"
#include "testdriver.h"

static const char ptx[] = ".version 8.0\n.target sm_75\n.address_size 64\n"
                          ".visible .entry k()\n{\n  ret;\n}\n";

static nbc_function_t *kernel(nbc_module_t **pm) {
  nbc_function_t *f;
  ASSERT_OK(nbc_module_load_data(ptx, sizeof ptx, NBC_IMAGE_PTX, pm));
  ASSERT_OK(nbc_module_get_function(*pm, "k", &f));
  return f;
}

TEST(create_destroy) {
  REQUIRE_DRIVER();
  int fixture = tdrv_present();
  nbc_event_t *a = NULL, *b = NULL;
  ASSERT_OK(nbc_event_create(1, &a));
  ASSERT_OK(nbc_event_create(0, &b));
  if (fixture) ASSERT_EQ(tdrv()->stack_depth(), 1); /* created device 0's context */
  nbc_device_t *cur = NULL;
  ASSERT_OK(nbc_device_current(&cur));
  ASSERT_EQ(nbc_device_id(cur), 0);
  ASSERT_EQ(nbc_event_is_timing(a), 1);
  ASSERT_EQ(nbc_event_is_timing(b), 0);
  ASSERT_EQ(nbc_event_is_timing(NULL), 0);
  nbc_context_t *ctx = NULL; /* made in the current context */
  ASSERT_OK(nbc_current_context(-1, &ctx));
  ASSERT(nbc_event_context(a) == ctx && nbc_event_context(b) == ctx);
  ASSERT(nbc_event_context(NULL) == NULL);
  if (fixture) ASSERT_EQ(tdrv()->live_events(), 2);
  /* Unrecorded events are complete. */
  ASSERT_OK(nbc_event_query(a));
  ASSERT_OK(nbc_event_synchronize(b));
  nbc_event_destroy(a);
  nbc_event_destroy(b);
  nbc_event_destroy(NULL);
  if (fixture) ASSERT_EQ(tdrv()->live_events(), 2); /* complete: kept for the next create */
  ASSERT_OK(nbc_context_reset(ctx));
  if (fixture) ASSERT_EQ(tdrv()->live_events(), 0);
  ASSERT_STATUS(nbc_event_create(1, NULL), NBC_INVALID_ARGUMENT);
}

/* Complete events are kept by their context (up to 16 of each timing) and made again by the
 * next create of that timing; pending ones are destroyed; a reset destroys the kept ones. A
 * kept event that was recorded behaves as a new one: elapsed time without a new record is
 * CUDA_ERROR_INVALID_HANDLE, as the driver answers for a new event. */
TEST(complete_events_kept) {
  REQUIRE_DRIVER();
  int fixture = tdrv_present();
  nbc_context_t *ctx = NULL;
  ASSERT_OK(nbc_current_context(-1, &ctx));
  ASSERT_OK(nbc_context_reset(ctx)); /* none kept from earlier tests */
  nbc_event_t *start, *end;
  ASSERT_OK(nbc_event_create(1, &start));
  ASSERT_OK(nbc_event_create(1, &end));
  ASSERT_OK(nbc_event_record(start, NULL));
  ASSERT_OK(nbc_event_record(end, NULL));
  ASSERT_OK(nbc_event_synchronize(end));
  float ms = -1;
  ASSERT_OK(nbc_event_elapsed_time(start, end, &ms));
  ASSERT(ms >= 0);
  nbc_event_destroy(start);
  nbc_event_destroy(end);
  int creates = fixture ? tdrv()->calls("cuEventCreate") : 0;
  ASSERT_OK(nbc_event_create(1, &start));
  ASSERT_OK(nbc_event_create(1, &end));
  if (fixture) ASSERT_EQ(tdrv()->calls("cuEventCreate"), creates); /* both kept ones */
  ASSERT_OK(nbc_event_query(start));
  ASSERT_OK(nbc_event_wait(start, NULL));
  ASSERT_STATUS(nbc_event_elapsed_time(start, end, &ms), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuEventElapsedTime: CUDA_ERROR_INVALID_HANDLE (400)");
  ASSERT_OK(nbc_event_record(start, NULL));
  ASSERT_STATUS(nbc_event_elapsed_time(start, end, &ms), NBC_DRIVER_ERROR); /* end: not yet */
  ASSERT_OK(nbc_event_record(end, NULL));
  ASSERT_OK(nbc_event_synchronize(end));
  ASSERT_OK(nbc_event_elapsed_time(start, end, &ms));
  ASSERT(ms >= 0);
  /* A non-timing create does not take a timing event. */
  nbc_event_t *plain;
  nbc_event_destroy(start);
  ASSERT_OK(nbc_event_create(0, &plain));
  ASSERT_EQ(nbc_event_is_timing(plain), 0);
  if (fixture) ASSERT_EQ(tdrv()->calls("cuEventCreate"), creates + 1);
  nbc_event_destroy(plain);
  nbc_event_destroy(end);
  /* At most 16 of each timing are kept. */
  nbc_event_t *many[20];
  for (int i = 0; i < 20; i++) ASSERT_OK(nbc_event_create(1, &many[i]));
  for (int i = 0; i < 20; i++) nbc_event_destroy(many[i]);
  if (fixture) ASSERT_EQ(tdrv()->live_events(), 16 + 1);
  ASSERT_OK(nbc_context_reset(ctx));
  if (fixture) ASSERT_EQ(tdrv()->live_events(), 0);
}

TEST(create_fails) {
  REQUIRE_TESTDRIVER();
  nbc_event_t *e = (nbc_event_t *)1;
  tdrv()->fail("cuEventCreate", 1, 999);
  ASSERT_STATUS(nbc_event_create(1, &e), NBC_DRIVER_ERROR);
  ASSERT(e == NULL);
  ASSERT_STREQ(nbc_last_error(), "cuEventCreate: CUDA_ERROR_UNKNOWN (999)");
  ASSERT_EQ(tdrv()->live_events(), 0);
}

TEST(record_query_synchronize) {
  REQUIRE_TESTDRIVER();
  nbc_stream_t *s;
  nbc_module_t *m;
  nbc_event_t *e;
  ASSERT_OK(nbc_stream_create(&s));
  nbc_function_t *f = kernel(&m);
  ASSERT_OK(nbc_event_create(1, &e));
  tdrv()->set_launch_delay_ms(200);
  unsigned one[3] = {1, 1, 1};
  ASSERT_OK(nbc_launch(f, one, one, 0, s, NULL));
  ASSERT_OK(nbc_event_record(e, s));
  ASSERT_STATUS(nbc_event_query(e), NBC_NOT_READY); /* pending: not an error */
  ASSERT_OK(nbc_event_synchronize(e));
  ASSERT_OK(nbc_event_query(e));
  ASSERT_OK(nbc_event_record(e, NULL)); /* the default stream */
  ASSERT_OK(nbc_event_synchronize(e));
  /* Destroyed while its record is pending, an event is destroyed, not kept. */
  ASSERT_OK(nbc_launch(f, one, one, 0, s, NULL));
  ASSERT_OK(nbc_event_record(e, s));
  int destroys = tdrv()->calls("cuEventDestroy"), live = tdrv()->live_events();
  nbc_event_destroy(e);
  ASSERT_EQ(tdrv()->calls("cuEventDestroy"), destroys + 1);
  ASSERT_EQ(tdrv()->live_events(), live - 1);
  ASSERT_OK(nbc_stream_synchronize(s));
  tdrv()->set_launch_delay_ms(0);
  nbc_module_destroy(m);
  nbc_stream_destroy(s);
}

TEST(record_query_synchronize_failures) {
  REQUIRE_TESTDRIVER();
  nbc_event_t *e;
  ASSERT_OK(nbc_event_create(1, &e));
  tdrv()->fail("cuEventRecord", 1, 400);
  ASSERT_STATUS(nbc_event_record(e, NULL), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuEventRecord: CUDA_ERROR_INVALID_HANDLE (400)");
  ASSERT_OK(nbc_event_record(e, NULL));
  tdrv()->fail("cuEventQuery", 1, 700);
  ASSERT_STATUS(nbc_event_query(e), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuEventQuery: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
  tdrv()->fail("cuEventSynchronize", 1, 700);
  ASSERT_STATUS(nbc_event_synchronize(e), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuEventSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
  ASSERT_STATUS(nbc_event_record(NULL, NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_event_query(NULL), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_event_synchronize(NULL), NBC_INVALID_ARGUMENT);
  nbc_event_destroy(e);
}

TEST(wait) {
  REQUIRE_TESTDRIVER();
  nbc_stream_t *a, *b;
  nbc_module_t *m;
  nbc_event_t *e;
  ASSERT_OK(nbc_stream_create(&a));
  ASSERT_OK(nbc_stream_create(&b));
  nbc_function_t *f = kernel(&m);
  ASSERT_OK(nbc_event_create(0, &e));
  tdrv()->set_launch_delay_ms(150);
  unsigned one[3] = {1, 1, 1};
  ASSERT_OK(nbc_launch(f, one, one, 0, a, NULL));
  ASSERT_OK(nbc_event_record(e, a));
  ASSERT_OK(nbc_event_wait(e, b));
  ASSERT_STATUS(nbc_stream_query(b), NBC_NOT_READY); /* b waits for a's kernel */
  ASSERT_OK(nbc_stream_synchronize(b));
  ASSERT_OK(nbc_event_query(e));
  ASSERT_EQ(tdrv()->calls("cuStreamWaitEvent"), 1);
  ASSERT_OK(nbc_event_wait(e, NULL));
  tdrv()->fail("cuStreamWaitEvent", 1, 999);
  ASSERT_STATUS(nbc_event_wait(e, b), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuStreamWaitEvent: CUDA_ERROR_UNKNOWN (999)");
  ASSERT_STATUS(nbc_event_wait(NULL, b), NBC_INVALID_ARGUMENT);
  nbc_event_destroy(e);
  nbc_module_destroy(m);
  nbc_stream_destroy(a);
  nbc_stream_destroy(b);
}

TEST(elapsed_time) {
  REQUIRE_TESTDRIVER();
  nbc_stream_t *s;
  nbc_module_t *m;
  nbc_event_t *start, *end;
  ASSERT_OK(nbc_stream_create(&s));
  nbc_function_t *f = kernel(&m);
  ASSERT_OK(nbc_event_create(1, &start));
  ASSERT_OK(nbc_event_create(1, &end));
  tdrv()->set_launch_delay_ms(50);
  unsigned one[3] = {1, 1, 1};
  ASSERT_OK(nbc_event_record(start, s));
  ASSERT_OK(nbc_launch(f, one, one, 0, s, NULL));
  ASSERT_OK(nbc_event_record(end, s));
  ASSERT_OK(nbc_event_synchronize(end));
  float ms = 0;
  ASSERT_OK(nbc_event_elapsed_time(start, end, &ms));
  ASSERT(ms >= 45.0f && ms < 1000.0f);
  tdrv()->fail("cuEventElapsedTime", 1, 999);
  ASSERT_STATUS(nbc_event_elapsed_time(start, end, &ms), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuEventElapsedTime: CUDA_ERROR_UNKNOWN (999)");
  ASSERT_STATUS(nbc_event_elapsed_time(NULL, end, &ms), NBC_INVALID_ARGUMENT);
  ASSERT_STATUS(nbc_event_elapsed_time(start, end, NULL), NBC_INVALID_ARGUMENT);
  nbc_event_destroy(start);
  nbc_event_destroy(end);
  nbc_module_destroy(m);
  nbc_stream_destroy(s);
}

TEST(elapsed_time_unrecorded) {
  REQUIRE_DRIVER(); /* the real driver answers CUDA_ERROR_INVALID_HANDLE too (h200_probe) */
  nbc_event_t *start, *end;
  ASSERT_OK(nbc_event_create(1, &start));
  ASSERT_OK(nbc_event_create(1, &end));
  float ms;
  ASSERT_STATUS(nbc_event_elapsed_time(start, end, &ms), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuEventElapsedTime: CUDA_ERROR_INVALID_HANDLE (400)");
  nbc_event_destroy(start);
  nbc_event_destroy(end);
  /* A kept event that was recorded answers as a new one. */
  ASSERT_OK(nbc_event_create(1, &start));
  ASSERT_OK(nbc_event_record(start, NULL));
  ASSERT_OK(nbc_event_synchronize(start));
  nbc_event_destroy(start);
  ASSERT_OK(nbc_event_create(1, &start));
  ASSERT_OK(nbc_event_create(1, &end));
  ASSERT_OK(nbc_event_record(end, NULL));
  ASSERT_OK(nbc_event_synchronize(end));
  ASSERT_STATUS(nbc_event_elapsed_time(start, end, &ms), NBC_DRIVER_ERROR);
  ASSERT_STREQ(nbc_last_error(), "cuEventElapsedTime: CUDA_ERROR_INVALID_HANDLE (400)");
  nbc_event_destroy(start);
  nbc_event_destroy(end);
}

TEST(elapsed_time_non_timing) {
  REQUIRE_DRIVER();
  nbc_event_t *timed, *plain;
  ASSERT_OK(nbc_event_create(1, &timed));
  ASSERT_OK(nbc_event_create(0, &plain));
  ASSERT_OK(nbc_event_record(timed, NULL));
  ASSERT_OK(nbc_event_record(plain, NULL));
  ASSERT_OK(nbc_event_synchronize(plain));
  float ms;
  ASSERT_STATUS(nbc_event_elapsed_time(timed, plain, &ms), NBC_NOT_TIMING_EVENT);
  ASSERT_CONTAINS(nbc_last_error(), "the end event was created with timing disabled");
  ASSERT_STATUS(nbc_event_elapsed_time(plain, timed, &ms), NBC_NOT_TIMING_EVENT);
  ASSERT_CONTAINS(nbc_last_error(), "the start event was created with timing disabled");
  if (tdrv_present())
    ASSERT_EQ(tdrv()->calls("cuEventElapsedTime"), 0); /* refused before the driver */
  nbc_event_destroy(timed);
  nbc_event_destroy(plain);
}

TEST_LIST(X(create_destroy) X(complete_events_kept) X(create_fails)
              X(record_query_synchronize) X(record_query_synchronize_failures) X(wait)
                  X(elapsed_time) X(elapsed_time_unrecorded) X(elapsed_time_non_timing))
TEST_MAIN()
