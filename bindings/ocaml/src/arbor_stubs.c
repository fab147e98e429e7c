/* C stubs between OCaml and arbor's C interface (arbor.h).
 *
 * Trees and stores are OCaml custom blocks holding the arbor handle; the GC's finalizer frees
 * it. Paths (string lists) are passed to arbor as slices pointing into the OCaml strings: no
 * OCaml allocation happens between building them and the arbor call, so the strings cannot
 * move meanwhile. Results are copied into OCaml values after the call. Failures raise
 * Arbor.Error (registered from OCaml as "arbor.error") with arbor's status name and message. */
#include <stdlib.h>
#include <string.h>

#include <caml/alloc.h>
#include <caml/callback.h>
#include <caml/custom.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>

#include "arbor.h"

/* ---- errors ---------------------------------------------------------------------------- */

static void raise_status(ArborStatus s) {
  CAMLparam0();
  CAMLlocalN(args, 2);
  const value *exn = caml_named_value("arbor.error");
  if (!exn) caml_failwith(arbor_last_error());
  args[0] = caml_copy_string(arbor_status_name(s));
  args[1] = caml_copy_string(arbor_last_error());
  caml_raise_with_args(*exn, 2, args);
  CAMLnoreturn;
}

/* Raises Arbor.Error (status, message) for a failure found by the stubs themselves. */
static void raise_error(const char *status, const char *message) {
  CAMLparam0();
  CAMLlocalN(args, 2);
  args[0] = caml_copy_string(status);
  args[1] = caml_copy_string(message);
  caml_raise_with_args(*caml_named_value("arbor.error"), 2, args);
  CAMLnoreturn;
}

#define OK(call)                              \
  do {                                        \
    ArborStatus s_ = (call);                  \
    if (s_ != ARBOR_STATUS_OK) raise_status(s_); \
  } while (0)

/* ---- custom blocks --------------------------------------------------------------------- */

#define Tree_val(v) (*((ArborTree **)Data_custom_val(v)))
#define Store_val(v) (*((ArborStore **)Data_custom_val(v)))

static void finalize_tree(value v) {
  arbor_tree_free(Tree_val(v));
  Tree_val(v) = NULL;
}

static void finalize_store(value v) {
  if (Store_val(v)) arbor_store_close(Store_val(v));
  Store_val(v) = NULL;
}

static struct custom_operations tree_ops = {"arbor.tree",         finalize_tree,          custom_compare_default,
                                            custom_hash_default,  custom_serialize_default, custom_deserialize_default,
                                            custom_compare_ext_default, custom_fixed_length_default};

static struct custom_operations store_ops = {"arbor.store",        finalize_store,         custom_compare_default,
                                             custom_hash_default,  custom_serialize_default, custom_deserialize_default,
                                             custom_compare_ext_default, custom_fixed_length_default};

/* Wraps a tree handle owned from now on by the OCaml GC. The GC cannot see the nodes a tree
 * holds alone: an update copies the directories and inodes on its path, a few kilobytes at
 * Tezos depths, which is what the 8 KiB hint stands for. With 64 bytes, 200k chained adds kept
 * 600 MB of dead trees waiting for finalisation and ran at a third of the speed (measured with
 * bench/bench.exe on a shared machine: 16k adds/s against 27k with 8 KiB). */
static value wrap_tree(ArborTree *t) {
  value v = caml_alloc_custom_mem(&tree_ops, sizeof(ArborTree *), 8192);
  Tree_val(v) = t;
  return v;
}

static ArborStore *store_of(value v) {
  ArborStore *s = Store_val(v);
  if (!s) raise_error("closed", "the store is closed");
  return s;
}

/* ---- paths and hashes ------------------------------------------------------------------ */

#define SMALL_PATH 16

typedef struct {
  ArborSlice small[SMALL_PATH];
  ArborSlice *steps;
  size_t n;
} Path;

/* Slices of the strings of `key` (a string list); no OCaml allocation may follow until the
 * arbor call that uses them. */
