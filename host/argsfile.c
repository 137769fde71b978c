/* MicroK8s args files: parse and edit, keeping every unrelated byte.
 * Lua family uphook.c.argsfile: parse(text), edit(text, changes). */
#include "argsfile.h"
#include "luax.h"

#include <stdlib.h>
#include <string.h>
#include <lauxlib.h>

static int is_blank(char c)
{
  return c == ' ' || c == '\t' || c == '\r';
}

static int is_alpha(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_alnum(char c)
{
  return is_alpha(c) || (c >= '0' && c <= '9');
}

int uh_args_scan(const char *s, size_t len, uh_argline *a)
{
  size_t i = 0, end = len;
  while (i < len && (s[i] == ' ' || s[i] == '\t'))
    i++;
  if (i == len || s[i] != '-')
    return 0;
  while (end > i && is_blank(s[end - 1]))
    end--;
  a->tail = end;
  a->flag = i;
  while (i < end && s[i] != '=' && !is_blank(s[i]))
    i++;
  a->flag_len = i - a->flag;
  a->sep = i;
  if (i < end && s[i] == '=')
    i++;
  else
    while (i < end && is_blank(s[i]))
      i++;
  a->sep_len = i - a->sep;
  a->val = i;
  a->val_len = end - i;
  return 1;
}

size_t uh_args_unquote(const char *v, size_t n, char *out)
{
  size_t i, o = 0;
  int q = 0;   /* 0, '\'' or '"' */
  for (i = 0; i < n; i++) {
    char c = v[i];
    if (q == '\'') {
      if (c == '\'')
        q = 0;
      else
        out[o++] = c;
    } else if (c == '\\' && i + 1 < n &&
               (!q || strchr("$`\"\\", v[i + 1]))) {
      out[o++] = v[++i];
    } else if (c == '"' || (c == '\'' && !q)) {
      q = q ? 0 : c;
    } else {
      out[o++] = c;
    }
  }
  return o;
}

/* Length of a $NAME or ${NAME} reference at v[i], else 0. */
static size_t varref_len(const char *v, size_t n, size_t i)
{
  size_t j = i + 1, brace;
  if (v[i] != '$' || j >= n)
    return 0;
  brace = v[j] == '{';
  j += brace;
  if (j >= n || !is_alpha(v[j]))
    return 0;
  while (j < n && is_alnum(v[j]))
    j++;
  if (brace) {
    if (j >= n || v[j] != '}')
      return 0;
    j++;
  }
  return j - i;
}

static int needs_quotes(const char *v, size_t n)
{
  size_t i, r;
  if (n == 0)
    return 1;
  for (i = 0; i < n; i++) {
    if ((r = varref_len(v, n, i)) > 0)
      i += r - 1;
    else if (!is_alnum(v[i]) && !strchr("-./:,=@%+", v[i]))
      return 1;
  }
  return 0;
}

/* Write v as one shell word: bare when safe, else in double quotes with
 * everything that would expand escaped, except $VAR/${VAR} references
 * (kept for the snap's wrapper, like the stock args files use them).
 * quote: the style of the value being replaced ('"', '\'' or 0). */
static void add_quoted(luaL_Buffer *b, const char *v, size_t n, int quote)
{
  size_t i, r;
  if (quote == '\'' && !memchr(v, '\'', n)) {
    luaL_addchar(b, '\'');
    luaL_addlstring(b, v, n);
    luaL_addchar(b, '\'');
    return;
  }
  if (quote != '"' && !needs_quotes(v, n)) {
    luaL_addlstring(b, v, n);
    return;
  }
  luaL_addchar(b, '"');
  for (i = 0; i < n; i++) {
    if ((r = varref_len(v, n, i)) > 0) {
      luaL_addlstring(b, v + i, r);
      i += r - 1;
      continue;
    }
    if (strchr("\"\\`$", v[i]) && v[i] != '\0')
      luaL_addchar(b, '\\');
    luaL_addchar(b, v[i]);
  }
  luaL_addchar(b, '"');
}

/* ---- Lua ---- */

static void push_unquoted(lua_State *L, const char *v, size_t n)
{
  luaL_Buffer b;
  char *p = luaL_buffinitsize(L, &b, n);
  luaL_pushresultsize(&b, uh_args_unquote(v, n, p));
}

/* Every line s[i..e), without its newline. */
#define EACH_LINE(s, len, i, e) \
  for (i = 0; i < len && ((e = line_end(s, len, i)), 1); i = e + 1)

static size_t line_end(const char *s, size_t len, size_t i)
{
  const char *nl = memchr(s + i, '\n', len - i);
  return nl ? (size_t)(nl - s) : len;
}

static int argsfile_parse(lua_State *L)
{
  size_t len, i, e;
  const char *s = luaL_checklstring(L, 1, &len);
  uh_argline a;
  lua_newtable(L);
  EACH_LINE(s, len, i, e) {
    if (!uh_args_scan(s + i, e - i, &a))
      continue;
    lua_pushlstring(L, s + i + a.flag, a.flag_len);
    if (a.sep_len == 0)
      lua_pushboolean(L, 1);
    else
      push_unquoted(L, s + i + a.val, a.val_len);
    lua_rawset(L, -3);   /* a later line wins, as for the daemon */
  }
  return 1;
}

static void check_changes(lua_State *L)
{
  const char *k, *v;
  size_t n, vn;
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "edit: flag names must be strings");
    k = lua_tolstring(L, -2, &n);
    if (n < 2 || k[0] != '-' || strlen(k) != n ||
        strpbrk(k, " \t\r\n=#\"'\\$`"))
      luaL_error(L, "edit: invalid flag name '%s'", k);
    if (lua_type(L, -1) == LUA_TSTRING) {
      v = lua_tolstring(L, -1, &vn);
      if (memchr(v, '\n', vn) || memchr(v, '\r', vn) || memchr(v, '\0', vn))
        luaL_error(L, "edit: the value of %s has a line break or NUL", k);
    } else if (!lua_isboolean(L, -1)) {
      luaL_error(L, "edit: the value of %s must be a string or a boolean", k);
    }
    lua_pop(L, 1);
  }
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Push a userdata array of the flags to append (set, not in the text),
 * sorted so that the output does not depend on table order. */
