/* YAML: decode (one document or a stream), encode, decode the encoding
 * again and encode it again: both encodings must be equal, and what the
 * encoder wrote must decode. */
#include "fuzz.h"
#include "luax.h"
#include "yaml.h"

static int one(lua_State *L)
{
  const char *s = lua_touserdata(L, 1);
  size_t n = (size_t)lua_tointeger(L, 2), n1, n2;
  int all = n > 0 && (s[0] & 1);   /* the first byte picks decode_all */
  const char *e1, *e2;
  char err[256];
  if (n > 0) {
    s++;
    n--;
  }
  lua_settop(L, 0);
  if (uh_yaml_decode_push(L, s, n, all, err, sizeof err) != UH_OK)
    return 0;
  if (uh_yaml_encode_push(L, 1, all, err, sizeof err) != UH_OK)
    return 0;   /* e.g. a decoded alias expansion over the encoder's limit */
  e1 = lua_tolstring(L, 2, &n1);
  if (uh_yaml_decode_push(L, e1, n1, all, err, sizeof err) != UH_OK)
    fuzz_fail("the encoder wrote YAML that does not decode: %s\n%.*s", err,
              (int)n1, e1);
  if (uh_yaml_encode_push(L, 3, all, err, sizeof err) != UH_OK)
    fuzz_fail("the re-decoded value does not encode: %s", err);
  e2 = lua_tolstring(L, 4, &n2);
  if (n1 != n2 || memcmp(e1, e2, n1) != 0)
    fuzz_fail("round trip changed the value:\n--- first\n%.*s\n--- second\n"
              "%.*s", (int)n1, e1, (int)n2, e2);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_pcall(fuzz_state(), one, data, size);
  return 0;
}
