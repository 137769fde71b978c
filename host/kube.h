/* uphook.c.kube: the Kubernetes REST client of the live backend.
 *
 *   connect{kubeconfig=, snap_data=, home=, kubeconfig_env=}
 *                                  -> client | nil, msg
 *   client:request(method, path, body?, content_type?, timeout_s?,
 *                  accept?)        -> status, body, content_type
 *                                   | nil, msg (connection error)
 *   client:request_many({{method, path, body?, content_type?}, ...},
 *                       timeout_s?, parallel?)
 *                                  -> {{status=, body=} | {error=msg}, ...}
 *                                     (1 to 256 requests, at most parallel
 *                                     (1-8, default 4) in flight over kept
 *                                     connections, answers in order)
 *   client:watch(path, timeout_s, on_line)
 *                                  -> true          (on_line returned true)
 *                                   | false, status, body (stream ended)
 *                                   | nil, msg      (connection error)
 *   client:server() -> URL;  client:file() -> the kubeconfig used;
 *   client:namespace() -> the context's namespace or nil;  client:close()
 *   now() -> monotonic seconds;  sleep(s);  run(argv) -> exit code | nil, msg
 *
 * One keep-alive connection for requests and one for watches, each on a
 * reused libcurl easy handle; request_many has its own few, kept by a
 * libcurl multi handle (HTTP/2 streams on one where the server speaks
 * it).  Credentials are handed to libcurl on the
 * first request, not at connect: the hook child, forked in between,
 * never has them.  429 and 5xx are retried with backoff inside the
 * request's timeout, as are connections that fail before anything was
 * sent (and, for idempotent methods, dropped ones).  Messages name the
 * server URL and the path, never a credential.
 */
#ifndef UH_KUBE_H
#define UH_KUBE_H
#include <lua.h>

int luaopen_uphook_kube(lua_State *L);

#endif
