/* The rest of the interface: heads, list and fold, subtrees, gc, snapshots, proofs. */
#include "check.h"

static ArborHash commit(ArborStore *s, const ArborTree *t, const ArborHash *parent, int64_t date) {
  ArborHash h;
  CHECK_OK(arbor_commit(s, t, parent, parent ? 1 : 0, date, (const uint8_t *)"Tezos", 5, (const uint8_t *)"m", 1,
                        &h));
  return h;
}

static int same(const ArborHash *a, const ArborHash *b) { return memcmp(a->bytes, b->bytes, 32) == 0; }

typedef struct {
  size_t visited, values, stop_after;
  char keys[64][32];
} Visit;

/* Records each visited key as "a/b" and counts the values. */
static int32_t record(void *ctx, const ArborSlice *key, size_t key_len, const ArborTree *tree) {
  Visit *v = ctx;
  char *k = v->keys[v->visited % 64];
  k[0] = 0;
  for (size_t i = 0; i < key_len; i++) {
    if (i) strcat(k, "/");
    strncat(k, (const char *)key[i].ptr, key[i].len);
  }
  ArborKind kind;
  CHECK_OK(arbor_tree_kind(tree, &kind));
  if (kind == ARBOR_KIND_VALUE) v->values++;
  v->visited++;
  return v->stop_after && v->visited >= v->stop_after;
}

static void walks(const ArborTree *t) {
  /* t: a/x=1 a/y=2 b=3 c/d/e=4 */
  Visit v = {0};
  CHECK_OK(arbor_tree_fold(t, ROOT, ARBOR_DEPTH_ANY, 0, ARBOR_ORDER_SORTED, record, &v));
  const char *pre_order[] = {"", "a", "a/x", "a/y", "b", "c", "c/d", "c/d/e"};
  CHECK(v.visited == 8 && v.values == 4);
  for (int i = 0; i < 8; i++) CHECK(strcmp(v.keys[i], pre_order[i]) == 0);
  Visit eq1 = {0};
  CHECK_OK(arbor_tree_fold(t, ROOT, ARBOR_DEPTH_EQ, 1, ARBOR_ORDER_STORAGE, record, &eq1));
  CHECK(eq1.visited == 3 && eq1.values == 1);
  Visit below_c = {0};
  CHECK_OK(arbor_tree_fold(t, PATH(S("c")), ARBOR_DEPTH_GT, 0, ARBOR_ORDER_SORTED, record, &below_c));
  CHECK(below_c.visited == 2 && strcmp(below_c.keys[1], "d/e") == 0);
  Visit stop = {.stop_after = 3};
  CHECK_OK(arbor_tree_fold(t, ROOT, ARBOR_DEPTH_ANY, 0, ARBOR_ORDER_SORTED, record, &stop));
  CHECK(stop.visited == 3);

  ArborList *l;
  CHECK_OK(arbor_tree_list(t, ROOT, 1, 5, &l));
  CHECK(arbor_list_len(l) == 2);
  ArborSlice step;
  const ArborTree *child;
  CHECK_OK(arbor_list_get(l, 0, &step, &child));
  CHECK(step.len == 1 && step.ptr[0] == 'b');
  bool found;
  ArborBytes value;
  CHECK_OK(arbor_tree_to_value(child, &found, &value));
  CHECK(found && value.len == 1 && value.ptr[0] == '3');
  arbor_bytes_free(value);
  ArborTree *kept;
  CHECK_OK(arbor_tree_clone(child, &kept));
  arbor_list_free(l);
  CHECK(find_is(kept, ROOT, "3")); /* the clone outlives the list */
  arbor_tree_free(kept);
  CHECK_OK(arbor_tree_list(t, PATH(S("a")), 0, 1, &l));
  CHECK(arbor_list_len(l) == 1);
  arbor_list_free(l);
  uint64_t n;
  CHECK_OK(arbor_tree_length(t, ROOT, &n));
  CHECK(n == 3);
  CHECK_OK(arbor_tree_length(t, PATH(S("b")), &n));
  CHECK(n == 0);
}

