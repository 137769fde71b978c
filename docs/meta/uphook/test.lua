---@meta uphook.test
--- uphook.test: the hook-test harness (docs/contract.md §6), LuaLS definitions.
---
--- ```lua
--- local t = require "uphook.test"
--- t.case("1.1.0 -> 1.6.0 keeps Retain", function()
---   local env = t.env { addon = ".", cluster = "fixtures/cluster-1.1.0.yaml" }
---   local r = env:upgrade { "--reclaim-policy=Retain" }
---   t.eq(r.code, 0, r.error)
---   t.eq(env:get("StorageClass", "microk8s-hostpath").reclaimPolicy, "Retain")
--- end)
--- ```
---
--- `uphook test [path...]` runs every `*_test.lua` under the paths; each
--- `t.env` is a fresh mock cluster and a fresh sandbox. Implemented in
--- lua/cmd/test.lua; tests/cli/stubs_test.py checks that the names agree.

---@class uphook.test
local t = {}

---Register a test case. A name a case of the file already has is an
---error naming it.
---@param name string shown in the output and matched by `--filter`
---@param fn fun()
function t.case(name, fn) end

---Run this file's cases one after another, never spread over parallel
---workers (`uphook test --jobs`): for tests that share something outside
---their `t.env`, such as a server.
function t.serial() end

---Register a skipped case: reported as skipped, never silent.
---@param name string
---@param why string
function t.skip(name, why) end

---Register a case that renders with the real Helm (`helm.render`,
---`helm.upgrade`): skipped, saying why, when this uphook has no render
---child or no Helm is found (`uphook test --helm PATH`, `$SNAP/bin/helm`,
---`helm` on PATH); with `CI=true` in the environment that is a failure.
---Since hook API 0.2.
---@param name string shown in the output and matched by `--filter`
---@param fn fun()
function t.helm_case(name, fn) end

---Assert deep equality (tables compared key by key). The message shows
---both values when they are short; else the paths where they differ
---(the first 10, each with both values; differences of
---`metadata.managedFields` listed after those of the fields). Two long
---strings that differ (whole, or at a path) are shown where they first
---differ: with several lines, the line number, both lines and the line
---diff `uphook plan` shows (`-` expected, `+` got; at most 40 changed
---lines); on one line, the character and both strings around it.
---(Since 0.2.0; before, each value was cut to 70 characters.)
---@param actual any
---@param expected any
---@param msg? string prefix of the failure message
function t.eq(actual, expected, msg) end

---Assert that `v` is truthy; returns it.
---@generic T
---@param v T
---@param msg? string
---@return T
function t.ok(v, msg) end

---Assert that `s` is a string matching the Lua pattern.
---@param s any
---@param pattern string
function t.match(s, pattern) end

---Assert that `fn` raises an error matching `pattern` (when given);
---returns the error message.
---@param fn fun()
---@param pattern? string
---@return string message
function t.err(fn, pattern) end

---Render a value for messages (bounded depth and size).
---@param v any
---@return string
function t.repr(v) end

---Deep equality without raising.
---@param a any
---@param b any
---@return boolean equal
---@return string? path where they first differ
function t.deep_equal(a, b) end

---A file to serve for a URL: a fixture path, or `{body=, status=}`.
---@alias uphook.test.Download string|{file?: string, body?: string, status?: integer}

