/* Object keys of a given length with the jansson in use.
 *
 * jansson 2.14 added keys with a length (a key may then hold NUL bytes):
 * json_object_setn_new, json_object_iter_key_len.  Ubuntu 22.04 (the
 * MicroK8s snap's base, core22) has 2.13.1, whose keys are C strings and
 * whose parser refuses a NUL in a key.  There, a key read back is as long
 * as strlen says, and a Lua key holding a NUL byte cannot be encoded.
 * UH_JANSSON_NO_KEYLEN forces the 2.13 path (tests/unit/test_jansson_compat.c). */
#ifndef UH_JANSSON_COMPAT_H
#define UH_JANSSON_COMPAT_H
#include <string.h>
#include <jansson.h>

#if JANSSON_VERSION_HEX < 0x020e00 && !defined(UH_JANSSON_NO_KEYLEN)
#define UH_JANSSON_NO_KEYLEN 1
#endif

static inline size_t uh_json_iter_key_len(void *iter)
{
#ifdef UH_JANSSON_NO_KEYLEN
  return strlen(json_object_iter_key(iter));
#else
  return json_object_iter_key_len(iter);
#endif
}

/* json_object_setn_new: -1 (and v released) on failure; key is
 * NUL-terminated at key[n], as Lua strings are */
static inline int uh_json_setn_new(json_t *o, const char *key, size_t n,
                                   json_t *v)
{
#ifdef UH_JANSSON_NO_KEYLEN
  if (strlen(key) != n) {
    json_decref(v);
    return -1;
  }
  return json_object_set_new(o, key, v);
#else
  return json_object_setn_new(o, key, n, v);
#endif
}

#endif
