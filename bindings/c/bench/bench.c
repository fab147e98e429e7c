/* Operations per second of find, add and (O(1): the crossing alone) hash through the C interface, on the tree that
 * crates/arbor-ffi/examples/ffi_bench.rs describes: `arbor_c_bench [values] [operations]`.
 * A benchmark, not a test: build with `make`, run on a quiet machine. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arbor.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void ok(ArborStatus s) {
  if (s != ARBOR_STATUS_OK) {
    fprintf(stderr, "%s\n", arbor_last_error());
    exit(1);
  }
}

/* The path of value i; `id` holds its 8 hex digits. */
static void path(uint64_t i, char id[9], ArborSlice p[5]) {
  snprintf(id, 9, "%08x", (uint32_t)((uint32_t)i * 2654435761u));
  p[0] = (ArborSlice){(const uint8_t *)"data", 4};
  p[1] = (ArborSlice){(const uint8_t *)"contracts", 9};
  p[2] = (ArborSlice){(const uint8_t *)"index", 5};
  p[3] = (ArborSlice){(const uint8_t *)id, 8};
  p[4] = (ArborSlice){(const uint8_t *)"balance", 7};
}

static ArborTree *add(ArborTree *t, uint64_t i) {
  char id[9];
  ArborSlice p[5];
  path(i, id, p);
  uint8_t v[8];
  for (int b = 0; b < 8; b++) v[b] = (uint8_t)(i >> (8 * b));
  ArborTree *next;
  ok(arbor_tree_add(t, p, 5, v, 8, &next));
  arbor_tree_free(t);
  return next;
}

static void report(const char *what, uint64_t ops, double secs) {
  printf("%-28s %12.0f ops/s  %8.1f ns/op\n", what, (double)ops / secs, secs * 1e9 / (double)ops);
}

int main(int argc, char **argv) {
  uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
  uint64_t m = argc > 2 ? strtoull(argv[2], NULL, 10) : 200000;
  ArborTree *base;
  ok(arbor_tree_empty(&base));
  for (uint64_t i = 0; i < n; i++) base = add(base, i);
  ArborHash h;
  char text[ARBOR_BASE58_LEN];
  ok(arbor_tree_hash(base, &h));
  ok(arbor_hash_to_base58(&h, text, sizeof text));
  printf("tree of %llu values, hash %s\n", (unsigned long long)n, text);
  double start = now();
  for (uint64_t j = 0; j < m; j++) ok(arbor_tree_hash(base, &h)); /* O(1): the crossing alone */
  report("C hash (O(1))", m, now() - start);
  for (int pass = 0; pass < 2; pass++) { /* the first pass warms the tree up, untimed */
    double start = now();
    for (uint64_t j = 0; j < m; j++) {
      char id[9];
      ArborSlice p[5];
      path((j * 7919) % n, id, p);
      bool found;
      ArborBytes v;
      ok(arbor_tree_find(base, p, 5, &found, &v));
      if (!found) return 1;
      arbor_bytes_free(v);
    }
    if (pass) report("C find", m, now() - start);
  }
  ArborTree *t;
  ok(arbor_tree_clone(base, &t));
  start = now();
  for (uint64_t j = 0; j < m; j++) t = add(t, n + j);
  report("C add", m, now() - start);
  ok(arbor_tree_hash(t, &h));
  ok(arbor_hash_to_base58(&h, text, sizeof text));
  printf("after adds: %s\n", text);
  arbor_tree_free(t);
  arbor_tree_free(base);
  return 0;
}
