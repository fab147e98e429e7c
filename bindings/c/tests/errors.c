/* Every error path: each call fails with its own status and a message naming the problem,
 * and leaves its outputs untouched. */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <unistd.h>

#include "check.h"

static ArborHash commit_one(ArborStore *s, const char *key, const char *value, const ArborHash *parent) {
  ArborTree *e, *t;
  if (parent) {
    CHECK_OK(arbor_checkout(s, parent, &e));
  } else {
    CHECK_OK(arbor_store_empty(s, &e));
  }
  t = add_str(e, PATH(S(key)), value);
  ArborHash h;
  CHECK_OK(arbor_commit(s, t, parent, parent ? 1 : 0, 1, NULL, 0, NULL, 0, &h));
  arbor_tree_free(e);
  arbor_tree_free(t);
  return h;
}

/* Overwrites `len` bytes of `file` at `offset` with `bytes`. */
static void overwrite(const char *file, long offset, const void *bytes, size_t len) {
  int fd = open(file, O_WRONLY);
  CHECK(fd >= 0);
  CHECK(pwrite(fd, bytes, len, offset) == (ssize_t)len);
  close(fd);
}

static void unknown_commits(ArborStore *s) {
  ArborHash zero = {{0}};
  ArborTree *untouched = (ArborTree *)0x1;
  CHECK_FAILS(ARBOR_STATUS_UNKNOWN_COMMIT, "unknown commit Co", arbor_checkout(s, &zero, &untouched));
  CHECK(untouched == (ArborTree *)0x1);
  ArborCommitInfo info;
  CHECK_FAILS(ARBOR_STATUS_UNKNOWN_COMMIT, "arbor_commit_info: unknown commit", arbor_commit_info(s, &zero, &info));
  CHECK_FAILS(ARBOR_STATUS_UNKNOWN_COMMIT, "unknown commit", arbor_gc(s, &zero, ARBOR_GC_MODE_DROP, NULL));
  CHECK_FAILS(ARBOR_STATUS_UNKNOWN_COMMIT, "unknown commit", arbor_set_head(s, "main", &zero));
  ArborBytes proof;
  CHECK_FAILS(ARBOR_STATUS_UNKNOWN_COMMIT, "unknown commit", arbor_store_prove(s, &zero, NULL, 0, &proof));
  bool exists = true;
  CHECK_OK(arbor_store_contains(s, &zero, &exists));
  CHECK(!exists);
}

