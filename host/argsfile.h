/* MicroK8s args files ($SNAP_DATA/args/kubelet, ...): one flag a line,
 * `--flag=value`, `--flag value` or a bare `--flag`, `#` comments and
 * blank lines.  The snap's wrapper reads them as shell words, so values
 * may be quoted; $VAR and ${VAR} references are kept for it to expand.
 * Pure string functions. */
#ifndef UH_ARGSFILE_H
#define UH_ARGSFILE_H
#include <stddef.h>
#include <lua.h>

/* Offsets of the parts of one flag line (the line without its '\n'). */
typedef struct uh_argline {
  size_t flag, flag_len;
  size_t sep, sep_len;     /* "=" or a run of blanks; 0 length: bare */
  size_t val, val_len;     /* the raw value, quotes included */
  size_t tail;             /* trailing blanks (and a '\r') start here */
} uh_argline;

/* 1 if the line is a flag line (first non-blank is '-'), else 0. */
int uh_args_scan(const char *line, size_t len, uh_argline *out);
/* Remove shell quoting from v[0..n) into out (room for n bytes);
 * returns the unquoted length. */
size_t uh_args_unquote(const char *v, size_t n, char *out);

int luaopen_uphook_argsfile(lua_State *L);

#endif
