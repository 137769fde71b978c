/* uphook.c.agent: the client of MicroK8s's cluster agent on the other
 * nodes (POST https://<node>:25000/cluster/api/v1.0/configure, as
 * canonical/microk8s@d099c907:scripts/wrappers/distributed_op.py sends it,
 * but verified and in parallel).
 *
 *   open{snap_data=}              -> agent
 *       Reads $SNAP_DATA/credentials/callback-token.txt (else the legacy
 *       callback-tokens.txt, lines "host:port token") into a wiped arena
 *       (arena.h) and the cluster CA $SNAP_DATA/certs/ca.crt.  Never
 *       fails for a missing or bad file: each request then fails with a
 *       message naming it, so a single node needs neither.
 *   agent:configure(reqs, timeout_s) -> results
 *       reqs[i] = {node=, address=, body={service={...}}}: all of them at
 *       once over libcurl's multi interface.  The body is JSON-encoded
 *       here and the token put in as "callback": Lua never holds it.
 *       results[i] = {ok=true} or {ok=false, error={code=<HTTP status or
 *       0>, reason=, message="node <name> (<address>): ...", node=,
 *       address=}} with reason AgentError (the agent's {"error": ...}),
 *       BadAnswer (not {"result": "ok"}, or the connection ended without
 *       an answer), Timeout, and, when the request surely never left,
 *       Unreachable (no connection), TLSError, BadAddress (not an IP, or
 *       two requests to one address), NoToken, NoCA.
 *   agent:close()
 *
 * TLS is always verified against the cluster CA alone (no system CAs),
 * host names included; no proxy is used; nothing is retried.
 */
#ifndef UH_AGENT_H
#define UH_AGENT_H
#include <lua.h>

#define UH_AGENT_PORT 25000

int luaopen_uphook_agent(lua_State *L);

#endif