static void bad_paths_and_arguments(ArborStore *s) {
  ArborTree *t;
  CHECK_OK(arbor_store_empty(s, &t));
  ArborTree *out = (ArborTree *)0x1;
  bool found = true;
  ArborBytes v = {(uint8_t *)0x1, 7};
  CHECK_FAILS(ARBOR_STATUS_BAD_PATH, "arbor_tree_add: path step 1 is empty",
              arbor_tree_add(t, PATH(S("a"), S(""), S("b")), (const uint8_t *)"v", 1, &out));
  CHECK_FAILS(ARBOR_STATUS_BAD_PATH, "path step 0 is empty", arbor_tree_find(t, PATH(S("")), &found, &v));
  CHECK_FAILS(ARBOR_STATUS_BAD_PATH, "path step 0 is empty", arbor_tree_remove(t, PATH(S("")), &out));
  CHECK(out == (ArborTree *)0x1 && found && v.len == 7);
  /* NULL where something is required. */
  CHECK_FAILS(ARBOR_STATUS_NULL_POINTER, "argument `tree` is NULL", arbor_tree_find(NULL, ROOT, &found, &v));
  CHECK_FAILS(ARBOR_STATUS_NULL_POINTER, "argument `found` is NULL", arbor_tree_find(t, ROOT, NULL, &v));
  CHECK_FAILS(ARBOR_STATUS_NULL_POINTER, "argument `steps` is NULL", arbor_tree_find(t, NULL, 2, &found, &v));
  ArborSlice null_step = {NULL, 3};
  CHECK_FAILS(ARBOR_STATUS_NULL_POINTER, "path step 1 has NULL bytes",
              arbor_tree_find(t, PATH(S("a"), null_step), &found, &v));
  CHECK_FAILS(ARBOR_STATUS_NULL_POINTER, "argument `value` is NULL", arbor_tree_add(t, PATH(S("a")), NULL, 4, &out));
  CHECK_FAILS(ARBOR_STATUS_NULL_POINTER, "`callback` is NULL",
              arbor_tree_fold(t, ROOT, ARBOR_DEPTH_ANY, 0, ARBOR_ORDER_SORTED, NULL, NULL));
  CHECK_FAILS(ARBOR_STATUS_NULL_POINTER, "argument `dir` is NULL", arbor_store_open(NULL, NULL, (ArborStore **)&out));
  CHECK(out == (ArborTree *)0x1);
  /* Text that is not UTF-8, or not a hash. */
  ArborHash h;
  CHECK_FAILS(ARBOR_STATUS_INVALID_UTF8, "argument `name` is not UTF-8", arbor_set_head(s, "ma\xffin", &h));
  CHECK_FAILS(ARBOR_STATUS_INVALID_UTF8, "not UTF-8", arbor_hash_parse("\xc3(", &h));
  CHECK_FAILS(ARBOR_STATUS_INVALID_ARGUMENT, "not a hash", arbor_hash_parse("Co123", &h));
  char small[10];
  CHECK_FAILS(ARBOR_STATUS_INVALID_ARGUMENT, "too small", arbor_hash_to_base58(&h, small, sizeof small));
  /* Out of range list index; a value is not a commit; an empty directory name. */
  ArborList *l;
  CHECK_OK(arbor_tree_list(t, ROOT, 0, -1, &l));
  ArborSlice step;
  const ArborTree *child;
  CHECK_FAILS(ARBOR_STATUS_INVALID_ARGUMENT, "index 0 out of a list of 0", arbor_list_get(l, 0, &step, &child));
  arbor_list_free(l);
  ArborTree *value;
  CHECK_OK(arbor_tree_of_value(t, (const uint8_t *)"x", 1, &value));
  CHECK_FAILS(ARBOR_STATUS_NOT_A_DIRECTORY, "must be a directory",
              arbor_commit(s, value, NULL, 0, 0, NULL, 0, NULL, 0, &h));
  arbor_tree_free(value);
  CHECK_FAILS(ARBOR_STATUS_INVALID_ARGUMENT, "argument `dir` is empty", arbor_store_open("", NULL, (ArborStore **)&out));
  CHECK_FAILS(ARBOR_STATUS_IO, "I/O error", arbor_store_open("/proc/version/x", NULL, (ArborStore **)&out));
  /* A tree of one store committed in another. */
  char *other_dir = temp_dir();
  ArborStore *other;
  CHECK_OK(arbor_store_open(other_dir, NULL, &other));
  ArborHash oh = commit_one(other, "k", "v", NULL);
  ArborTree *foreign;
  CHECK_OK(arbor_checkout(other, &oh, &foreign));
  CHECK_FAILS(ARBOR_STATUS_FOREIGN_TREE, "another store", arbor_commit(s, foreign, NULL, 0, 0, NULL, 0, NULL, 0, &h));
  arbor_tree_free(foreign);
  CHECK_OK(arbor_store_close(other));
  remove_dir(other_dir);
  arbor_tree_free(t);
}

static void locked_and_read_only(const char *dir, ArborStore *s, const ArborHash *c) {
  ArborStore *second = NULL;
  CHECK_FAILS(ARBOR_STATUS_LOCKED, "is locked by another writer", arbor_store_open(dir, NULL, &second));
  CHECK(second == NULL);
  ArborConfig cfg;
  CHECK_OK(arbor_config_default(&cfg));
  cfg.read_only = true;
  ArborStore *ro;
  CHECK_OK(arbor_store_open(dir, &cfg, &ro));
  ArborTree *t;
  CHECK_OK(arbor_checkout(ro, c, &t));
  ArborHash h;
  CHECK_FAILS(ARBOR_STATUS_READ_ONLY, "read-only", arbor_commit(ro, t, NULL, 0, 0, NULL, 0, NULL, 0, &h));
  CHECK_FAILS(ARBOR_STATUS_READ_ONLY, "read-only", arbor_set_head(ro, "main", c));
  arbor_tree_free(t);
  CHECK_OK(arbor_store_close(ro));
  /* A durability that is not one of ArborDurability's values is refused, not trusted. */
  CHECK_OK(arbor_config_default(&cfg));
  cfg.durability = 7;
  ArborStore *bad = NULL;
  CHECK_FAILS(ARBOR_STATUS_INVALID_ARGUMENT, "unknown durability 7", arbor_store_open(dir, &cfg, &bad));
  CHECK(bad == NULL);
  (void)s;
}

