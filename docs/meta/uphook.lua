---@meta
--- uphook hook environment: LuaLS definitions (`---@meta`, never run).
---
--- The globals an `upgrade.lua` hook sees (docs/contract.md §3, §4), as the sandbox
--- builds them (host/child.c) and the broker implements them
--- (lua/engine/prims/). Installed to `$(PREFIX)/share/uphook/meta/`; point
--- lua-language-server's `workspace.library` there (docs/luarc.json).
---
--- tests/cli/stubs_test.py compares every function below with the names
--- the sandbox registers and the broker handles, and fails on drift.
---
--- Besides these, a hook has the Lua standard library minus everything
--- that reaches the outside world. Exactly these names (the allow list
--- of host/child.c; checked by the same test):
-- allow basic: _G _VERSION assert collectgarbage error getmetatable ipairs load next pairs pcall rawequal rawget rawlen rawset require select setmetatable tonumber tostring type xpcall
-- allow string: byte char find format gmatch gsub len lower match pack packsize rep reverse sub unpack upper
-- allow table: concat insert move pack remove sort unpack
-- allow math: abs ceil cos deg exp floor fmod huge log max maxinteger min mininteger modf pi rad random randomseed sin sqrt tan tointeger type ult
-- allow utf8: char charpattern codepoint codes len offset
-- allow coroutine: close create isyieldable resume running status wrap yield
--- Changed on the way in: `load` compiles text only (binary chunks are
--- refused) and takes no `mode`; `setmetatable` refuses `__gc`;
--- `collectgarbage` answers only `"count"`; `require` loads the
--- standard library (`semver`, `migrate`, `manifest`, `retry`, `ip`, `values`) and the
--- `.lua` files of the addon's own folder; `string.rep` of empty strings
--- returns at once. Gone: `print` (use `log.info`), `dofile`,
--- `loadfile`, `string.dump`, `io`, `os`, `debug`,
--- `package`. Globals are strict: reading or assigning an undeclared
--- global is an error.

-- Types ---------------------------------------------------------------------

