/* Readers on threads beside a writer: every tree a reader checks out is one complete commit. */
#define _XOPEN_SOURCE 700
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "check.h"

#define BLOCKS 30
#define READERS 3

typedef struct {
  ArborStore *store;
  char *dir;
  ArborHash commits[BLOCKS];
  atomic_int published; /* commits[0 .. published) are written */
  atomic_int done;
  atomic_long reader_checks; /* checkouts checked by the readers of the writer's handle */
  atomic_long ro_checks;     /* by the read-only handle */
} Shared;

static void u64_le(uint64_t v, uint8_t out[8]) {
  for (int i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t read_counter(const ArborTree *t) {
  bool found;
  ArborBytes v;
  CHECK_OK(arbor_tree_find(t, PATH(S("counter")), &found, &v));
  CHECK(found && v.len == 8);
  uint64_t n = 0;
  for (int i = 0; i < 8; i++) n |= (uint64_t)v.ptr[i] << (8 * i);
  arbor_bytes_free(v);
  return n;
}

/* A tree of block k holds counter = k and blocks/0 .. blocks/k. */
static void check_block(const ArborTree *t, uint64_t k) {
  CHECK(read_counter(t) == k);
  uint64_t len;
  CHECK_OK(arbor_tree_length(t, PATH(S("blocks")), &len));
  CHECK(len == k + 1);
  char name[24], value[24];
  for (uint64_t j = 0; j <= k; j += 1 + k / 4) {
    snprintf(name, sizeof name, "%llu", (unsigned long long)j);
    snprintf(value, sizeof value, "v%llu", (unsigned long long)j);
    CHECK(find_is(t, PATH(S("blocks"), S(name)), value));
  }
}

static void *writer(void *arg) {
  Shared *sh = arg;
  ArborTree *t;
  CHECK_OK(arbor_store_empty(sh->store, &t));
  for (int k = 0; k < BLOCKS; k++) {
    uint8_t counter[8];
    u64_le((uint64_t)k, counter);
    char name[24], value[24];
    snprintf(name, sizeof name, "%d", k);
    snprintf(value, sizeof value, "v%d", k);
    ArborTree *a, *b;
    CHECK_OK(arbor_tree_add(t, PATH(S("counter")), counter, 8, &a));
    b = add_str(a, PATH(S("blocks"), S(name)), value);
    arbor_tree_free(a);
    arbor_tree_free(t);
    t = b;
    ArborHash h;
    CHECK_OK(arbor_commit(sh->store, t, k ? &sh->commits[k - 1] : NULL, k ? 1 : 0, k, NULL, 0, NULL, 0, &h));
    sh->commits[k] = h;
    atomic_store(&sh->published, k + 1);
    /* Interleave: the readers check at least one tree per reader and block before the next. */
    while (atomic_load(&sh->reader_checks) < (long)(k + 1) * READERS || atomic_load(&sh->ro_checks) <= k)
      sched_yield();
  }
  arbor_tree_free(t);
  atomic_store(&sh->done, 1);
  return NULL;
}

/* Checks out published commits on the writer's own handle, as fast as it can. */
static void *reader(void *arg) {
  Shared *sh = arg;
  long checks = 0;
  while (!atomic_load(&sh->done) || checks == 0) {
    int n = atomic_load(&sh->published);
    if (n == 0) continue;
    int k = checks % 2 ? n - 1 : (int)(checks % n);
    ArborTree *t;
    CHECK_OK(arbor_checkout(sh->store, &sh->commits[k], &t));
    check_block(t, (uint64_t)k);
    arbor_tree_free(t);
    checks++;
    atomic_fetch_add(&sh->reader_checks, 1);
  }
  return (void *)checks;
}

/* A read-only handle on the same directory, refreshed: sees whole commits only. */
static void *ro_reader(void *arg) {
  Shared *sh = arg;
  ArborConfig cfg;
  CHECK_OK(arbor_config_default(&cfg));
  cfg.read_only = true;
  ArborStore *ro;
  CHECK_OK(arbor_store_open(sh->dir, &cfg, &ro));
  long seen = 0;
  for (;;) {
    int finished = atomic_load(&sh->done);
    CHECK_OK(arbor_store_refresh(ro, NULL));
    bool found;
    ArborHash last;
    CHECK_OK(arbor_store_last_commit(ro, &found, &last));
    if (found) {
      ArborTree *t;
      CHECK_OK(arbor_checkout(ro, &last, &t));
      uint64_t k = read_counter(t);
      check_block(t, k);
      arbor_tree_free(t);
      seen++;
      atomic_fetch_add(&sh->ro_checks, 1);
      if (finished) {
        CHECK(k == BLOCKS - 1);
        break;
      }
    }
  }
  CHECK_OK(arbor_store_close(ro));
  return (void *)seen;
}

void test_threads(void) {
  Shared sh = {.dir = temp_dir()};
  atomic_init(&sh.published, 0);
  atomic_init(&sh.done, 0);
  atomic_init(&sh.reader_checks, 0);
  atomic_init(&sh.ro_checks, 0);
  ArborConfig cfg;
  CHECK_OK(arbor_config_default(&cfg));
  cfg.durability = ARBOR_DURABILITY_INTERVAL; /* no fsync per commit: the test is about threads */
  cfg.sync_interval_ms = 1000;
  CHECK_OK(arbor_store_open(sh.dir, &cfg, &sh.store));
  pthread_t w, r[READERS], ro;
  CHECK(pthread_create(&w, NULL, writer, &sh) == 0);
  for (int i = 0; i < READERS; i++) CHECK(pthread_create(&r[i], NULL, reader, &sh) == 0);
  CHECK(pthread_create(&ro, NULL, ro_reader, &sh) == 0);
  CHECK(pthread_join(w, NULL) == 0);
  long total = 0;
  for (int i = 0; i < READERS; i++) {
    void *checks;
    CHECK(pthread_join(r[i], &checks) == 0);
    total += (long)checks;
  }
  void *seen;
  CHECK(pthread_join(ro, &seen) == 0);
  printf("  threads: %d commits, %ld checkouts by %d readers, %ld by a read-only handle\n", BLOCKS, total, READERS,
         (long)seen);
  CHECK_OK(arbor_store_close(sh.store));
  remove_dir(sh.dir);
}