static void bad_snapshots_and_proofs(const char *dir, ArborStore *s, const ArborHash *c) {
  char file[512];
  snprintf(file, sizeof file, "%s/not-a-snapshot", dir);
  FILE *f = fopen(file, "w");
  CHECK(f);
  fputs("this is not a snapshot file at all, nowhere near one", f);
  fclose(f);
  ArborHash h;
  CHECK_FAILS(ARBOR_STATUS_SNAPSHOT, "snapshot", arbor_snapshot_import(s, file, &h));
  snprintf(file, sizeof file, "%s/missing.snap", dir);
  CHECK_FAILS(ARBOR_STATUS_IO, "missing.snap", arbor_snapshot_import(s, file, &h));

  ArborPath paths[] = {{PATH(S("k"))}};
  ArborBytes proof;
  CHECK_OK(arbor_store_prove(s, c, paths, 1, &proof));
  ArborCommitInfo info;
  CHECK_OK(arbor_commit_info(s, c, &info));
  ArborVerified *v = NULL;
  CHECK_OK(arbor_proof_verify(proof.ptr, proof.len, &info.tree, paths, 1, &v));
  arbor_verified_free(v);
  /* Another root, other paths, a flipped byte, a cut: all refused. */
  ArborHash wrong = info.tree;
  wrong.bytes[0] ^= 1;
  v = NULL;
  CHECK_FAILS(ARBOR_STATUS_PROOF, "arbor_proof_verify", arbor_proof_verify(proof.ptr, proof.len, &wrong, paths, 1, &v));
  ArborPath others[] = {{PATH(S("other"))}};
  CHECK_FAILS(ARBOR_STATUS_PROOF, "arbor_proof_verify",
              arbor_proof_verify(proof.ptr, proof.len, &info.tree, others, 1, &v));
  for (size_t i = 0; i < proof.len; i++) {
    proof.ptr[i] ^= 0x40;
    ArborStatus st = arbor_proof_verify(proof.ptr, proof.len, &info.tree, paths, 1, &v);
    proof.ptr[i] ^= 0x40;
    CHECK(st == ARBOR_STATUS_PROOF);
  }
  CHECK_FAILS(ARBOR_STATUS_PROOF, "arbor_proof_verify",
              arbor_proof_verify(proof.ptr, proof.len - 1, &info.tree, paths, 1, &v));
  CHECK(v == NULL);
  arbor_bytes_free(proof);
  arbor_commit_info_free(&info);
}

static void corrupted_store(void) {
  char *dir = temp_dir();
  ArborStore *s;
  CHECK_OK(arbor_store_open(dir, NULL, &s));
  ArborHash c = commit_one(s, "k", "value", NULL);
  CHECK_OK(arbor_store_close(s));
  char chunk[512];
  snprintf(chunk, sizeof chunk, "%s/pack/00000000000000000000.chunk", dir);
  /* A chunk that does not start with arbor's magic bytes. */
  overwrite(chunk, 0, "NOTARBOR", 8);
  s = NULL;
  CHECK_FAILS(ARBOR_STATUS_CORRUPT, "corrupt store", arbor_store_open(dir, NULL, &s));
  CHECK(s == NULL);
  ArborConfig cfg;
  CHECK_OK(arbor_config_default(&cfg));
  cfg.read_only = true;
  CHECK_FAILS(ARBOR_STATUS_CORRUPT, "00000000000000000000.chunk", arbor_store_open(dir, &cfg, &s));
  (void)c;
  remove_dir(dir);
}

void test_errors(void) {
  char *dir = temp_dir();
  ArborStore *s;
  CHECK_OK(arbor_store_open(dir, NULL, &s));
  ArborHash c = commit_one(s, "k", "v", NULL);
  unknown_commits(s);
  bad_paths_and_arguments(s);
  locked_and_read_only(dir, s, &c);
  bad_snapshots_and_proofs(dir, s, &c);
  CHECK_OK(arbor_store_close(s));
  /* Closed: the directory can be opened for writing again. */
  CHECK_OK(arbor_store_open(dir, NULL, &s));
  CHECK_OK(arbor_store_close(s));
  remove_dir(dir);
  corrupted_store();
  /* NULL handles are accepted by every free function. */
  arbor_tree_free(NULL);
  arbor_list_free(NULL);
  arbor_heads_free(NULL);
  arbor_verified_free(NULL);
  arbor_commit_info_free(NULL);
  arbor_bytes_free((ArborBytes){NULL, 0});
  CHECK_OK(arbor_store_close(NULL));
}
