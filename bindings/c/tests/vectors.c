/* The published Tezos context hash vectors, computed through the C interface. */
#include "check.h"

/* The 32 bytes of ProtoDemoNoopsDemoNoopsDemoNoopsDemoNoopsDemo6XBoYp (base58check payload). */
static const uint8_t PROTO[32] = {0x0b, 0xcd, 0x7d, 0xb2, 0xd7, 0x18, 0xba, 0x94, 0xe8, 0x5b, 0xd2,
                                  0x62, 0x68, 0x10, 0x49, 0x85, 0x2e, 0x1f, 0x58, 0x51, 0x2a, 0xa5,
                                  0x52, 0x12, 0x43, 0x30, 0xd6, 0x57, 0x84, 0x5c, 0x73, 0xb7};

static void expect_base58(const ArborHash *h, const char *published) {
  char text[ARBOR_BASE58_LEN];
  base58(h, text);
  if (strcmp(text, published) != 0) {
    fprintf(stderr, "got %s, published %s\n", text, published);
    CHECK(!"hash differs from the published vector");
  }
}

static ArborHash commit(const ArborStore *s, const ArborTree *t, const ArborHash *parent, const char *msg) {
  ArborHash h;
  CHECK_OK(arbor_commit(s, t, parent, parent ? 1 : 0, 0, (const uint8_t *)"Tezos", 5, (const uint8_t *)msg,
                        strlen(msg), &h));
  return h;
}

void test_vectors(void) {
  /* A value and a two-entry directory. */
  ArborTree *empty, *value, *two, *tmp;
  CHECK_OK(arbor_tree_empty(&empty));
  CHECK_OK(arbor_tree_of_value(empty, (const uint8_t *)"0000000000", 10, &value));
  ArborHash h;
  CHECK_OK(arbor_tree_hash(value, &h));
  expect_base58(&h, "CoWHVKM5r2eiHQxhicqakkr5FwJfabahGBwCCWzRPCNPs79CoZty");
  tmp = add_str(empty, PATH(S("00")), "0000000000");
  two = add_str(tmp, PATH(S("01")), "0000000000");
  arbor_tree_free(tmp);
  CHECK_OK(arbor_tree_hash(two, &h));
  expect_base58(&h, "CoVeCU4o3dqmfdwqt2vh8LDz9X6qGbTUyLhgVvFReyzAvTf92AKx");
  arbor_tree_free(value);
  arbor_tree_free(two);
  arbor_tree_free(empty);

  /* Genesis and the two commits on it of Octez's test_context. */
  char *dir = temp_dir();
  ArborStore *s;
  CHECK_OK(arbor_store_open(dir, NULL, &s));
  ArborTree *g0, *g;
  CHECK_OK(arbor_store_empty(s, &g0));
  CHECK_OK(arbor_tree_add(g0, PATH(S("protocol")), PROTO, 32, &tmp));
  CHECK_OK(arbor_tree_add(tmp, PATH(S("test_chain")), (const uint8_t *)"", 1, &g));
  arbor_tree_free(tmp);
  arbor_tree_free(g0);
  ArborHash genesis = commit(s, g, NULL, "Genesis");
  expect_base58(&genesis, "CoVea41f9dPhkymYEfPsXV5FmyzDb91iz1Grk6zasb31zv9nEZjN");

  ArborTree *t = add_str(g, PATH(S("data"), S("a"), S("aaaaaaa")), "foo1");
  tmp = add_str(t, PATH(S("data"), S("a"), S("aaaaaaaa")), "foo2");
  arbor_tree_free(t);
  t = tmp;
  char step[256];
  size_t lengths[] = {16, 32, 64, 127};
  for (size_t i = 0; i < 4; i++) {
    memset(step, 'a', lengths[i]);
    step[lengths[i]] = 0;
    tmp = add_str(t, PATH(S("data"), S(step)), "foo2");
    arbor_tree_free(t);
    t = tmp;
  }
  ArborHash c1 = commit(s, t, &genesis, "");
  expect_base58(&c1, "CoWJsL2ehZ39seTr8inBCJb5tVjW8KGNweJ5cvuVq51mAASrRmim");
  memset(step, 'a', 255);
  step[255] = 0;
  ArborTree *t2 = add_str(t, PATH(S("data"), S(step)), "foo2");
  ArborHash c2 = commit(s, t2, &genesis, "");
  expect_base58(&c2, "CoVexcEHMXmSA2k42aNc5MCDtVJFRs3CC6vcQWYwFoj7EFsBPw1c");

  /* What the commits record, and the same answers after reopening. */
  ArborCommitInfo info;
  CHECK_OK(arbor_commit_info(s, &c1, &info));
  ArborHash th;
  CHECK_OK(arbor_tree_hash(t, &th));
  CHECK(info.n_parents == 1 && memcmp(info.parents[0].bytes, genesis.bytes, 32) == 0);
  CHECK(memcmp(info.tree.bytes, th.bytes, 32) == 0 && memcmp(info.hash.bytes, c1.bytes, 32) == 0);
  CHECK(info.date == 0 && info.author.len == 5 && memcmp(info.author.ptr, "Tezos", 5) == 0);
  CHECK(info.message.len == 0);
  arbor_commit_info_free(&info);
  arbor_commit_info_free(&info); /* a second free does nothing */
  arbor_tree_free(t);
  arbor_tree_free(t2);
  arbor_tree_free(g);
  CHECK_OK(arbor_store_close(s));

  CHECK_OK(arbor_store_open(dir, NULL, &s));
  CHECK_OK(arbor_checkout(s, &c2, &t));
  CHECK_OK(arbor_tree_hash(t, &th));
  CHECK(find_is(t, PATH(S("data"), S("a"), S("aaaaaaa")), "foo1"));
  CHECK(find_is(t, PATH(S("data"), S(step)), "foo2"));
  arbor_tree_free(t);
  CHECK_OK(arbor_store_close(s));
  remove_dir(dir);
}