static void path_of(value key, Path *p) {
  size_t n = 0;
  for (value l = key; l != Val_emptylist; l = Field(l, 1)) n++;
  p->n = n;
  p->steps = n <= SMALL_PATH ? p->small : malloc(n * sizeof(ArborSlice));
  if (!p->steps) caml_raise_out_of_memory();
  size_t i = 0;
  for (value l = key; l != Val_emptylist; l = Field(l, 1), i++) {
    value s = Field(l, 0);
    p->steps[i] = (ArborSlice){(const uint8_t *)String_val(s), caml_string_length(s)};
  }
}

static void path_free(Path *p) {
  if (p->steps != p->small) free(p->steps);
}

static ArborHash hash_of(value h) {
  ArborHash out;
  if (caml_string_length(h) != 32) caml_invalid_argument("Arbor: a hash is 32 bytes");
  memcpy(out.bytes, String_val(h), 32);
  return out;
}

static value copy_hash(const ArborHash *h) {
  value s = caml_alloc_string(32);
  memcpy((char *)Bytes_val(s), h->bytes, 32);
  return s;
}

/* Hands `b` over to OCaml as a fresh `bytes`, freeing arbor's copy. */
static value take_bytes(ArborBytes b) {
  value v = caml_alloc_string(b.len);
  if (b.len) memcpy(Bytes_val(v), b.ptr, b.len);
  arbor_bytes_free(b);
  return v;
}

static value some(value v) {
  CAMLparam1(v);
  CAMLlocal1(o);
  o = caml_alloc_small(1, 0);
  Field(o, 0) = v;
  CAMLreturn(o);
}

/* ---- stores ---------------------------------------------------------------------------- */

value arbor_ml_open(value dir, value read_only, value cache_bytes, value interval_ms) {
  CAMLparam4(dir, read_only, cache_bytes, interval_ms);
  ArborConfig cfg;
  OK(arbor_config_default(&cfg));
  cfg.read_only = Bool_val(read_only);
  if (Long_val(cache_bytes) > 0) cfg.cache_bytes = (uint64_t)Long_val(cache_bytes);
  if (Long_val(interval_ms) >= 0) {
    cfg.durability = ARBOR_DURABILITY_INTERVAL;
    cfg.sync_interval_ms = (uint64_t)Long_val(interval_ms);
  }
  if (!caml_string_is_c_safe(dir)) caml_invalid_argument("Arbor.init: the directory name holds a NUL");
  ArborStore *s;
  OK(arbor_store_open(String_val(dir), &cfg, &s));
  value v = caml_alloc_custom(&store_ops, sizeof(ArborStore *), 0, 1);
  Store_val(v) = s;
  CAMLreturn(v);
}

value arbor_ml_close(value store) {
  CAMLparam1(store);
  ArborStore *s = Store_val(store);
  Store_val(store) = NULL;
  if (s) OK(arbor_store_close(s));
  CAMLreturn(Val_unit);
}

value arbor_ml_refresh(value store) {
  CAMLparam1(store);
  size_t n = 0;
  OK(arbor_store_refresh(store_of(store), &n));
  CAMLreturn(Val_long(n));
}

value arbor_ml_store_empty(value store) {
  CAMLparam1(store);
  ArborTree *t;
  OK(arbor_store_empty(store_of(store), &t));
  CAMLreturn(wrap_tree(t));
}

value arbor_ml_checkout(value store, value commit) {
  CAMLparam2(store, commit);
  ArborHash h = hash_of(commit);
  ArborTree *t;
  ArborStatus st = arbor_checkout(store_of(store), &h, &t);
  if (st == ARBOR_STATUS_UNKNOWN_COMMIT || st == ARBOR_STATUS_COMMIT_DROPPED) CAMLreturn(Val_none);
  OK(st);
  CAMLreturn(some(wrap_tree(t)));
}

value arbor_ml_exists(value store, value commit) {
  CAMLparam2(store, commit);
  ArborHash h = hash_of(commit);
  bool r;
  OK(arbor_store_contains(store_of(store), &h, &r));
  CAMLreturn(Val_bool(r));
}

