/* Replays a trace written by the Rust API (crates/arbor-ffi/examples/ffi_trace.rs) through
 * the C interface and checks every result against the one recorded. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#define MAX_STEPS 8

typedef struct {
  ArborSlice steps[MAX_STEPS];
  uint8_t *bytes[MAX_STEPS];
  size_t n;
} Path;

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Decodes `len` hex characters into a new buffer of len/2 bytes. */
static uint8_t *unhex(const char *s, size_t len) {
  CHECK(len % 2 == 0);
  uint8_t *out = malloc(len / 2 + 1);
  CHECK(out);
  for (size_t i = 0; i < len / 2; i++) {
    int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
    CHECK(hi >= 0 && lo >= 0);
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return out;
}

static Path parse_path(const char *tok) {
  Path p = {.n = 0};
  if (strcmp(tok, ".") == 0) return p;
  while (*tok) {
    const char *end = strchr(tok, '/');
    size_t len = end ? (size_t)(end - tok) : strlen(tok);
    CHECK(p.n < MAX_STEPS);
    p.bytes[p.n] = unhex(tok, len);
    p.steps[p.n] = (ArborSlice){p.bytes[p.n], len / 2};
    p.n++;
    tok += len + (end ? 1 : 0);
  }
  return p;
}

static void free_path(Path *p) {
  for (size_t i = 0; i < p->n; i++) free(p->bytes[i]);
}

static ArborHash parse_hash(const char *tok) {
  ArborHash h;
  CHECK_OK(arbor_hash_parse(tok, &h));
  return h;
}

static void expect_hash(const ArborTree *t, const char *tok, size_t line) {
  ArborHash got, want = parse_hash(tok);
  CHECK_OK(arbor_tree_hash(t, &got));
  if (memcmp(got.bytes, want.bytes, 32) != 0) {
    fprintf(stderr, "trace line %zu: tree hash differs from the Rust API's\n", line);
    exit(1);
  }
}

static void mismatch(size_t line, const char *op) {
  fprintf(stderr, "trace line %zu: %s differs from the Rust API's result\n", line, op);
  exit(1);
}

typedef struct {
  size_t count;
} FoldCount;

static int32_t count_visit(void *ctx, const ArborSlice *key, size_t key_len, const ArborTree *tree) {
  (void)key;
  (void)key_len;
  (void)tree;
  ((FoldCount *)ctx)->count++;
  return 0;
}

static ArborDepth depth_of(const char *name) {
  const char *names[] = {"any", "eq", "le", "lt", "ge", "gt"};
  for (int i = 0; i < 6; i++)
    if (strcmp(name, names[i]) == 0) return (ArborDepth)i;
  CHECK(!"unknown depth");
  return ARBOR_DEPTH_ANY;
}

void test_trace(const char *trace_file) {
  FILE *f = fopen(trace_file, "r");
  CHECK(f);
  char *dir = temp_dir();
  ArborStore *s;
  CHECK_OK(arbor_store_open(dir, NULL, &s));
  ArborTree *t;
  CHECK_OK(arbor_store_empty(s, &t));
  ArborHash last;
  size_t n_commits = 0, line_no = 0, ops = 0;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    line_no++;
    char *save = NULL;
    char *op = strtok_r(line, " \n", &save);
    if (!op) continue;
    char *a = strtok_r(NULL, " \n", &save), *b = strtok_r(NULL, " \n", &save);
    char *c = strtok_r(NULL, " \n", &save), *d = strtok_r(NULL, " \n", &save);
    ops++;
    if (strcmp(op, "commit") == 0) {
      ArborHash h, want = parse_hash(a);
      CHECK_OK(arbor_commit(s, t, &last, n_commits ? 1 : 0, (int64_t)n_commits, (const uint8_t *)"Tezos", 5,
                            (const uint8_t *)"trace", 5, &h));
      if (memcmp(h.bytes, want.bytes, 32) != 0) mismatch(line_no, op);
      last = h;
      n_commits++;
      continue;
    }
    if (strcmp(op, "checkout") == 0) {
      ArborHash h = parse_hash(a);
      arbor_tree_free(t);
      CHECK_OK(arbor_checkout(s, &h, &t));
      continue;
    }
    if (strcmp(op, "hash") == 0) {
      expect_hash(t, a, line_no);
      continue;
    }
    Path p = parse_path(a);
    if (strcmp(op, "add") == 0) {
      CHECK(b[0] == 'x');
      size_t len = strlen(b + 1);
      uint8_t *v = unhex(b + 1, len);
      ArborTree *next;
      CHECK_OK(arbor_tree_add(t, p.steps, p.n, v, len / 2, &next));
      free(v);
      arbor_tree_free(t);
      t = next;
      expect_hash(t, c, line_no);
    } else if (strcmp(op, "remove") == 0) {
      ArborTree *next;
      CHECK_OK(arbor_tree_remove(t, p.steps, p.n, &next));
      arbor_tree_free(t);
      t = next;
      expect_hash(t, b, line_no);
    } else if (strcmp(op, "find") == 0) {
      bool found;
      ArborBytes v;
      CHECK_OK(arbor_tree_find(t, p.steps, p.n, &found, &v));
      if (b[0] == '-') {
        if (found || v.ptr) mismatch(line_no, op);
      } else {
        size_t len = strlen(b + 1);
        uint8_t *want = unhex(b + 1, len);
        if (!found || v.len != len / 2 || (len && memcmp(v.ptr, want, v.len) != 0)) mismatch(line_no, op);
        free(want);
      }
      arbor_bytes_free(v);
    } else if (strcmp(op, "mem") == 0 || strcmp(op, "mem_tree") == 0) {
      bool r;
      CHECK_OK(op[3] ? arbor_tree_mem_tree(t, p.steps, p.n, &r) : arbor_tree_mem(t, p.steps, p.n, &r));
      if (r != (b[0] == '1')) mismatch(line_no, op);
    } else if (strcmp(op, "length") == 0) {
      uint64_t n;
      CHECK_OK(arbor_tree_length(t, p.steps, p.n, &n));
      if (n != strtoull(b, NULL, 10)) mismatch(line_no, op);
    } else if (strcmp(op, "list") == 0) {
      ArborList *l;
      CHECK_OK(arbor_tree_list(t, p.steps, p.n, strtoull(b, NULL, 10), strtoll(c, NULL, 10), &l));
      size_t i = 0;
      if (d[0] != '-') {
        for (char *save2 = NULL, *tok = strtok_r(d, ",", &save2); tok; tok = strtok_r(NULL, ",", &save2), i++) {
          ArborSlice step;
          const ArborTree *child;
          CHECK_OK(arbor_list_get(l, i, &step, &child));
          uint8_t *want = unhex(tok, strlen(tok));
          if (step.len != strlen(tok) / 2 || memcmp(step.ptr, want, step.len) != 0) mismatch(line_no, op);
          free(want);
          /* The child is the subtree at path/step. */
          ArborSlice sub[MAX_STEPS + 1];
          memcpy(sub, p.steps, p.n * sizeof(ArborSlice));
          sub[p.n] = step;
          ArborTree *direct;
          ArborHash h1, h2;
          CHECK_OK(arbor_tree_find_tree(t, sub, p.n + 1, &direct));
          CHECK(direct != NULL);
          CHECK_OK(arbor_tree_hash(direct, &h1));
          CHECK_OK(arbor_tree_hash(child, &h2));
          if (memcmp(h1.bytes, h2.bytes, 32) != 0) mismatch(line_no, "list entry tree");
          arbor_tree_free(direct);
        }
      }
      if (arbor_list_len(l) != i) mismatch(line_no, op);
      arbor_list_free(l);
    } else if (strcmp(op, "fold") == 0) {
      FoldCount fc = {0};
      CHECK_OK(arbor_tree_fold(t, p.steps, p.n, depth_of(b), strtoull(c, NULL, 10), ARBOR_ORDER_SORTED,
                               count_visit, &fc));
      if (fc.count != strtoull(d, NULL, 10)) mismatch(line_no, op);
    } else {
      fprintf(stderr, "trace line %zu: unknown operation %s\n", line_no, op);
      exit(1);
    }
    free_path(&p);
  }
  free(line);
  fclose(f);
  CHECK(ops >= 300);
  printf("  trace: %zu operations, %zu commits, every result as the Rust API's\n", ops, n_commits);
  arbor_tree_free(t);
  CHECK_OK(arbor_store_close(s));
  remove_dir(dir);
}
