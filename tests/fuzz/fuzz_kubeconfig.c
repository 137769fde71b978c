/* Kubeconfig: the input is written as a kubeconfig file next to a token
 * file and a PEM file (so relative tokenFile/certificate paths resolve),
 * loaded and freed.  Checked: a success names a server of the documented
 * form; a failure leaves kc with nothing to free and a message. */
#include <sys/stat.h>
#include "fuzz.h"
#include "kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char path[128];
  uh_kubeconfig kc;
  char err[512];
  uh_err e;
  if (!path[0]) {
    char f[128];
    snprintf(path, sizeof path, "%s/config", fuzz_tmpdir());
    snprintf(f, sizeof f, "%s/token", fuzz_tmpdir());
    fuzz_write_file(f, "abc\n", 4);
    snprintf(f, sizeof f, "%s/ca.crt", fuzz_tmpdir());
    fuzz_write_file(f, "-----BEGIN CERTIFICATE-----\nAAAA\n"
                    "-----END CERTIFICATE-----\n", 58);
  }
  fuzz_write_file(path, data, size);
  err[0] = '\0';
  e = uh_kubeconfig_load(path, &kc, err, sizeof err);
  if (e == UH_OK) {
    if (!kc.server[0] || kc.arena.base == NULL)
      fuzz_fail("loaded without a server or arena");
    if (memchr(kc.server, '\0', sizeof kc.server) == NULL)
      fuzz_fail("server not terminated");
  } else {
    if (!err[0])
      fuzz_fail("failure %d without a message", (int)e);
    if (kc.arena.base != NULL)
      fuzz_fail("failure left the arena mapped");
  }
  uh_kubeconfig_free(&kc);
  uh_kubeconfig_free(&kc);   /* documented safe on a freed kc */
  return 0;
}
