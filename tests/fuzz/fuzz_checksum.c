/* uh_checksum_for: the first line of the input is the file name looked
 * up, the rest the checksum file.  A hit is 64 lowercase hex digits that
 * appear (in some case) in the text. */
#include "fuzz.h"
#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *s = (const char *)data, *nl = memchr(s, '\n', size);
  size_t namelen = nl ? (size_t)(nl - s) : size;
  const char *text = nl ? nl + 1 : s + size;
  size_t len = size - (size_t)(text - s);
  char out[65], *name = malloc(namelen + 1);
  int i;
  if (!name)
    return 0;
  memcpy(name, s, namelen);   /* an exact-size copy: overreads show */
  name[namelen] = '\0';
  memset(out, 'x', sizeof out);
  if (uh_checksum_for(text, len, name, namelen, out) == UH_OK) {
    if (out[64] != '\0')
      fuzz_fail("result not terminated");
    for (i = 0; i < 64; i++)
      if (!((out[i] >= '0' && out[i] <= '9') || (out[i] >= 'a' && out[i] <= 'f')))
        fuzz_fail("result is not lowercase hex: %.64s", out);
  }
  free(name);
  return 0;
}