---@class uphook.test.EnvOpts
---@field addon string the addon folder, relative to the test file (`"."` for the test's own folder) and inside its folder, as every path `t.env` takes: no absolute path, no `..`, no symlink leading out
---@field name? string the addon's name, when the folder is not named after it
---@field cluster? string a YAML file of objects seeded into the mock cluster (nodes too); one file: shape a variant with `env:apply`, `env:patch`, `env:delete`
---@field state? {version?: string, params?: table<string, string>, history?: table[]} seeds the state ConfigMap `uphook-<addon>`
---@field args? table<string, string|false> this node's args files by service name (`{kubelet = "--cluster-dns=...\n"}`): each replaces MicroK8s's default file for that service, which every node starts with; `false`: no such file
---@field nodes? (string|uphook.test.Node)[] more nodes of the cluster (Nodes of `cluster` are nodes too): a name, or a table naming the node with its own args files and faults
---@field resolv_conf? table<string, string> this node's `/etc/resolv.conf` and `/run/systemd/resolve/resolv.conf`, as `nodes.resolv_conf()` reads them (default: neither exists)
---@field files? table<string, string> other files by `root:path`, root `args`, `bin`, `plugins` or `state` (`{["bin:helm"] = "..."}`)
---@field certs? string[] the certificates of this node's `$SNAP_DATA/certs/` that `config.exists("certs:<name>")` finds (file names; default: none). Since hook API 0.2
---@field downloads? table<string, uphook.test.Download> what each URL serves
---@field hostname? string the node uphook runs on (default: the first Node of `cluster`)
---@field timeout? number `--timeout` of each run (default 60; mock-clock seconds)
---@field memory_limit? integer `--memory-limit` in MiB (default 256)
---@field state_quota? integer `--state-quota` in bytes (default 16 MiB)
---@field plan_fetch? boolean `plan --plan-fetch`: `env:plan` probes each download
---@field hook? string the hook file in the addon folder (default `upgrade.lua`): a test's stand-in for what `enable` ran, such as a Helm install of an older chart

---A node of `t.env{nodes = ...}`. A name the fixture has no Node for
---gets one: Ready, labelled with its name, InternalIP `10.0.1.<10+i>`
---(i: its place in the list). Its args files start as MicroK8s's
---defaults; its kubelet runs with its kubelet args (what
---`nodes.kubelet_config` shows) until a restart picks up a change.
---@class uphook.test.Node
---@field name string
---@field args? table<string, string|false> its args files by service (replacing the defaults; `false`: none)
---@field address? string its InternalIP (`""`: none)
---@field ready? boolean its Ready condition (default true)
---@field agent? "unreachable"|"tls"|"token"|"down-after-restart"|string its cluster-agent fails every request: no connection (configz fails too), a certificate the cluster CA did not sign, the callback token refused, or `"error: <message>"` (HTTP 500); `"down-after-restart"`: the agent works, but once restarted the node's kubelet never answers again

---A fault for `env:fail`: it fires at a matching change, after `after`
---matches have gone through. With `node`, at that node's change only
---(another node's change is its cluster-agent's request); without, at
---any node's.
---@class uphook.test.Fault
---@field on "kube.apply"|"kube.delete"|"kube.get"|"kube.list"|"kube.watch"|"service.restart"|"config.write"|"config.remove"|"config.install"|"config.set_args" a change, or a read (kube.get/kube.list: code 403/500 fail it, 404 makes the object absent, or a list's kind not served; kube.watch: a rollout's or wait's watch; kube.delete also fires at kube.prune's deletes). A read fault reaches uphook's own reads too (its state ConfigMap `uphook-<addon>`, its Lease, the Node list), which count towards `after`: name `kind` (and `name`) to aim at the hook's
---@field node? string only the change on this node (another node's change is its cluster-agent's request); a name that is not a node of the env is an error
---@field kind? string only objects of this kind
---@field name? string only this object name (the service for `service.restart`, the service of `config.set_args`)
---@field path? string only this `root:path` (config.write, config.remove; for config.install the path relative to its root)
---@field error? string the message (default `injected fault in <on>`)
---@field code? integer the API status code (default 500; 409 reads as the server's Conflict)
---@field namespace? string only objects in this namespace
---@field clear? fun(self) remove this fault
---@field reason? string the Status reason the hook sees in `err.reason` (default by code: 409 `Conflict`, 404 `NotFound`, 422 `Invalid`, 500 `InternalError`...); for another node's change, the agent error's (default `AgentError`; `Unreachable`, `TLSError`: the request was not delivered)
---@field after? integer let this many matches succeed first (0 or more)
---@field times? integer fire at this many matches (default 1; 1 or more)

---The result of `env:upgrade` or `env:plan`.
---@class uphook.test.Result
---@field code integer the exit code uphook would give (docs/contract.md §1)
---@field error? string the error message when the run failed
---@field log string[] every line the hook logged, and errors
---@field plan table[] the recorded plan entries, in order, each with its `step` (lua/engine/plan.lua lists them): `{type="kube", action=, kind=, name=, namespace=, diff=, reason=}`, `{type="file", path=, action=, diff=}`, `{type="download", ...}`, `{type="restart", service=, node=}`, `{type="node_args", node=, address=, service=, changes={{flag=, prior=, how=, new=}}}` (another node's args change), `{type="step", text=}`, `{type="log", level=, text=, phase=}`, `{type="wait", text=, timeout=}`
---@field trace? string the hook's traceback when it raised
---@field noop boolean nothing ran: the addon was already at the hook's version (and no node setting drifted)
---@field from? string the installed version the run found
---@field to? string the hook's version
---@field calls {name: string, args: any[]}[] every primitive the hook called, in order

---A mock world for one hook: cluster, node files, downloads, state.
---@class uphook.test.Env
local Env = {}

---Run `uphook upgrade` on this env.
---@param args? string[] command-line arguments after the addon name
---@return uphook.test.Result
function Env:upgrade(args) end

---Run `uphook plan` on this env: records, changes nothing.
---@param args? string[]
---@return uphook.test.Result
function Env:plan(args) end

---An object of the mock cluster.
---@param kind string
---@param name string
---@param namespace? string
---@return uphook.Object|nil
function Env:get(kind, name, namespace) end

---Shape the cluster before a run, as someone else would have: a
---server-side apply of objects (YAML text, one object or a list) by
---field manager `kubectl` (what `kubectl apply --server-side` does)
---unless `opts.manager` names another (another key of `opts` is an
---error naming it). Returns the stored objects.
---Since hook API 0.2.
---@param objs string|uphook.Object|uphook.Object[]
---@param opts? {manager?: string}
---@return uphook.Object[]
function Env:apply(objs, opts) end

---Shape the cluster before a run: a JSON merge patch of one object (a
---`null` removes a field; lists are replaced), as `kubectl patch --type
---merge`, by field manager `kubectl-patch` unless `opts.manager` names
---another (`kubectl-edit` for an edit, ...). A `null` is `json.null`; an
---absent object, or another key of `opts`, is an error naming it.
---Since hook API 0.2.
---@param kind string
---@param name string
---@param namespace string|nil
---@param patch table
---@param opts? {manager?: string}
---@return uphook.Object
function Env:patch(kind, name, namespace, patch, opts) end

---Shape the cluster before a run: delete one object (true, or false when
---it was absent).
---Since hook API 0.2.
---@param kind string
---@param name string
---@param namespace? string
---@return boolean
function Env:delete(kind, name, namespace) end

---Objects of a kind in the mock cluster (an unknown key of `opts` is an
---error naming it).
---@param kind string
---@param opts? uphook.ListOpts
---@return uphook.Object[]
function Env:list(kind, opts) end

---The saved addon state, or nil when none (`permissions`: those of the last successful upgrade, nil when none are recorded).
---@return {version: string, params: table<string, string>, history: {from: string, to: string, time: string, code: integer, result: string, error?: string}[], permissions: string[]|nil}|nil
function Env:state() end

---Seed the state ConfigMap (what `t.env{state=}` does).
---@param st {version?: string, params?: table<string, string>, history?: table[], permissions?: string[]}
function Env:seed_state(st) end

---A parsed args file of this node, or of another node.
---@param service string
---@param node? string a node's name (default: this node; a name the env has no node of is an error)
---@return table<string, string|true>
function Env:args(service, node) end

---Any mock file by `root:path`; with `node`, another node's `args:` file.
---@param path string
---@param node? string a node's name (a name the env has no node of is an error)
---@return string|nil content
function Env:file(path, node) end

---The services restarted on this node, or on another node, in order,
---across this env's runs (rollbacks too).
---Since hook API 0.2.
---@param node? string a node's name (default: this node; a name the env has no node of is an error)
---@return string[]
function Env:restarts(node) end

---The recorded calls of a primitive across this env's runs: a list of
---argument lists (`env:calls("kube.apply")[1][1]` is the first argument
---of the first call). A name that is not a primitive is an error naming
---it (a typo would otherwise read as "never called").
---@param name string e.g. `"kube.apply"`, `"service.restart"`
---@return any[][]
function Env:calls(name) end

---Inject a fault in a primitive's change or read. An unknown key or `on`,
---a count below 1 (`times`) or 0 (`after`), or a `node` the env does not
---have is an error naming it: such a fault would never fire.
---@param f uphook.test.Fault
---@return uphook.test.Fault the fault: `f:clear()` removes it
function Env:fail(f) end

---Remove every fault `env:fail` injected.
---Since hook API 0.2.
function Env:clear_faults() end

---The node's files (args:, bin:, plugins:, state:), `root:path` -> content; for
---each other node, `"<node> args:<service>"` -> its `key=value` lines
---(what the cluster-agent's rewrite keeps) and `"<node> kubelet"` -> the
---kubelet args it runs with.
---Since hook API 0.2.
---@return table<string, string>
function Env:files() end

---A node's running kubelet configuration (its configz: what the node's
---kubelet last started with), as `nodes.kubelet_config` reads it; nil
---and the error when it does not answer.
---Since hook API 0.2.
---@param node string
---@return table|nil kubeletconfig
---@return string|nil err
function Env:kubelet_config(node) end

---The changes the last run made, in order (what `t.each_fault` faults in
---turn): `{on=, kind=, name=, path=}`.
---Since hook API 0.2.
---@return {on: string, kind?: string, name?: string, path?: string}[]
function Env:changes() end

---Make a rollout never finish: `kube.rollout` times out on the mock clock
---(no real time passes). A Job stays active; with `{fail = true}` it
---fails instead, past its backoffLimit (a chart hook that fails).
---@param kind string
---@param name string
---@param namespace? string
---@param opts? {fail?: boolean}
function Env:stall(kind, name, namespace, opts) end

---Undo `env:stall`.
---@param kind string
---@param name string
---@param namespace? string
function Env:unstall(kind, name, namespace) end

---Every object of the mock cluster without server-set fields (but with
---`metadata.managedFields`: who owns each field is restored too), keyed
---by `apiVersion/kind/namespace/name`: compare two snapshots to assert
---that a rollback restored the cluster exactly. The objects controllers
---make (Pods, ReplicaSets, ControllerRevisions, Endpoints, EndpointSlices)
---are left out unless `opts.controller_made` is true: a real cluster's
---differ from run to run, and a rollback does not restore them.
---@param opts? {controller_made?: boolean}
---@return table<string, uphook.Object>
function Env:snapshot(opts) end

---Copy this world's objects into the world `to` as one install would
---create them: its snapshot (`env:snapshot()`) without managedFields,
---CustomResourceDefinitions first, then Namespaces, then the rest, applied
---by `opts.manager` (default `helm`). Its Nodes stay (`to` has its own),
---and so does uphook's state of this addon; `opts.kinds` copies only the
---kinds it lists. A world where another tool installed the addon is made
---so: run its installer in one world, copy it into the hook's.
---Since hook API 0.2.
---@param to uphook.test.Env the environment copied into
---@param opts? {kinds?: string[], manager?: string}
---@return uphook.Object[] stored what `to` stored
function Env:copy_to(to, opts) end

---A fresh mock world for one hook run. An unknown key (of `o`, `state`,
---a `nodes` entry or a download), or a value of the wrong type, is an
---error naming it.
---@param o uphook.test.EnvOpts
---@return uphook.test.Env
function t.env(o) end

---Fault every change an upgrade makes, in turn, and check that each one
---is rolled back exactly. A first run of `env_fn()` without a fault
---records the changes (applies, deletes, file writes, installs,
---restarts, the state commit); then, for each change, a fresh
---`env_fn()` fails at it, and the upgrade must exit 4 when it was the
---first change (nothing to undo) or 1 after one, with the fault's
---message, leaving the cluster (`env:snapshot()`), the node's files
---(`args:`, `bin:`, `plugins:`, `state:`) and the state as they were.
---Since hook API 0.2.
---@param env_fn fun(): uphook.test.Env a fresh env each call
---@param opts? {args?: string[]} the upgrade's command-line arguments (another key is an error naming it)
---@return integer changes the number of changes faulted
function t.each_fault(env_fn, opts) end

return t