---What a primitive raises when its request failed in the world: the API
---server refused it (`kube.*`), a transfer failed (`net.*`), a file of
---the node could not be read or written (`config.*`, `hash.file`,
---`addon.read`), or a wait ran out (`kube.rollout`, `kube.wait`).
---`tostring(err)` is `err.message`; `error(err)` re-raises it unchanged;
---an uncaught one ends the phase with its message
---(`upgrade failed: deployments.apps "x" is invalid: ...`).
---
---```lua
---local retry = require "retry"
---retry(function() return kube.apply(objs) end,
---      { attempts = 5, retry_on = function(err) return err.code == 409 end })
---local ok, err = pcall(kube.get, "IPAddressPool", "default", "metallb-system")
---if not ok and err.reason == "NotFound" then ... end   -- the CRD is not there yet
---```
---
---Misuse of a primitive (a bad argument, a missing permission, a change
---outside `upgrade`, the data-loss guard) raises a plain string: a bug in
---the hook, not a condition to handle. `err.code` and `err.reason` read
---as nil on a string, so the checks above need no `type(err)` test.
---Messages never carry uphook's own source positions.
---@class uphook.Error
---@field reason string kube: the server's Status reason (`NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, `Forbidden`, `BadRequest`, `InternalError`, ...); net: `HTTPError`, `NetworkError`, `Timeout`, `ChecksumMismatch`, `TooLarge`, `Forbidden` (a refused redirect); config: `IOError`; waits: `Timeout`
---@field message string the readable message, naming the object, URL or file (for kube, the server's own: `deployments.apps "x" not found`)
---@field code? integer the HTTP status (kube: the Status code, 404, 409, 422...; net: the status of an `HTTPError`)
---@field details? table kube: the Status details as the server sent them: `{name=, group=, kind=, causes = {{reason=, message=, field=}, ...}}` (the causes of a 422 Invalid)
---@field url? string net: the URL asked for
---@field path? string config: the file, as `root:relative`

---A Kubernetes object as a Lua table: the API's JSON, field for field.
---@class uphook.Object
---@field apiVersion string
---@field kind string
---@field metadata uphook.ObjectMeta
---@field spec? table
---@field status? table
---@field data? table<string, string>
---@field [string] any

---@class uphook.ObjectMeta
---@field name string
---@field namespace? string
---@field labels? table<string, string>
---@field annotations? table<string, string>
---@field uid? string
---@field resourceVersion? string
---@field generation? integer
---@field [string] any

---One entry of `kube.apply`'s result.
---@class uphook.ApplyResult
---@field kind string
---@field name string
---@field namespace? string
---@field action "created"|"configured"|"unchanged"

---@class uphook.ApplyOpts
---@field namespace? string fills in a missing `metadata.namespace` (namespaced kinds only)

---@class uphook.ListOpts
---@field namespace? string only this namespace (default: all)
---@field labels? table<string, string> label selector, every pair must match (`{app = "x"}`)

---@class uphook.DeleteOpts
---@field allow_data_loss? boolean needed to delete a PersistentVolume, PersistentVolumeClaim, Namespace or CustomResourceDefinition; `plan` lists such deletions under DATA LOSS

---@class uphook.PruneOpts
---@field kinds string[] the kinds to look at: `Kind` or `group/version/Kind` (1 to 64)
---@field labels? table<string, string> the selector (default `{["addon.microk8s.io/name"] = <addon>}`); every pair must match
---@field namespace? string only this namespace (default: every namespace, each object needing its permission)
---@field keep? ({kind: string, name: string, namespace?: string}|uphook.Object)[] objects to keep although this run did not apply them
---@field allow_data_loss? boolean needed to prune a PersistentVolume, PersistentVolumeClaim, Namespace or CustomResourceDefinition; listed under DATA LOSS

---@class uphook.RolloutOpts
---@field timeout? number seconds (default 300, never past `--timeout`)

---@class uphook.WaitOpts
---@field condition string the condition type that must become `"True"` (`Established`, `Available`, ...)
---@field timeout? number seconds (default 300, never past `--timeout`)

---@class uphook.DownloadOpts
---@field sha256? string expected SHA-256, 64 hex digits (this or `sha256_url` is required)
---@field sha256_url? string a checksum file (GNU `sum  name` or BSD `SHA256 (name) = sum`), matched by the URL's file name; needs its own `net:` permission
---@field max_bytes? integer size cap (default 2 GiB)

---@class uphook.FetchOpts
---@field sha256? string when given, the body must hash to it
---@field max_bytes? integer size cap (default 16 MiB)

---@class uphook.WriteOpts
---@field mode? string octal permission string such as `"0600"` (default: an existing file's own mode, `"0644"` for a new one; an existing file keeps its owner and group either way). Never world-writable, and group-writable only when the file's group is the snap's (`microk8s`, `snap_microk8s`); the plan shows the mode
---@field nodes? "this" an `args:` file on a cluster of several nodes: change this node's copy only (otherwise refused there; the plan warns that every node needs its own run)

---@class uphook.InstallOpts
---@field mode? string octal permission string (default: an existing file's own mode, `"0644"` for a new one; `"0755"` for binaries). The same rules as `config.write`'s
---@field nodes? "this" an `args:` file on a cluster of several nodes: change this node's copy only (otherwise refused there; the plan warns that every node needs its own run)

---Which nodes a node-setting change goes to.
---@class uphook.SetArgsOpts
---@field nodes? "all"|"this"|string[] every node of the cluster (the default), this node only, or the nodes named in the list (this node's name included or not; a name that is no node's is an error)
---@field assume? boolean `false`: a node whose prior value cannot be read (its kubelet's configz does not show the flag, or the service is not the kubelet) gets the change whatever it has, and counts as changed. By default such a node is assumed to have this node's value.

---@class uphook.RestartOpts
---@field nodes? "all"|"this"|"changed"|string[] every node (the default), this node only, the nodes whose args this run changed, or the nodes named in the list

---A Helm release as `helm.release` and `helm.upgrade` return it.
---@class uphook.HelmRelease
---@field name string
---@field namespace string
---@field revision integer
---@field status string `deployed` (what `helm.release` reads; a lower revision may be `pending-*`, see `pending`)
---@field chart {name: string, version: string, app_version?: string}
---@field values? table the user's values: only under a granted `kube:<namespace>`, never under plan
---@field pending? {revision: integer, status: string} a higher revision left `pending-install`, `pending-upgrade`, `pending-rollback` or `failed` by an earlier Helm run

---@class uphook.HelmSpec
---@field release string the release name (at most 53 characters, a DNS label)
---@field namespace string the release namespace
---@field chart string a packaged chart in the addon's folder (`charts/x-1.2.3.tgz`), or what `net.download` returned
---@field values? table the values, given explicitly (default `{}`: the chart's defaults)

---@class uphook.HelmUpgradeSpec: uphook.HelmSpec
---@field install? boolean create the release when it does not exist (default: an error)
---@field timeout? number seconds for this call's waits together: CRDs Established, chart hooks, rollouts (default 300, never past `--timeout`)

---An entry of `nodes.list()`.
---@class uphook.Node
---@field name string
---@field ready boolean the Ready condition is True
---@field roles string[] from the `node-role.kubernetes.io/<role>` labels, sorted
---@field arch? string label `kubernetes.io/arch` (`amd64`, `arm64`, ...)
---@field os? string label `kubernetes.io/os`
---@field kubelet_version? string `status.nodeInfo.kubeletVersion`
---@field labels table<string, string>
---@field addresses {type: string, address: string}[]
---@field unschedulable boolean

---The YAML/JSON null (a light userdata): `yaml.null == json.null`.
---@class uphook.null: lightuserdata

-- The hook file ------------------------------------------------------------------

---A declared parameter of the addon, as enable takes it: `--name=value`,
---`--name value`, and with `short`, `-s value` or `-svalue`. Every value
---is a string. A value given on the command line that `choices`,
---`pattern` or `check` refuses is exit 2; a saved (or detected) value
---they refuse stops the run with exit 4 naming the ConfigMap, until the
---user gives the parameter or `--reset-params`. `pattern` and `check`
---are hook code: they run in the hook's confined child, never in uphook.
---A parameter may not take the name of one of uphook's long options
---(`timeout`, `yes`, `dry-run`...: exit 4 on load).
---A flag (`type = "flag"`) takes no value after it, as enable's
---`--skip-kubebench-installation` does: `--name` (or `-s`) sets "true",
---`--name=false` sets "false", and any other value is exit 2; it is
---"false" when not given unless its `default` is "true", and is saved
---like any other parameter.
---@class uphook.Param
---@field type? "string"|"flag" "string" (the default) or "flag", a boolean switch whose value is "true" or "false"; a flag takes no `choices` or `pattern`. Since hook API 0.2
---@field default? string the value when neither saved state nor the command line gives one
---@field choices? string[] the only values accepted (others: exit 2)
---@field short? string one letter or digit: `short = "r"` makes `-r Retain` and `-rRetain` work, as enable's getopt does
---@field description? string one line for `uphook upgrade <addon> --help`
---@field pattern? string a Lua pattern the whole value must match (`"%d+Gi"`; `^` and `$` are implied)
---@field check? fun(value: string, ctx: {addon: string, params: table<string, string>}): (ok: boolean|nil, message: string|nil) refuse by returning `false, "why"` or raising; anything else accepts. Read-only, like `check`

---What `upgrade.lua` returns (docs/contract.md §3). The host checks it on load: a
---missing or mistyped field is exit 4 naming the field.
---
---**API versions.** The hook API has versions (this uphook: 0.2; each item
---below says the version it appeared in, CHANGELOG.md what each version
---changed). A hook declares the API it is written for with `uphook`, a
---version range: `uphook = ">=0.2"`. A hook without it is written for API
---0.1. A hook that needs a newer uphook than the one running is refused on
---load (exit 4; `uphook lint` too), naming both versions and the fix,
---refreshing the snap. A convenience an API version removes keeps
---working for hooks of the older API, with one warning per use (in
---`upgrade`, `plan` and `uphook test`) naming the hook's file and line and
---the new form; a permission, confinement or data-loss rule holds for
---every API version (docs/guide.md "Migrating hooks").
---@class uphook.Hook
---@field uphook? string the hook API it is written for, a version range: `">=0.2"` (API 0.2). Absent: API 0.1, whose deprecated conveniences work with a warning. A range no API of this uphook satisfies is exit 4 ("refresh the snap"); one that is no range is exit 4 naming the field. Since hook API 0.2
---@field version string the version this hook installs (semver)
---@field from string the installed versions it upgrades (npm-style range, e.g. `">=1.1.0 <1.4.2"`)
---@field description? string one line shown by `uphook list` and `plan`
---@field permissions string[] everything the hook may change: `kube:<namespace>`, `kube:*`, `kube:cluster`, `kube:privileged`, `net:<host>`, `net:http://<host>`, `args:<service>`, `bin:<file>`, `plugins:<file>`, `restart:kubelite`, `restart:microk8s.daemon-<name>`
---@field params? table<string, uphook.Param> the addon's user parameters
---@field positional? (string|{name: string, description?: string})[] the positional arguments it takes, in order, e.g. `{ "nameservers", "dnsip", "domain" }`; a last name ending in `...` takes all the rest. More arguments than declared, or any when none is declared, are exit 2 (for a hook of API 0.1, a warning, and `ctx.positional` holds them all). Values are in `ctx.positional`. Since hook API 0.2
---@field detect? fun(ctx: uphook.Ctx): (version: string|nil, params: table<string, string>|nil) the installed version when no state records it (nil: not installed), and optionally the parameters read back from the cluster, used in place of saved ones; read-only
---@field check? fun(ctx: uphook.Ctx) preflight: raise to stop before any change (exit 4); read-only
---@field upgrade fun(ctx: uphook.Ctx) the changes; an error rolls every journaled change back (exit 1)
---@field verify? fun(ctx: uphook.Ctx) post-checks and waits, read-only; an error rolls back (exit 1)

---The context every phase receives. It is a fresh copy for each phase:
---what a phase stores in it is not seen by the next one (keep such data in
---a local of the hook file instead).
---@class uphook.Ctx
---@field addon string the addon's name
---@field from string|nil the installed version (nil in `detect`, which finds it)
---@field to string the hook's `version`
---@field params table<string, string>|nil merged parameters: declared defaults, then saved (or detected) ones, then the command line (nil in `detect`)
---@field args string[] the hook's command line: the arguments after the addon name (or after its colon, `dns:1.1.1.1:10.152.183.10`), without uphook's own long options
---@field positional string[] the positional arguments, as the hook's `positional` declares them (`dns 1.1.1.1,8.8.8.8`)
---@field given table<string, true> the parameters given on this command line (by name), as opposed to saved, detected or default ones
---@field reset_params boolean `--reset-params` was given: the saved parameters are not used
---@field plan boolean true under `uphook plan`: mutating primitives only record
---@field dir string the addon folder (absolute path; for messages, files are read with `addon.read`)

-- kube ---------------------------------------------------------------------

---The Kubernetes API. Kinds are a Kind (`Deployment`) or
---`group/version/Kind` (`apps/v1/Deployment`, `v1/ConfigMap`) to pin a
---version. Cluster-scoped objects take namespace nil; a namespaced object
---without a namespace is in `default`, as kubectl sends it. Names and
---namespaces are checked as the API server checks them before any request
---(a DNS-1123 subdomain for most kinds, a label for a Namespace, a
---DNS-1035 label for a Service, any path segment for RBAC objects): an
---invalid one is an error naming it. Reads need no permission except of
---Secrets, which need `kube:<namespace>` (`kube:*` to list every
---namespace's). The ConfigMaps and Leases `kube-system/uphook-<addon>` are
---uphook's own (state and lock): no hook writes them.
kube = {}

---✎ Server-side apply (field manager `uphook`, conflicts forced). Every
---object gets the label `addon.microk8s.io/name=<addon>` and the
---annotation `addon.microk8s.io/version=<to>`. Needs `kube:<namespace>`
---(or `kube:*`), `kube:cluster` for cluster-scoped objects, and also
---`kube:privileged` for a pod or pod template that the Pod Security
---Standards baseline forbids (privileged, host namespaces, hostPath,
---hostPort, capabilities beyond baseline's, unconfined seccomp, AppArmor
---or SELinux, procMount, unsafe sysctls) and for RBAC that hands out
---everything (a binding to `cluster-admin`, `admin`, `edit` or to a role
---with `*` rules, and such a role): the plan names each. Journaled;
---under plan a server dry run.
---@param objs string|uphook.Object|uphook.Object[] a YAML string (one or many documents), one object or a list
---@param opts? uphook.ApplyOpts
---@return uphook.ApplyResult[]
function kube.apply(objs, opts) end

---Read one object. Until the user's yes a Secret of a namespace not yet
---granted comes without `data` and `stringData` (docs/security.md, "Consent").
---@param kind string
---@param name string
---@param namespace? string
---@return uphook.Object|nil obj nil when absent
function kube.get(kind, name, namespace) end

---List objects of a kind. Until the user's yes, Secrets as `kube.get` gives them.
---@param kind string
---@param opts? uphook.ListOpts
---@return uphook.Object[]
function kube.list(kind, opts) end

---✎ Delete one object. Refuses PersistentVolume, PersistentVolumeClaim,
---Namespace and CustomResourceDefinition unless `opts.allow_data_loss`;
---with it, a live upgrade asks the user at that moment (the object shown;
---`--allow-data-loss` answers without a terminal; `--yes` never does)
---and a refusal raises, which rolls the run back. Journaled: a rollback recreates it.
---@param kind string
---@param name string
---@param namespace? string
---@param opts? uphook.DeleteOpts
---@return boolean deleted false when it was already absent
function kube.delete(kind, name, namespace, opts) end

---✎ Delete what the new version no longer ships, as Helm deletes what a
---release dropped: every object of `opts.kinds` that carries the label
---`addon.microk8s.io/name=<addon>` (or matches `opts.labels`) and that
---this run did not apply. Call it last in `upgrade`, after every
---`kube.apply` of the version's objects:
---
---```lua
---kube.apply(manifest.load("storage.yaml", vars))
---kube.prune { kinds = { "Deployment", "ConfigMap", "ServiceAccount",
---  "rbac.authorization.k8s.io/v1/ClusterRole",
---  "rbac.authorization.k8s.io/v1/ClusterRoleBinding" } }
---```
---
---Each delete is an ordinary `kube.delete`: it needs the permission of
---its namespace (`kube:cluster` for cluster-scoped kinds; an object in a
---namespace the hook did not declare stops the run), the data-loss kinds
---(PersistentVolume, PersistentVolumeClaim, Namespace,
---CustomResourceDefinition) need `opts.allow_data_loss`, it is journaled
---(a rollback recreates it) and the plan lists it as `- Kind ns/name
---(deleted): no longer in <addon> <version>`. Only the kinds listed are
---looked at (never "every kind"); a kind the cluster does not serve has
---nothing to prune. uphook's state ConfigMap and Lease are never pruned.
---Objects made by `enable` before uphook carry no uphook label: select
---them with `labels` (the addon's own labels, such as `{["k8s-app"] =
---"kube-dns"}`), and name any that must stay in `keep`.
---Since hook API 0.2.
---@param opts uphook.PruneOpts
---@return {kind: string, name: string, namespace?: string}[] deleted what was deleted (under plan: would be)
function kube.prune(opts) end

---Wait until a Deployment, DaemonSet or StatefulSet finished rolling out
---(observedGeneration caught up, every replica updated and available), as
---`kubectl rollout status` decides. On timeout the error names the object
---and its last status (`2/3 replicas updated`). Under plan: recorded, returns at once.
---@param kind "Deployment"|"DaemonSet"|"StatefulSet"|string
---@param name string
---@param namespace? string
---@param opts? uphook.RolloutOpts
---@return true
function kube.rollout(kind, name, namespace, opts) end

---Wait until `opts.condition` of the object is `"True"`. On timeout the
---error names the object and the condition last seen. Under plan:
---recorded, returns at once.
---@param kind string
---@param name string
---@param namespace? string
---@param opts uphook.WaitOpts
---@return true
function kube.wait(kind, name, namespace, opts) end

-- helm -----------------------------------------------------------------------

---Helm releases (docs/guide.md, "Helm addons"). Helm renders, uphook
---writes: the chart is rendered by `helm template` in a confined child
---(no network, no cluster, no credentials: docs/security.md "The render
---child"), and every object it renders goes through the checks of
---`kube.apply` (permissions, `kube:privileged`, data loss, the journal,
---the plan). The release stays a normal Helm release, in Helm's own
---Secret storage, that `helm list/history/get values/rollback/uninstall`
---keep working on. No permission word of its own: the objects need what
---`kube.apply` needs, the release Secret `kube:<release namespace>`.
---Helm is `--helm PATH`, else `$SNAP/bin/helm`, else `helm` on PATH.
helm = {}

---A release: the highest-numbered revision whose status is `deployed`
---(read from its `sh.helm.release.v1.<name>.v<N>` Secret; when none
---ever was, the newest pending or failed one, with that status), or
---`nil` when there is none. `values` are what the user supplied (`helm get
---values`), a table the hook may change; they often hold passwords, so
---they are there only under the hook's `kube:<namespace>` once the user
---said yes to it: recorded by an earlier upgrade, or asked by this one
---(from `check` on; `detect` runs before the question). Before that they
---are `nil`, and a plan says "values: shown after your yes"; a plan shows
---which value keys change, never their values. The rest needs no grant. A release Helm stored
---in ConfigMaps (`HELM_DRIVER=configmap`) is an error: uphook supports
---the Secret driver only. Allowed in every phase.
---Since hook API 0.2.
---@param name string the release
---@param namespace string
---@return uphook.HelmRelease|nil
function helm.release(name, namespace) end

---The objects the chart renders (CRDs, objects, chart hooks), for checks
---and migrations: changes nothing. Allowed in every phase.
---Since hook API 0.2.
---@param spec uphook.HelmSpec
---@return uphook.Object[]
function helm.render(spec) end

---✎ Upgrade (or, with `install = true`, install) a release to a chart:
---render it twice (a value the chart generates, `randAlphaNum`,
---`genCA`, `lookup`, keeps its live value: "kept: generated by the
---chart"); run the chart's `pre-upgrade` hooks (`pre-install` when
---installing) in Helm's order, waiting for Jobs; apply the CRDs (the
---`crds/` folder too) and wait until Established; apply the rest in
---Helm's install order; delete what the previous revision had and this
---one lacks (never what is annotated `helm.sh/resource-policy: keep`;
---the data-loss rules of `kube.delete` hold); wait until its
---Deployments, DaemonSets and StatefulSets roll out (`kube.rollout`'s
---rules, as `helm upgrade --wait`); run the `post-` hooks;
---and write the new revision Secret last (status `deployed`, the one
---before `superseded`, at most 10 revisions kept), in Helm's format.
---Objects get Helm's ownership marks (`app.kubernetes.io/managed-by:
---Helm`, `meta.helm.sh/release-name`, `meta.helm.sh/release-namespace`),
---so a manifest install is adopted (the plan says so); an object whose
---immutable field the chart changed (a selector) is deleted and created
---again (never a data-loss kind: that is an error); an object another
---release owns is an error before any change. The templates see the
---cluster's `.Capabilities`: its Kubernetes version (the nodes' kubelet)
---and the APIs it serves as discovery says them (those its CRDs and
---APIServices add among them, as `helm upgrade` sees them), with the
---CRDs of the chart's `crds/` folder. Values are given explicitly: nothing
---is reused (see the standard library's `values`). A release left
---pending by an earlier Helm run is superseded. The release is read from
---a metadata-only list of its Secrets (their labels say each revision
---and its status) and the one record it needs, read whole once per run
---(`helm.release` in `detect` and `upgrade` and `helm.upgrade` share it
---while its resourceVersion holds); the previous revision is superseded
---under the resourceVersion it was read at, so a change another client
---made since fails the upgrade instead of being overwritten (that Secret
---is left as it is, exit 6). Everything is journaled:
---a failure rolls every change back and no new revision remains. Under
---plan: the chart from and to, the changed value keys, each object's
---diff, the prunes and the hooks; the release table it would write.
---Since hook API 0.2.
---@param spec uphook.HelmUpgradeSpec
---@return uphook.HelmRelease release the new revision
function helm.upgrade(spec) end

-- net ------------------------------------------------------------------------

---Downloads. https only, unless the hook declares `net:http://<host>`; at
---most 5 redirects, each to a declared host, and from https to plain http
---only where `net:http://<that host>` is declared; a host that resolves to
---a loopback, link-local or metadata address (127.0.0.0/8, ::1,
---169.254.0.0/16, fe80::/10, ...) is refused unless the permission names
---that address literally (`net:127.0.0.1:8443`); private ranges are
---allowed; proxies from the usual environment variables.
net = {}

---✎ Download a verified file into the sha256 cache (a rerun downloads
---nothing). Needs `net:<host>`. On a checksum mismatch the file is
---removed and the error shows both sums. Under plan: nothing is
---downloaded (`--plan-fetch` checks the URL answers).
---@param url string
---@param opts uphook.DownloadOpts
---@return string token `"cache:<sha256>"`, for `config.install` and `hash.file`
function net.download(url, opts) end

---Fetch a small document into memory. Needs `net:<host>`. Allowed in every phase;
---until the user's yes only to a host already granted, else the error
---`withheld until your yes` (docs/security.md, "Consent").
---@param url string
---@param opts? uphook.FetchOpts
---@return string body
function net.fetch(url, opts) end

-- hash -------------------------------------------------------------------------

---Checksums.
hash = {}

---SHA-256 of a string (computed in the hook, no broker call).
---@param s string
---@return string hex lowercase, 64 digits
function hash.sha256(s) end

---SHA-256 of a file: a `root:path` (see `config`) or a `net.download` token.
---@param path string
---@return string hex lowercase, 64 digits
function hash.file(path) end

-- config -----------------------------------------------------------------------

---Files on the node. Paths are `root:relative` and never leave their
---root (no `..`, no absolute paths, symlinks not followed out):
---`args:` = `$SNAP_DATA/args/` (write needs `args:<service>`),
---`bin:` = `$SNAP_DATA/bin/` (write needs `bin:<file>`),
---`plugins:` = `$SNAP_COMMON/plugins/`, where `microk8s <name>` finds a
---plugin such as `kube-bench` (write needs `plugins:<file>`; uphook makes
---the folder when it is missing; this node only, as `bin:`),
---`addon:` = the addon folder (read-only),
---`certs:` = `$SNAP_DATA/certs/`, for `config.exists` only,
---`state:` = this addon's private folder under the state dir, its own
---and not a same-named addon's of another repository (read/write, no
---permission; what it holds is bounded by `--state-quota`, 16 MiB by
---default, each file and folder counting at least 4 KiB).
config = {}

---Read a file.
---@param path string `root:relative`
---@return string|nil content nil when the file does not exist
function config.read(path) end

---Does the certificate `$SNAP_DATA/certs/<name>` exist on this node (a
---regular file)? It reveals existence only, never content, size or mode,
---so it needs no permission and is allowed in every phase: a hook can
---refuse before it points a flag at a certificate that is missing (a
---kube-apiserver that cannot read its client certificate does not
---start). `certs:` is no root of the other `config` functions: a
---certificate's key is never read. A name with `/` or `..` is an error
---naming the argument.
---Since hook API 0.2.
---@param path string `"certs:<name>"`, e.g. `"certs:front-proxy-client.crt"`
---@return boolean exists
function config.exists(path) end

---✎ Write a file atomically (temporary file, fsync, rename). Journaled:
---a rollback restores the previous content. Writing the content it
---already has changes nothing.
---@param path string `root:relative`
---@param content string
---@param opts? uphook.WriteOpts
function config.write(path, content, opts) end

---✎ Remove a file. Journaled.
---@param path string `root:relative`
---@param opts? {nodes?: "this"} as `uphook.WriteOpts`'s `nodes`
---@return boolean removed false when it was already absent
function config.remove(path, opts) end

---✎ Put a downloaded file in place atomically. Journaled: the previous
---file is backed up for the rollback.
---@param downloaded string the token `net.download` returned
---@param path string `root:relative` destination (`bin:` usually)
---@param opts? uphook.InstallOpts
function config.install(downloaded, path, opts) end

---Parse an args file of `$SNAP_DATA/args/` (`--flag=value`, `--flag
---value` or bare `--flag` lines; comments ignored). A missing file is an
---empty table. With `node` (another node's name) it returns what uphook
---can know of that node's file, since no API reads it: this node's
---values, with each flag the node's kubelet configz shows read from it
---(kubelet only); the second result says which: `"read"` or
---`"assumed"` (this node's value). For this node every flag is `"read"`.
---@param service string e.g. `"kubelet"`, `"kube-apiserver"`
---@param node? string a node's name (default: this node)
---@return table<string, string|true> flags `{["--flag"] = "value" | true}`
---@return table<string, "read"|"assumed"> how
function config.args(service, node) end

---✎ Edit an args file on every node of the cluster (as MicroK8s'
---`refresh_opt_in_config` does), or on this node with `{nodes = "this"}`.
---Needs `args:<service>`. This node: the file directly, other lines,
---comments and order kept. Other nodes: their cluster-agent
---(`POST :25000/cluster/api/v1.0/configure`), all at once, each change
---journaled first with the node's prior value (from its kubelet configz
---where it shows the flag, else this node's: "assumed"; `false` when
---absent). A node receives exactly the flags whose prior differs from the
---new value, as the plan shows them. Returns true
---when any node changed: this node's file, or another node whose known
---prior differs from the new value. On a cluster of several nodes,
---`config.write` and `config.remove` of `args:` files are refused.
---@param service string
---@param changes table<string, string|boolean> `--flag` to a string (set), true (bare flag) or false (remove)
---@param opts? uphook.SetArgsOpts
---@return boolean changed false when no node's file changed
function config.set_args(service, changes, opts) end

-- nodes and services -------------------------------------------------------------

---The cluster's nodes.
nodes = {}

---Every node of the cluster.
---@return uphook.Node[]
function nodes.list() end

---The node uphook runs on (matched by name or the
---`kubernetes.io/hostname` label); an error when none matches.
---@return uphook.Node
function nodes.this() end

---The running configuration of a node's kubelet (`GET
---/api/v1/nodes/<name>/proxy/configz`): the `kubeletconfig` object,
---`{clusterDNS = {...}, clusterDomain = "...", resolvConf = "...",
---authentication = {webhook = {enabled = true}}, ...}`. It shows what the
---kubelet runs with since its last start, not its args file. An error
---naming the node when it does not answer.
---Since hook API 0.2.
---@param name string the node's name
---@return table kubeletconfig
function nodes.kubelet_config(name) end

---This node's resolv.conf with upstream nameservers, chosen as MicroK8s'
---`find-resolv-conf.py` does: the first of `/etc/resolv.conf` and
---`/run/systemd/resolve/resolv.conf` whose nameservers are all valid,
---non-loopback addresses; nil when neither is (`microk8s enable dns`
---then falls back to 8.8.8.8 8.8.4.4). Read-only.
---Since hook API 0.2.
---@return string|nil path
function nodes.resolv_conf() end

---MicroK8s services on this node.
service = {}

---✎ Restart `kubelite` or a `microk8s.daemon-*` service (through
---`snapctl restart`), on every node by default. Needs `restart:<name>`.
---The nodes roll one at a time: the other nodes first, through their
---cluster-agent, each Ready again with its kubelet answering before the
---next; this node last, then uphook waits (within `--timeout`) until the
---API server answers again. `{nodes = "changed"}` restarts only the nodes
---whose args this run changed ("restart where a line changed"). A
---rollback restarts again every node whose args it restored.
---@param name string `"kubelite"` or `"microk8s.daemon-<name>"`
---@param opts? uphook.RestartOpts
function service.restart(name, opts) end

-- addon, data, log ---------------------------------------------------------------

---The addon's own folder.
addon = {}

---Content of a file in the addon's folder (manifests, templates); an
---error naming the addon when it does not exist.
---@param relpath string
---@return string
function addon.read(relpath) end

---YAML as Kubernetes reads it (`yes`, `on`, `true` are booleans; quoted
---scalars are strings); the encoder quotes every string that would
---resolve to something else (`"yes"`, `"1.0"`, `"0755"`, `""`). Decoded
---sequences stay sequences when re-encoded, even empty ones.
yaml = {}

---Decode one YAML document.
---@param s string
---@return any
function yaml.decode(s) end

---Decode every document of a YAML stream.
---@param s string
---@return any[]
function yaml.decode_all(s) end

---Encode one value as a YAML document.
---@param v any
---@return string
function yaml.encode(v) end

---Encode a list of values as a multi-document YAML stream.
---@param list any[]
---@return string
function yaml.encode_all(list) end

---Mark a table as a sequence, so that it encodes as `[]` even when empty.
---@generic T: table
---@param t? T a new empty table when nil
---@return T t the same table
function yaml.array(t) end

---Whether a table encodes as a sequence (marked, or keys exactly 1..n).
---@param t any
---@return boolean
function yaml.isarray(t) end

---The null value (`~`, `null`): the same value as `json.null`.
---@type uphook.null
yaml.null = nil

---JSON (jansson), with the same null and array conventions as `yaml`.
json = {}

---Decode a JSON text.
---@param s string
---@return any
function json.decode(s) end

---Encode a value as compact JSON.
---@param v any
---@return string
function json.encode(v) end

---Mark a table as an array, so that it encodes as `[]` even when empty.
---@generic T: table
---@param t? T a new empty table when nil
---@return T t the same table
function json.array(t) end

---Whether a table encodes as an array.
---@param t any
---@return boolean
function json.isarray(t) end

---The null value: the same value as `yaml.null`.
---@type uphook.null
json.null = nil

---Output for the user, formatted with `string.format`. Control
---characters in it are escaped in human output (`\x1b`, `\n`); JSON
---events carry the text as it is.
log = {}

---An information line; in a plan, shown under its step (say there what
---a user should know: "its volumes are not touched").
---@param fmt string
---@param ... any
function log.info(fmt, ...) end

---A warning: on stderr as it happens, and in the plan's body under its
---step (also from `detect` and `check`).
---@param fmt string
---@param ... any
function log.warn(fmt, ...) end

---A numbered step heading; also a heading in the plan.
---@param fmt string
---@param ... any
function log.step(fmt, ...) end

-- internal -----------------------------------------------------------------------

---Host internals used by the standard library. Not for hooks.
---@package
__uphook = {}

---Sleep (the mock clock under `uphook test`: costs no real time). Used by
---`retry`; bounded by `--timeout`.
---@package
---@param seconds number
function __uphook.sleep(seconds) end

---A deprecated convenience the standard library met (`manifest.load`'s
---placeholder in YAML structure position): true, with one warning naming
---`where`, when the hook's API keeps it; false when it must fail
---(docs/reference.md "API versions").
---@package
---@param key "manifest_structure"
---@param where string the hook's file and line
---@param detail? string
---@return boolean kept
function __uphook.deprecated(key, where, detail) end