/* parents: string list; returns the commit hash. */
value arbor_ml_commit(value store, value tree, value parents, value date, value author, value message) {
  CAMLparam5(store, tree, parents, date, author);
  CAMLxparam1(message);
  ArborStore *st_store = store_of(store); /* may raise: before anything is allocated */
  size_t n = 0;
  for (value l = parents; l != Val_emptylist; l = Field(l, 1)) n++;
  ArborHash *ps = malloc((n ? n : 1) * sizeof(ArborHash));
  if (!ps) caml_raise_out_of_memory();
  size_t i = 0;
  for (value l = parents; l != Val_emptylist; l = Field(l, 1)) {
    if (caml_string_length(Field(l, 0)) != 32) {
      free(ps);
      caml_invalid_argument("Arbor.commit: a parent hash is 32 bytes");
    }
    memcpy(ps[i++].bytes, String_val(Field(l, 0)), 32);
  }
  ArborHash h;
  ArborStatus st = arbor_commit(st_store, Tree_val(tree), ps, n, Int64_val(date),
                                (const uint8_t *)String_val(author), caml_string_length(author),
                                (const uint8_t *)String_val(message), caml_string_length(message), &h);
  free(ps);
  OK(st);
  CAMLreturn(copy_hash(&h));
}

value arbor_ml_commit_bytecode(value *argv, int argc) {
  (void)argc;
  return arbor_ml_commit(argv[0], argv[1], argv[2], argv[3], argv[4], argv[5]);
}

/* The commit hash without committing: tree hash, parents, date, author, message. */
value arbor_ml_commit_hash(value tree, value parents, value date, value author, value message) {
  CAMLparam5(tree, parents, date, author, message);
  size_t n = 0;
  for (value l = parents; l != Val_emptylist; l = Field(l, 1)) n++;
  ArborHash *ps = malloc((n ? n : 1) * sizeof(ArborHash));
  if (!ps) caml_raise_out_of_memory();
  size_t i = 0;
  for (value l = parents; l != Val_emptylist; l = Field(l, 1)) {
    if (caml_string_length(Field(l, 0)) != 32) {
      free(ps);
      caml_invalid_argument("Arbor.hash: a parent hash is 32 bytes");
    }
    memcpy(ps[i++].bytes, String_val(Field(l, 0)), 32);
  }
  ArborHash t, h;
  ArborStatus st = arbor_tree_hash(Tree_val(tree), &t);
  if (st == ARBOR_STATUS_OK)
    st = arbor_commit_hash(&t, ps, n, Int64_val(date), (const uint8_t *)String_val(author),
                           caml_string_length(author), (const uint8_t *)String_val(message),
                           caml_string_length(message), &h);
  free(ps);
  OK(st);
  CAMLreturn(copy_hash(&h));
}

/* Returns (tree, parents, date, author, message). */
value arbor_ml_commit_info(value store, value commit) {
  CAMLparam2(store, commit);
  CAMLlocal5(r, parents, cell, author, message);
  ArborHash h = hash_of(commit);
  ArborCommitInfo info;
  OK(arbor_commit_info(store_of(store), &h, &info));
  parents = Val_emptylist;
  for (size_t i = info.n_parents; i > 0; i--) {
    value p = copy_hash(&info.parents[i - 1]);
    cell = caml_alloc_small(2, 0);
    Field(cell, 0) = p;
    Field(cell, 1) = parents;
    parents = cell;
  }
  author = caml_alloc_initialized_string(info.author.len, (const char *)info.author.ptr);
  message = caml_alloc_initialized_string(info.message.len, (const char *)info.message.ptr);
  r = caml_alloc_tuple(5);
  Store_field(r, 0, copy_hash(&info.tree));
  Store_field(r, 1, parents);
  Store_field(r, 2, caml_copy_int64(info.date));
  Store_field(r, 3, author);
  Store_field(r, 4, message);
  arbor_commit_info_free(&info);
  CAMLreturn(r);
}

value arbor_ml_set_head(value store, value name, value commit) {
  CAMLparam3(store, name, commit);
  ArborHash h = hash_of(commit);
  if (!caml_string_is_c_safe(name)) caml_invalid_argument("Arbor.set_head: the name holds a NUL");
  OK(arbor_set_head(store_of(store), String_val(name), &h));
  CAMLreturn(Val_unit);
}

