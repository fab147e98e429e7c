/* Runs every C test of arbor's C interface: `arbor_c_tests <trace file>`, the trace being
 * written by `cargo run -p arbor-ffi --example ffi_trace` with the Rust API's results. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <unistd.h>

#include "check.h"

void fail_at(const char *file, int line, const char *what, const char *detail) {
  fprintf(stderr, "FAIL %s:%d: %s: %s\n  last error: %s\n", file, line, what, detail, arbor_last_error());
  exit(1);
}

void base58(const ArborHash *h, char out[ARBOR_BASE58_LEN]) {
  CHECK_OK(arbor_hash_to_base58(h, out, ARBOR_BASE58_LEN));
}

int find_is(const ArborTree *t, const ArborSlice *steps, size_t n, const char *expected) {
  bool found = false;
  ArborBytes v;
  CHECK_OK(arbor_tree_find(t, steps, n, &found, &v));
  int same = found && v.len == strlen(expected) && memcmp(v.ptr, expected, v.len) == 0;
  arbor_bytes_free(v);
  return same;
}

ArborTree *add_str(const ArborTree *t, const ArborSlice *steps, size_t n, const char *value) {
  ArborTree *out = NULL;
  CHECK_OK(arbor_tree_add(t, steps, n, (const uint8_t *)value, strlen(value), &out));
  return out;
}

char *temp_dir(void) {
  char *d = strdup("/tmp/arbor-c-test-XXXXXX");
  CHECK(d && mkdtemp(d));
  return d;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void remove_dir(char *dir) {
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  free(dir);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <trace file>\n", argv[0]);
    return 2;
  }
  test_vectors();
  printf("ok vectors\n");
  test_features();
  printf("ok features\n");
  test_errors();
  printf("ok errors\n");
  test_trace(argv[1]);
  printf("ok trace\n");
  test_threads();
  printf("ok threads\n");
  return 0;
}
