/* Journal replay.  The first input byte picks the mode:
 *   even: the rest is the journal file as is;
 *   odd:  the rest is a list of payloads, each a 2-byte big-endian length
 *         then its bytes, written under a valid header with valid frames
 *         (so the fuzzer gets past the checksums into the MessagePack
 *         records); bit 1 set: a torn tail (a frame cut short) follows.
 * The file is replayed by uphook.c.journal's replay(path), and scanned by
 * uh_journal_next.  Checked in the odd mode: replay returns every record
 * unless one does not unpack, and reports the torn tail exactly when one
 * was written. */
#include "fuzz.h"
#include "journal.h"
#include "mpack.h"

static unsigned char *build(const uint8_t *d, size_t n, size_t *outlen,
                            int *records, int torn)
{
  size_t cap = UH_JOURNAL_HDRLEN + n * 5 + 16, len = UH_JOURNAL_HDRLEN;
  unsigned char *out = malloc(cap);
  size_t i = 0;
  if (!out)
    abort();
  uh_journal_make_header(out);
  *records = 0;
  while (i + 2 <= n) {
    size_t pl = (size_t)d[i] << 8 | d[i + 1];
    if (pl > n - i - 2)
      pl = n - i - 2;
    uh_journal_frame(out + len, d + i + 2, pl);
    memcpy(out + len + 8, d + i + 2, pl);
    len += 8 + pl;
    i += 2 + pl;
    ++*records;
  }
  if (torn) {
    unsigned char fr[8];
    uh_journal_frame(fr, "\x91\x01", 2);
    fr[3] = 40;   /* claims 40 bytes, 5 follow */
    memcpy(out + len, fr, 8);
    memcpy(out + len + 8, "\x91\x01\x02\x03\x04", 5);
    len += 13;
  }
  *outlen = len;
  return out;
}

static int one(lua_State *L)
{
  static char path[128];
  const uint8_t *d = lua_touserdata(L, 1);
  size_t n = (size_t)lua_tointeger(L, 2), len, pn;
  int mode = n ? d[0] : 0, records = 0, r, count = 0;
  unsigned char *file;
  const unsigned char *pl;
  uh_jscan s;
  if (!path[0])
    snprintf(path, sizeof path, "%s/journal", fuzz_tmpdir());
  if (n) {
    d++;
    n--;
  }
  if (mode & 1) {
    file = build(d, n, &len, &records, mode & 2);
  } else {
    file = malloc(n ? n : 1);
    if (!file)
      abort();
    memcpy(file, d, n);
    len = n;
  }
  fuzz_write_file(path, file, len);
  /* the scanner on the exact-size buffer */
  if (uh_journal_header(file, len, NULL) == 0) {
    s.buf = file;
    s.len = len;
    s.off = UH_JOURNAL_HDRLEN;
    while ((r = uh_journal_next(&s, &pl, &pn)) == UH_JREC) {
      if (pl < file || pl + pn > file + len || s.off > len)
        fuzz_fail("record outside the buffer");
      count++;
    }
    if ((mode & 1) && (count != records || r != ((mode & 2) ? UH_JTORN
                                                            : UH_JEND)))
      fuzz_fail("scan found %d records (%d), end %d; %d written", count, r,
                records, records);
  }
  free(file);
  lua_settop(L, 0);
  luaL_requiref(L, "uphook.c.journal", luaopen_uphook_journal, 0);
  lua_getfield(L, 1, "replay");
  lua_pushstring(L, path);
  lua_call(L, 1, 2);
  if ((mode & 1) && lua_istable(L, -2)) {
    if ((int)lua_rawlen(L, -2) != records)
      fuzz_fail("replay returned %d records, %d written",
                (int)lua_rawlen(L, -2), records);
    if (lua_toboolean(L, -1) != ((mode & 2) != 0))
      fuzz_fail("replay torn flag wrong");
  } else if ((mode & 1) && !lua_isstring(L, -1)) {
    fuzz_fail("replay failed without a message");
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_pcall(fuzz_state(), one, data, size);
  return 0;
}
