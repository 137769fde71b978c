/* host/jansson_compat.h on the jansson 2.13 path (Ubuntu 22.04, core22),
 * forced on the jansson of this machine: keys round-trip, a key with a
 * NUL byte is refused and its value released, the key length is strlen. */
#define UH_JANSSON_NO_KEYLEN 1
#include "jansson_compat.h"
#include "unit.h"

static void test_set_and_read_back(void)
{
  json_t *o = json_object(), *v = json_integer(7);
  void *it;
  CHECK(uh_json_setn_new(o, "key", 3, v) == 0);
  CHECK(json_integer_value(json_object_get(o, "key")) == 7);
  it = json_object_iter(o);
  CHECK(it && uh_json_iter_key_len(it) == 3);
  CHECK_STR(json_object_iter_key(it), "key");
  json_decref(o);
}

static void test_nul_in_key_refused(void)
{
  json_t *o = json_object(), *v = json_string("x");
  json_incref(v);                   /* keep it to see it was released */
  CHECK(uh_json_setn_new(o, "a\0b", 3, v) == -1);
  CHECK(v->refcount == 1);
  CHECK(json_object_size(o) == 0);
  json_decref(v);
  json_decref(o);
}

int main(void)
{
  RUN(test_set_and_read_back);
  RUN(test_nul_in_key_refused);
  return UNIT_END();
}
