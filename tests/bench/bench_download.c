/* Benchmark driver: one verified download through uphook.c.http.
 * usage: bench_download URL SHA256 CACHE_DIR CA_FILE
 * Prints "<bytes> <seconds>" (seconds spent inside download()). */
#include <stdio.h>
#include <time.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "http.h"

int main(int argc, char **argv)
{
  struct timespec a, b;
  lua_State *L;
  int ok;
  if (argc != 5) {
    fprintf(stderr, "usage: %s URL SHA256 CACHE_DIR CA_FILE\n", argv[0]);
    return 2;
  }
  L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "uphook.c.http", luaopen_uphook_http, 0);
  lua_getfield(L, -1, "download");
  lua_createtable(L, 0, 5);
  lua_pushstring(L, argv[1]);
  lua_setfield(L, -2, "url");
  lua_pushstring(L, argv[2]);
  lua_setfield(L, -2, "sha256");
  lua_pushstring(L, argv[3]);
  lua_setfield(L, -2, "cache_dir");
  lua_pushstring(L, argv[4]);
  lua_setfield(L, -2, "ca_file");
  lua_createtable(L, 1, 0);
  lua_pushliteral(L, "127.0.0.1");
  lua_rawseti(L, -2, 1);
  lua_setfield(L, -2, "hosts");
  clock_gettime(CLOCK_MONOTONIC, &a);
  lua_call(L, 1, 2);
  clock_gettime(CLOCK_MONOTONIC, &b);
  ok = lua_istable(L, -2);
  if (ok) {
    lua_getfield(L, -2, "bytes");
    printf("%lld %.3f\n", (long long)lua_tointeger(L, -1),
           (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
  } else {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
  }
  lua_close(L);
  return ok ? 0 : 1;
}