static const char **new_flags(lua_State *L, const char *s, size_t len,
                              size_t *count)
{
  size_t i, e, n = 0;
  uh_argline a;
  const char **list;
  lua_newtable(L);   /* flags present in the text */
  EACH_LINE(s, len, i, e) {
    if (uh_args_scan(s + i, e - i, &a)) {
      lua_pushlstring(L, s + i + a.flag, a.flag_len);
      lua_pushboolean(L, 1);
      lua_rawset(L, -3);
    }
  }
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    n++;
    lua_pop(L, 1);
  }
  list = lua_newuserdatauv(L, (n ? n : 1) * sizeof *list, 0);
  n = 0;
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    lua_pushvalue(L, -2);
    if (lua_toboolean(L, -2) && lua_rawget(L, -5) == LUA_TNIL)
      list[n++] = lua_tostring(L, -3);   /* kept alive by changes */
    lua_pop(L, 2);
  }
  lua_remove(L, -2);
  qsort(list, n, sizeof *list, cmp_str);
  *count = n;
  return list;
}

/* The value part of a flag line being set to v. */
static void set_value(luaL_Buffer *b, const char *line,
                      const uh_argline *a, const char *v, size_t vn)
{
  const char *raw = line + a->val;
  if (a->sep_len == 0)
    luaL_addchar(b, '=');
  else
    luaL_addlstring(b, line + a->sep, a->sep_len);
  add_quoted(b, v, vn, a->val_len > 0 && (*raw == '"' || *raw == '\'')
                        ? *raw : 0);
}

/* 1 when the line already says what the change asks. */
static int same_value(lua_State *L, const char *line, const uh_argline *a,
                      const char *v, size_t vn)
{
  char *tmp;
  size_t n;
  int same;
  if (a->sep_len == 0)
    return 0;
  tmp = lua_newuserdatauv(L, a->val_len + 1, 0);
  n = uh_args_unquote(line + a->val, a->val_len, tmp);
  same = n == vn && memcmp(tmp, v, n) == 0;
  lua_pop(L, 1);
  return same;
}

/* Copy one line (n bytes, plus its newline when nl) under the changes:
 * unrelated lines byte for byte, a changed flag in place, a removed flag
 * not at all. */
static void edit_line(lua_State *L, luaL_Buffer *b, const char *line,
                      size_t n, int nl)
{
  uh_argline a;
  const char *v = NULL;
  size_t vn = 0;
  int t = LUA_TNIL, on = 0;

  if (uh_args_scan(line, n, &a)) {
    lua_pushlstring(L, line + a.flag, a.flag_len);
    t = lua_rawget(L, 2);
    on = lua_toboolean(L, -1);
    if (t == LUA_TSTRING)
      v = lua_tolstring(L, -1, &vn);   /* kept alive by changes */
    lua_pop(L, 1);
  }
  if (t == LUA_TBOOLEAN && !on)
    return;
  if ((t == LUA_TBOOLEAN && a.sep_len > 0) ||
      (t == LUA_TSTRING && !same_value(L, line, &a, v, vn))) {
    luaL_addlstring(b, line, a.flag + a.flag_len);
    if (t == LUA_TSTRING)
      set_value(b, line, &a, v, vn);
    luaL_addlstring(b, line + a.tail, n - a.tail);
  } else {
    luaL_addlstring(b, line, n);
  }
  if (nl)
    luaL_addchar(b, '\n');
}

static int argsfile_edit(lua_State *L)
{
  size_t len, i, e, n, k, vn, olen;
  const char *s = luaL_checklstring(L, 1, &len), **add, *v, *out;
  luaL_Buffer b;

  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  check_changes(L);
  add = new_flags(L, s, len, &n);
  luaL_buffinit(L, &b);
  EACH_LINE(s, len, i, e)
    edit_line(L, &b, s + i, e - i, e < len);
  for (k = 0; k < n; k++) {
    if (luaL_bufflen(&b) > 0 && luaL_buffaddr(&b)[luaL_bufflen(&b) - 1] != '\n')
      luaL_addchar(&b, '\n');   /* the text had no final newline */
    luaL_addstring(&b, add[k]);
    lua_pushstring(L, add[k]);
    lua_rawget(L, 2);
    v = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &vn) : NULL;
    lua_pop(L, 1);
    if (v) {
      luaL_addchar(&b, '=');
      add_quoted(&b, v, vn, 0);
    }
    luaL_addchar(&b, '\n');
  }
  luaL_pushresult(&b);
  out = lua_tolstring(L, -1, &olen);
  lua_pushboolean(L, olen != len || memcmp(out, s, len) != 0);
  return 2;
}

static const luaL_Reg argsfile_funcs[] = {
  {"edit", argsfile_edit},
  {"parse", argsfile_parse},
  {NULL, NULL}
};

int luaopen_uphook_argsfile(lua_State *L)
{
  luaL_newlib(L, argsfile_funcs);
  return 1;
}