value arbor_ml_head(value store, value name) {
  CAMLparam2(store, name);
  if (!caml_string_is_c_safe(name)) caml_invalid_argument("Arbor.head: the name holds a NUL");
  bool found;
  ArborHash h;
  OK(arbor_head(store_of(store), String_val(name), &found, &h));
  if (!found) CAMLreturn(Val_none);
  CAMLreturn(some(copy_hash(&h)));
}

value arbor_ml_gc(value store, value keep_from) {
  CAMLparam2(store, keep_from);
  ArborHash h = hash_of(keep_from);
  ArborGcReport r;
  OK(arbor_gc(store_of(store), &h, ARBOR_GC_MODE_DROP, &r));
  CAMLreturn(Val_long(r.commits_dropped));
}

value arbor_ml_export(value store, value commit, value path) {
  CAMLparam3(store, commit, path);
  ArborHash h = hash_of(commit);
  if (!caml_string_is_c_safe(path)) caml_invalid_argument("Arbor.export_snapshot: the path holds a NUL");
  OK(arbor_snapshot_export(store_of(store), &h, String_val(path)));
  CAMLreturn(Val_unit);
}

value arbor_ml_import(value store, value path) {
  CAMLparam2(store, path);
  if (!caml_string_is_c_safe(path)) caml_invalid_argument("Arbor.import_snapshot: the path holds a NUL");
  ArborHash h;
  OK(arbor_snapshot_import(store_of(store), String_val(path), &h));
  CAMLreturn(copy_hash(&h));
}

/* ---- hashes as text -------------------------------------------------------------------- */

value arbor_ml_hash_to_b58(value h) {
  CAMLparam1(h);
  ArborHash x = hash_of(h);
  char buf[ARBOR_BASE58_LEN];
  OK(arbor_hash_to_base58(&x, buf, sizeof buf));
  CAMLreturn(caml_copy_string(buf));
}

value arbor_ml_hash_parse(value text) {
  CAMLparam1(text);
  if (!caml_string_is_c_safe(text)) caml_invalid_argument("Arbor.Hash.of_string: NUL in the text");
  ArborHash h;
  OK(arbor_hash_parse(String_val(text), &h));
  CAMLreturn(copy_hash(&h));
}

/* ---- trees ----------------------------------------------------------------------------- */

value arbor_ml_tree_empty(value unit) {
  CAMLparam1(unit);
  ArborTree *t;
  OK(arbor_tree_empty(&t));
  CAMLreturn(wrap_tree(t));
}

value arbor_ml_tree_of_value(value like, value v) {
  CAMLparam2(like, v);
  ArborTree *t;
  OK(arbor_tree_of_value(Tree_val(like), (const uint8_t *)Bytes_val(v), caml_string_length(v), &t));
  CAMLreturn(wrap_tree(t));
}

value arbor_ml_tree_hash(value tree) {
  CAMLparam1(tree);
  ArborHash h;
  OK(arbor_tree_hash(Tree_val(tree), &h));
  CAMLreturn(copy_hash(&h));
}

value arbor_ml_tree_is_value(value tree) {
  CAMLparam1(tree);
  ArborKind k;
  OK(arbor_tree_kind(Tree_val(tree), &k));
  CAMLreturn(Val_bool(k == ARBOR_KIND_VALUE));
}

value arbor_ml_tree_is_empty(value tree) {
  CAMLparam1(tree);
  bool e;
  OK(arbor_tree_is_empty(Tree_val(tree), &e));
  CAMLreturn(Val_bool(e));
}

value arbor_ml_tree_to_value(value tree) {
  CAMLparam1(tree);
  bool found;
  ArborBytes b;
  OK(arbor_tree_to_value(Tree_val(tree), &found, &b));
  if (!found) CAMLreturn(Val_none);
  CAMLreturn(some(take_bytes(b)));
}

