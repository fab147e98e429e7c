/* Helpers shared by the C tests of arbor's C interface. */
#ifndef ARBOR_TEST_CHECK_H
#define ARBOR_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbor.h"

/* Fails the test run: where, what, and arbor's last error on this thread. */
void fail_at(const char *file, int line, const char *what, const char *detail);

/* The call must return ARBOR_STATUS_OK. */
#define CHECK_OK(call)                                                                      \
  do {                                                                                      \
    ArborStatus s_ = (call);                                                                \
    if (s_ != ARBOR_STATUS_OK) fail_at(__FILE__, __LINE__, #call, arbor_status_name(s_));   \
  } while (0)

/* The call must fail with `expected`, and its message must contain `needle`. */
#define CHECK_FAILS(expected, needle, call)                                                 \
  do {                                                                                      \
    ArborStatus s_ = (call);                                                                \
    if (s_ != (expected)) fail_at(__FILE__, __LINE__, #call, arbor_status_name(s_));        \
    if (!strstr(arbor_last_error(), (needle)))                                              \
      fail_at(__FILE__, __LINE__, #call, "message does not name the problem");             \
  } while (0)

#define CHECK(cond)                                                                         \
  do {                                                                                      \
    if (!(cond)) fail_at(__FILE__, __LINE__, #cond, "false");                               \
  } while (0)

/* A borrowed step from a C string. */
static inline ArborSlice S(const char *s) { return (ArborSlice){(const uint8_t *)s, strlen(s)}; }

/* A path argument pair (steps, count) from step expressions: PATH(S("a"), S("b")). */
#define PATH(...) (ArborSlice[]){__VA_ARGS__}, sizeof((ArborSlice[]){__VA_ARGS__}) / sizeof(ArborSlice)
#define ROOT NULL, 0

/* The base58 spelling of a hash, in a static buffer per call site's copy. */
void base58(const ArborHash *h, char out[ARBOR_BASE58_LEN]);

/* True if the tree holds `expected` (a C string) at the path. */
int find_is(const ArborTree *t, const ArborSlice *steps, size_t n, const char *expected);

/* A fresh empty directory under /tmp, and its removal. */
char *temp_dir(void);
void remove_dir(char *dir);

/* Sets *out to a new tree: `t` with `value` (C string) at the path; frees nothing. */
ArborTree *add_str(const ArborTree *t, const ArborSlice *steps, size_t n, const char *value);

void test_vectors(void);
void test_trace(const char *trace_file);
void test_threads(void);
void test_errors(void);
void test_features(void);

#endif
