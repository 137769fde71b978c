/* The durable upgrade journal (docs/contract.md §7): one file per addon, appended
 * and fdatasynced before each change, replayed after a crash.
 *
 * Layout (all integers big-endian):
 *   header  "UPHOOKJ1" | u32 version | u32 reserved (0)
 *   record  u32 length | u32 check | payload (MessagePack, host/mpack.c)
 * check = the first 4 bytes of SHA-256(payload).  Records are only ever
 * appended, so damage is expected at the tail only: a record that runs
 * past EOF, or fails its check and is followed by nothing but zero bytes
 * (a torn write after a crash), is ignored; anything else is corruption.
 */
#ifndef UH_JOURNAL_H
#define UH_JOURNAL_H
#include <stddef.h>
#include <stdint.h>
#include <lua.h>

#define UH_JOURNAL_MAGIC "UPHOOKJ1"
/* The version new journals get, and the oldest one replay still reads:
 * every later uphook recovers a journal of an earlier one (docs/state.md
 * "The journal").  1: roots absolute; 2: the addon's name is checked,
 * roots relative to $SNAP_DATA / $SNAP_COMMON, backups relative to the
 * journal's folder, kube records with what was applied and "made"
 * records with the uid and fields the server stored. */
#define UH_JOURNAL_VERSION 2u
#define UH_JOURNAL_OLDEST 1u
#define UH_JOURNAL_HDRLEN 16
#define UH_JOURNAL_MAXREC (64u << 20)
#define UH_JOURNAL_MAXFILE (512u << 20)

/* The header of a file's first len bytes: 0 valid (a version replay
 * reads), 1 empty or a torn prefix of a valid header, -1 wrong magic, -2
 * unsupported version.  *version (may be NULL) gets the file's version
 * when the header is whole. */
int uh_journal_header(const unsigned char *buf, size_t len,
                      uint32_t *version);
void uh_journal_make_header(unsigned char out[UH_JOURNAL_HDRLEN]);
/* The 8 framing bytes of a payload. */
void uh_journal_frame(unsigned char out[8], const void *payload, size_t n);

typedef struct uh_jscan {
  const unsigned char *buf;
  size_t len, off;       /* off: the end of the good data so far */
} uh_jscan;

enum { UH_JREC = 1, UH_JEND = 0, UH_JTORN = -1, UH_JCORRUPT = -2 };
/* Next record after the header (start with off = UH_JOURNAL_HDRLEN). */
int uh_journal_next(uh_jscan *s, const unsigned char **payload, size_t *n);

int luaopen_uphook_journal(lua_State *L);

#endif