value arbor_ml_find(value tree, value key) {
  CAMLparam2(tree, key);
  Path p;
  path_of(key, &p);
  bool found;
  ArborBytes b;
  ArborStatus st = arbor_tree_find(Tree_val(tree), p.steps, p.n, &found, &b);
  path_free(&p);
  OK(st);
  if (!found) CAMLreturn(Val_none);
  CAMLreturn(some(take_bytes(b)));
}

value arbor_ml_mem(value tree, value key) {
  CAMLparam2(tree, key);
  Path p;
  path_of(key, &p);
  bool r;
  ArborStatus st = arbor_tree_mem(Tree_val(tree), p.steps, p.n, &r);
  path_free(&p);
  OK(st);
  CAMLreturn(Val_bool(r));
}

value arbor_ml_mem_tree(value tree, value key) {
  CAMLparam2(tree, key);
  Path p;
  path_of(key, &p);
  bool r;
  ArborStatus st = arbor_tree_mem_tree(Tree_val(tree), p.steps, p.n, &r);
  path_free(&p);
  OK(st);
  CAMLreturn(Val_bool(r));
}

value arbor_ml_find_tree(value tree, value key) {
  CAMLparam2(tree, key);
  Path p;
  path_of(key, &p);
  ArborTree *t;
  ArborStatus st = arbor_tree_find_tree(Tree_val(tree), p.steps, p.n, &t);
  path_free(&p);
  OK(st);
  if (!t) CAMLreturn(Val_none);
  CAMLreturn(some(wrap_tree(t)));
}

value arbor_ml_length(value tree, value key) {
  CAMLparam2(tree, key);
  Path p;
  path_of(key, &p);
  uint64_t n;
  ArborStatus st = arbor_tree_length(Tree_val(tree), p.steps, p.n, &n);
  path_free(&p);
  OK(st);
  CAMLreturn(Val_long(n));
}

value arbor_ml_add(value tree, value key, value v) {
  CAMLparam3(tree, key, v);
  Path p;
  path_of(key, &p);
  ArborTree *t;
  ArborStatus st =
      arbor_tree_add(Tree_val(tree), p.steps, p.n, (const uint8_t *)Bytes_val(v), caml_string_length(v), &t);
  path_free(&p);
  OK(st);
  CAMLreturn(wrap_tree(t));
}

value arbor_ml_add_tree(value tree, value key, value sub) {
  CAMLparam3(tree, key, sub);
  Path p;
  path_of(key, &p);
  ArborTree *t;
  ArborStatus st = arbor_tree_add_tree(Tree_val(tree), p.steps, p.n, Tree_val(sub), &t);
  path_free(&p);
  OK(st);
  CAMLreturn(wrap_tree(t));
}

value arbor_ml_remove(value tree, value key) {
  CAMLparam2(tree, key);
  Path p;
  path_of(key, &p);
  ArborTree *t;
  ArborStatus st = arbor_tree_remove(Tree_val(tree), p.steps, p.n, &t);
  path_free(&p);
  OK(st);
  CAMLreturn(wrap_tree(t));
}

/* offset >= 0; length < 0: no limit. Returns (string * tree) list in arbor's order. */
value arbor_ml_list(value tree, value key, value offset, value length) {
  CAMLparam4(tree, key, offset, length);
  CAMLlocal4(result, cell, pair, step);
  Path p;
  path_of(key, &p);
  ArborList *l;
  ArborStatus st = arbor_tree_list(Tree_val(tree), p.steps, p.n, (size_t)Long_val(offset), Long_val(length), &l);
  path_free(&p);
  OK(st);
  result = Val_emptylist;
  for (size_t i = arbor_list_len(l); i > 0; i--) {
    ArborSlice s;
    const ArborTree *child;
    ArborTree *copy;
    if (arbor_list_get(l, i - 1, &s, &child) != ARBOR_STATUS_OK || arbor_tree_clone(child, &copy) != ARBOR_STATUS_OK) {
      arbor_list_free(l);
      caml_failwith(arbor_last_error());
    }
    step = caml_alloc_initialized_string(s.len, (const char *)s.ptr);
    value wrapped = wrap_tree(copy);
    pair = caml_alloc_tuple(2);
    Store_field(pair, 0, step);
    Store_field(pair, 1, wrapped);
    cell = caml_alloc_small(2, 0);
    Field(cell, 0) = pair;
    Field(cell, 1) = result;
    result = cell;
  }
  arbor_list_free(l);
  CAMLreturn(result);
}