static void subtrees(const ArborTree *t) {
  ArborTree *a, *moved, *removed, *none;
  CHECK_OK(arbor_tree_find_tree(t, PATH(S("a")), &a));
  CHECK(a != NULL);
  CHECK_OK(arbor_tree_find_tree(t, PATH(S("zz")), &none));
  CHECK(none == NULL);
  CHECK_OK(arbor_tree_add_tree(t, PATH(S("moved"), S("here")), a, &moved));
  CHECK(find_is(moved, PATH(S("moved"), S("here"), S("y")), "2"));
  CHECK(find_is(moved, PATH(S("a"), S("y")), "2"));
  bool r;
  CHECK_OK(arbor_tree_mem(moved, PATH(S("moved"), S("here")), &r));
  CHECK(!r);
  CHECK_OK(arbor_tree_mem_tree(moved, PATH(S("moved"), S("here")), &r));
  CHECK(r);
  CHECK_OK(arbor_tree_remove(moved, PATH(S("moved"), S("here")), &removed));
  ArborHash h1, h2;
  CHECK_OK(arbor_tree_hash(removed, &h1));
  CHECK_OK(arbor_tree_hash(t, &h2));
  CHECK(same(&h1, &h2)); /* the emptied directory "moved" disappears */
  bool empty;
  CHECK_OK(arbor_tree_is_empty(a, &empty));
  CHECK(!empty);
  arbor_tree_free(a);
  arbor_tree_free(moved);
  arbor_tree_free(removed);
}

static void heads(ArborStore *s, const ArborHash *c1, const ArborHash *c2) {
  CHECK_OK(arbor_set_head(s, "main", c1));
  CHECK_OK(arbor_set_head(s, "test", c2));
  CHECK_OK(arbor_set_head(s, "main", c2));
  bool found;
  ArborHash h;
  CHECK_OK(arbor_head(s, "main", &found, &h));
  CHECK(found && same(&h, c2));
  ArborHeads *hs;
  CHECK_OK(arbor_store_heads(s, &hs));
  CHECK(arbor_heads_len(hs) == 2);
  const char *name;
  CHECK_OK(arbor_heads_get(hs, 1, &name, &h));
  CHECK(strcmp(name, "test") == 0 && same(&h, c2));
  arbor_heads_free(hs);
  bool removed;
  CHECK_OK(arbor_remove_head(s, "test", &removed));
  CHECK(removed);
  CHECK_OK(arbor_remove_head(s, "test", &removed));
  CHECK(!removed);
  CHECK_OK(arbor_head(s, "test", &found, &h));
  CHECK(!found);
}

static void proofs(ArborStore *s, const ArborHash *c, const ArborTree *t) {
  ArborPath paths[] = {{PATH(S("a"), S("x"))}, {PATH(S("c"))}, {PATH(S("nope"))}};
  ArborBytes proof;
  CHECK_OK(arbor_store_prove(s, c, paths, 3, &proof));
  ArborHash root;
  CHECK_OK(arbor_tree_hash(t, &root));
  ArborVerified *v;
  CHECK_OK(arbor_proof_verify(proof.ptr, proof.len, &root, paths, 3, &v));
  ArborProved what;
  ArborBytes value;
  ArborHash dir;
  CHECK_OK(arbor_verified_find(v, PATH(S("a"), S("x")), &what, &value, &dir));
  CHECK(what == ARBOR_PROVED_VALUE && value.len == 1 && value.ptr[0] == '1');
  arbor_bytes_free(value);
  CHECK_OK(arbor_verified_find(v, PATH(S("c")), &what, &value, &dir));
  ArborTree *c_tree;
  ArborHash c_hash;
  CHECK_OK(arbor_tree_find_tree(t, PATH(S("c")), &c_tree));
  CHECK_OK(arbor_tree_hash(c_tree, &c_hash));
  arbor_tree_free(c_tree);
  CHECK(what == ARBOR_PROVED_DIR && value.ptr == NULL && same(&dir, &c_hash));
  CHECK_OK(arbor_verified_find(v, PATH(S("nope")), &what, &value, &dir));
  CHECK(what == ARBOR_PROVED_ABSENT);
  CHECK_OK(arbor_verified_find(v, PATH(S("b")), &what, &value, &dir));
  CHECK(what == ARBOR_PROVED_NOT_PROVED);
  arbor_verified_free(v);
  arbor_bytes_free(proof);
  /* A proof of an uncommitted tree verifies against that tree's hash. */
  ArborTree *t2 = add_str(t, PATH(S("b")), "changed");
  CHECK_OK(arbor_tree_prove(t2, paths + 1, 2, &proof));
  CHECK_OK(arbor_tree_hash(t2, &root));
  CHECK_OK(arbor_proof_verify(proof.ptr, proof.len, &root, paths + 1, 2, &v));
  arbor_verified_free(v);
  arbor_bytes_free(proof);
  arbor_tree_free(t2);
}

