/* MessagePack reader (the broker reads hostile bytes with it): unpack
 * (v1), pack, unpack (v2), pack, unpack (v3): v2 and v3 must be deeply
 * equal.  v1 may differ from v2 as mpack.h documents (a map with keys
 * 1..n packs as an array, bin unpacks as str); after one pass the value
 * is normal and must then survive unchanged.  Byte comparison would not
 * do: map order follows Lua's table order. */
#include "fuzz.h"
#include "mpack.h"

static int one(lua_State *L)
{
  const char *s = lua_touserdata(L, 1);
  size_t n = (size_t)lua_tointeger(L, 2);
  msgpack_sbuffer a, b;
  char err[256];
  lua_settop(L, 0);
  if (uh_mpack_unpack_push(L, s, n, err, sizeof err) != 0) {
    if (lua_gettop(L) != 0)
      fuzz_fail("a failed unpack left the stack at %d", lua_gettop(L));
    return 0;
  }
  if (lua_gettop(L) != 1)
    fuzz_fail("unpack pushed %d values", lua_gettop(L));
  msgpack_sbuffer_init(&a);
  msgpack_sbuffer_init(&b);
  if (uh_mpack_pack(L, 1, &a, err, sizeof err) != 0)
    fuzz_fail("an unpacked value does not pack: %s", err);
  if (uh_mpack_unpack_push(L, a.data, a.size, err, sizeof err) != 0)
    fuzz_fail("the packer wrote bytes that do not unpack: %s", err);
  if (uh_mpack_pack(L, 2, &b, err, sizeof err) != 0)
    fuzz_fail("the re-unpacked value does not pack: %s", err);
  if (uh_mpack_unpack_push(L, b.data, b.size, err, sizeof err) != 0)
    fuzz_fail("the packer wrote bytes that do not unpack: %s", err);
  if (!fuzz_deep_equal(L, 2, 3, 0))
    fuzz_fail("round trip changed the value");
  msgpack_sbuffer_destroy(&a);
  msgpack_sbuffer_destroy(&b);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_pcall(fuzz_state(), one, data, size);
  return 0;
}