/* ---- fold ------------------------------------------------------------------------------ */

typedef struct {
  value *f;   /* the OCaml function key -> tree -> 'a -> 'a (a registered root) */
  value *acc; /* the accumulator (a registered root) */
  value *exn; /* an exception raised by f, or Val_unit (a registered root) */
} Fold;

static int32_t fold_visit(void *ctx, const ArborSlice *key, size_t key_len, const ArborTree *tree) {
  CAMLparam0();
  CAMLlocal4(k, cell, step, sub);
  Fold *fo = ctx;
  ArborTree *copy;
  if (arbor_tree_clone(tree, &copy) != ARBOR_STATUS_OK) {
    *fo->exn = caml_copy_string(arbor_last_error());
    CAMLreturnT(int32_t, 1);
  }
  sub = wrap_tree(copy);
  k = Val_emptylist;
  for (size_t i = key_len; i > 0; i--) {
    step = caml_alloc_initialized_string(key[i - 1].len, (const char *)key[i - 1].ptr);
    cell = caml_alloc_small(2, 0);
    Field(cell, 0) = step;
    Field(cell, 1) = k;
    k = cell;
  }
  value r = caml_callback3_exn(*fo->f, k, sub, *fo->acc);
  if (Is_exception_result(r)) {
    *fo->exn = Extract_exception(r);
    CAMLreturnT(int32_t, 1);
  }
  *fo->acc = r;
  CAMLreturnT(int32_t, 0);
}

/* depth_kind: 0 any, 1 eq, 2 le, 3 lt, 4 ge, 5 gt; sorted: bool. */
value arbor_ml_fold(value tree, value key, value depth_kind, value bound, value sorted, value init, value f) {
  CAMLparam5(tree, key, depth_kind, bound, sorted);
  CAMLxparam2(init, f);
  CAMLlocal3(acc, exn, fn);
  acc = init;
  exn = Val_unit;
  fn = f;
  /* The callback allocates, so the path's strings may move: arbor gets a copy. */
  size_t n = 0;
  for (value l = key; l != Val_emptylist; l = Field(l, 1)) n++;
  ArborSlice *steps = malloc((n ? n : 1) * sizeof(ArborSlice));
  char *buf = NULL;
  size_t total = 0;
  for (value l = key; l != Val_emptylist; l = Field(l, 1)) total += caml_string_length(Field(l, 0));
  buf = malloc(total ? total : 1);
  if (!steps || !buf) {
    free(steps);
    free(buf);
    caml_raise_out_of_memory();
  }
  size_t i = 0, at = 0;
  for (value l = key; l != Val_emptylist; l = Field(l, 1), i++) {
    size_t len = caml_string_length(Field(l, 0));
    memcpy(buf + at, String_val(Field(l, 0)), len);
    steps[i] = (ArborSlice){(const uint8_t *)buf + at, len};
    at += len;
  }
  Fold fo = {&fn, &acc, &exn};
  ArborStatus st = arbor_tree_fold(Tree_val(tree), steps, n, (ArborDepth)Int_val(depth_kind), (size_t)Long_val(bound),
                                   Bool_val(sorted) ? ARBOR_ORDER_SORTED : ARBOR_ORDER_STORAGE, fold_visit, &fo);
  free(steps);
  free(buf);
  OK(st);
  if (exn != Val_unit) {
    if (Is_block(exn) && Tag_val(exn) == String_tag) caml_failwith(String_val(exn));
    caml_raise(exn);
  }
  CAMLreturn(acc);
}

value arbor_ml_fold_bytecode(value *argv, int argc) {
  (void)argc;
  return arbor_ml_fold(argv[0], argv[1], argv[2], argv[3], argv[4], argv[5], argv[6]);
}
