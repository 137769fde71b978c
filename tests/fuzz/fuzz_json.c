/* JSON: decode; when it decodes, encode, decode the encoding and encode
 * again: the two encodings must be equal. */
#include "fuzz.h"
#include "luax.h"
#include "json.h"

static int one(lua_State *L)
{
  const char *s = lua_touserdata(L, 1), *e1, *e2;
  size_t n = (size_t)lua_tointeger(L, 2), n1, n2;
  char err[256];
  lua_settop(L, 0);
  if (uh_json_decode_push(L, s, n, err, sizeof err) != UH_OK)
    return 0;
  if (uh_json_encode_push(L, 1, err, sizeof err) != UH_OK)
    fuzz_fail("a decoded value does not encode: %s", err);
  e1 = lua_tolstring(L, 2, &n1);
  if (uh_json_decode_push(L, e1, n1, err, sizeof err) != UH_OK)
    fuzz_fail("the encoder wrote JSON that does not decode: %s\n%.*s", err,
              (int)n1, e1);
  if (uh_json_encode_push(L, 3, err, sizeof err) != UH_OK)
    fuzz_fail("the re-decoded value does not encode: %s", err);
  e2 = lua_tolstring(L, 4, &n2);
  if (n1 != n2 || memcmp(e1, e2, n1) != 0)
    fuzz_fail("round trip changed the value:\n%.*s\n%.*s", (int)n1, e1,
              (int)n2, e2);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_pcall(fuzz_state(), one, data, size);
  return 0;
}