static void gc_and_snapshots(const char *dir, ArborStore *s, const ArborHash *old, const ArborHash *head) {
  char file[512];
  snprintf(file, sizeof file, "%s.snap", dir);
  CHECK_OK(arbor_snapshot_export(s, head, file));
  char *fresh_dir = temp_dir();
  ArborStore *fresh;
  CHECK_OK(arbor_store_open(fresh_dir, NULL, &fresh));
  ArborHash imported;
  CHECK_OK(arbor_snapshot_import(fresh, file, &imported));
  CHECK(same(&imported, head));
  ArborTree *t;
  CHECK_OK(arbor_checkout(fresh, head, &t));
  CHECK(find_is(t, PATH(S("c"), S("d"), S("e")), "4"));
  arbor_tree_free(t);
  CHECK_OK(arbor_store_close(fresh));
  remove_dir(fresh_dir);
  remove(file);

  ArborGcReport report;
  CHECK_OK(arbor_gc(s, head, ARBOR_GC_MODE_DROP, &report));
  CHECK(report.commits_dropped >= 1);
  CHECK_FAILS(ARBOR_STATUS_COMMIT_DROPPED, "removed by garbage collection", arbor_checkout(s, old, &t));
  CHECK_OK(arbor_checkout(s, head, &t));
  CHECK(find_is(t, PATH(S("a"), S("x")), "1"));
  arbor_tree_free(t);
}

void test_features(void) {
  char *dir = temp_dir();
  ArborConfig cfg;
  CHECK_OK(arbor_config_default(&cfg));
  cfg.cache_bytes = 1 << 20;
  ArborStore *s;
  CHECK_OK(arbor_store_open(dir, &cfg, &s));
  bool found;
  ArborHash last;
  CHECK_OK(arbor_store_last_commit(s, &found, &last));
  CHECK(!found);
  ArborTree *e, *t1, *t2, *t3, *t;
  CHECK_OK(arbor_store_empty(s, &e));
  t1 = add_str(e, PATH(S("a"), S("x")), "1");
  t2 = add_str(t1, PATH(S("a"), S("y")), "2");
  t3 = add_str(t2, PATH(S("b")), "3");
  t = add_str(t3, PATH(S("c"), S("d"), S("e")), "4");
  ArborHash c1 = commit(s, t1, NULL, 1);
  ArborHash c2 = commit(s, t, &c1, 2);
  CHECK_OK(arbor_store_last_commit(s, &found, &last));
  CHECK(found && same(&last, &c2));
  CHECK(find_is(t1, PATH(S("a"), S("x")), "1")); /* updates left their inputs unchanged */
  CHECK_OK(arbor_tree_find(t1, PATH(S("b")), &found, &(ArborBytes){0}));
  CHECK(!found);
  walks(t);
  subtrees(t);
  heads(s, &c1, &c2);
  proofs(s, &c2, t);
  CHECK_OK(arbor_store_flush(s));
  gc_and_snapshots(dir, s, &c1, &c2);
  /* A checked-out tree stays readable after its store is closed. */
  ArborTree *co;
  CHECK_OK(arbor_checkout(s, &c2, &co));
  /* A tree handed over is committed as arbor_commit commits it, and its handle is taken (the
     leak checks of the sanitizer runs see it freed); a NULL tree is refused. */
  ArborTree *given = add_str(t, PATH(S("f")), "5");
  ArborHash tree_hash, expected, c3, none;
  CHECK_OK(arbor_tree_hash(given, &tree_hash));
  CHECK_OK(arbor_commit_hash(&tree_hash, &c2, 1, 3, (const uint8_t *)"Tezos", 5, (const uint8_t *)"m", 1, &expected));
  CHECK_OK(arbor_commit_owned(s, given, &c2, 1, 3, (const uint8_t *)"Tezos", 5, (const uint8_t *)"m", 1, &c3));
  CHECK(same(&c3, &expected));
  ArborTree *co3;
  CHECK_OK(arbor_checkout(s, &c3, &co3));
  CHECK(find_is(co3, PATH(S("f")), "5") && find_is(co3, PATH(S("c"), S("d"), S("e")), "4"));
  arbor_tree_free(co3);
  CHECK(arbor_commit_owned(s, NULL, &c3, 1, 4, NULL, 0, NULL, 0, &none) == ARBOR_STATUS_NULL_POINTER);
  CHECK_OK(arbor_store_close(s));
  CHECK(find_is(co, PATH(S("c"), S("d"), S("e")), "4"));
  arbor_tree_free(co);
  arbor_tree_free(e);
  arbor_tree_free(t1);
  arbor_tree_free(t2);
  arbor_tree_free(t3);
  arbor_tree_free(t);
  remove_dir(dir);
}
