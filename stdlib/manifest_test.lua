-- Tests for stdlib/manifest.lua. `addon` and `yaml` are fakes injected
-- through the module's test seams (manifest.addon, manifest.yaml), so
-- these run under lua5.4 too, where the C yaml codec is not available.
local t = require "uphook.test"
local manifest = require "manifest"

local NULL = setmetatable({}, { __name = "null" })
local files, decoded_input, decode_result = {}, nil, nil
manifest.addon = {
  read = function(rel)
    if files[rel] == nil then error("addon.read: no file " .. rel, 0) end
    return files[rel]
  end,
}
manifest.yaml = {
  null = NULL,
  decode_all = function(s)
    decoded_input = s
    if s:find("BAD", 1, true) then error("line 3: mapping values are not allowed", 0) end
    return decode_result
  end,
}

t.case("expand: $NAME and ${NAME}", function()
  t.eq(manifest.expand("ns: $NS\nname: ${NAME}-x\n", { NS = "kube-system", NAME = "dns" }),
       "ns: kube-system\nname: dns-x\n")
  t.eq(manifest.expand("$A$B${A}", { A = "1", B = 2 }), "121")
  t.eq(manifest.expand("v: $ON", { ON = true }), "v: true")
  t.eq(manifest.expand("$NAME_2 $NAME", { NAME_2 = "x", NAME = "y" }), "x y")
  t.eq(manifest.expand("${A}B", { A = "a" }), "aB")
  t.eq(manifest.expand("no placeholders"), "no placeholders")
  t.eq(manifest.expand(""), "")
end)

t.case("expand: literal dollars", function()
  t.eq(manifest.expand("cost $$5 $$HOME $${X}", {}), "cost $5 $HOME ${X}")
  t.eq(manifest.expand("echo $1 $(date) a $ b $", {}), "echo $1 $(date) a $ b $")
  t.eq(manifest.expand("$$$A", { A = "x" }), "$x")
end)

t.case("expand: values are not expanded again", function()
  t.eq(manifest.expand("$A", { A = "$B", B = "no" }), "$B")
  t.eq(manifest.expand("$A", { A = "%1 %%" }), "%1 %%")
end)

t.case("expand: missing variables are an error naming them and the file", function()
  local e = t.err(function()
    manifest.expand("a: $ONE\nb: ${TWO}\nc: $ONE\nd: $OK", { OK = "y" }, "deploy.yaml")
  end, "manifest deploy%.yaml: no value for ONE, TWO$")
  t.ok(not e:find("OK"), e)
end)

t.case("expand: a malformed ${ is an error with file and line", function()
  t.err(function() manifest.expand("a\nb: ${HOME:-/root}\n", {}, "cm.yaml") end,
        "manifest cm%.yaml:2: bad placeholder '%${HOME:%-/root}'")
  t.err(function() manifest.expand("x ${", {}, "f") end, "bad placeholder")
  t.err(function() manifest.expand("${1X}", {}, "f") end, "bad placeholder")
end)

t.case("expand: bad arguments", function()
  t.err(function() manifest.expand(nil) end, "text must be a string")
  t.err(function() manifest.expand("x", "y") end, "vars must be a table")
  t.err(function() manifest.expand("$A", { A = {} }, "f.yaml") end,
        "manifest f%.yaml: variable A is a table")
end)

local function deploy(name, containers, init)
  return { apiVersion = "apps/v1", kind = "Deployment", metadata = { name = name },
           spec = { template = { spec = { containers = containers,
                                          initContainers = init } } } }
end

t.case("load: reads, expands, decodes and skips empty documents", function()
  files["storage.yaml"] = "---\nkind: Namespace\nname: $NS\n---\n"
  local ns = { kind = "Namespace", metadata = { name = "kube-system" } }
  local cm = { kind = "ConfigMap", metadata = { name = "c" } }
  decode_result = { NULL, ns, {}, cm, NULL }
  local objs = manifest.load("storage.yaml", { NS = "kube-system" })
  t.eq(decoded_input, "---\nkind: Namespace\nname: kube-system\n---\n")
  t.eq(objs, { ns, cm })
end)

t.case("load: flattens kind List", function()
  files["list.yaml"] = "x"
  local a, b = { kind = "Service" }, { kind = "Secret" }
  decode_result = { { kind = "List", apiVersion = "v1", items = { a, NULL, b } } }
  t.eq(manifest.load("list.yaml"), { a, b })
end)

t.case("load: errors name the file", function()
  files["m.yaml"] = "image: $IMAGE"
  t.err(function() manifest.load("m.yaml", {}) end, "manifest m%.yaml: no value for IMAGE")
  files["bad.yaml"] = "BAD"
  t.err(function() manifest.load("bad.yaml") end, "manifest bad%.yaml: line 3: mapping")
  files["scalar.yaml"] = "just text"
  decode_result = { "just text" }
  t.err(function() manifest.load("scalar.yaml") end,
        "manifest scalar%.yaml: document 1 is a string")
  t.err(function() manifest.load("absent.yaml") end, "no file absent%.yaml")
  t.err(function() manifest.load(nil) end, "relpath must be a string")
end)

t.case("find: by kind, name and apiVersion/kind", function()
  local d1, d2 = deploy("a", {}), deploy("b", {})
  local svc = { apiVersion = "v1", kind = "Service", metadata = { name = "a" } }
  local objs = { d1, svc, d2 }
  t.ok(manifest.find(objs, "Deployment", "b") == d2)
  t.ok(manifest.find(objs, "Deployment") == d1)
  t.ok(manifest.find(objs, "Service", "a") == svc)
  t.ok(manifest.find(objs, "v1/Service", "a") == svc)
  t.ok(manifest.find(objs, "apps/v1/Deployment", "a") == d1)
  t.eq(manifest.find(objs, "apps/v2/Deployment", "a"), nil)
  t.eq(manifest.find(objs, "Deployment", "zzz"), nil)
  t.eq(manifest.find({}, "Deployment"), nil)
  t.err(function() manifest.find(nil, "x") end, "objs must be a list")
end)

t.case("set_image: containers and initContainers of every workload kind", function()
  local d = deploy("d", { { name = "app", image = "app:1" }, { name = "side", image = "s:1" } },
                   { { name = "app", image = "app:1" } })
  local ds = { kind = "DaemonSet", spec = { template = { spec = {
    containers = { { name = "app", image = "app:2" } } } } } }
  local pod = { kind = "Pod", spec = { containers = { { name = "app", image = "app:1" } } } }
  local cron = { kind = "CronJob", spec = { jobTemplate = { spec = { template = { spec = {
    containers = { { name = "app", image = "app:1" } } } } } } } }
  local job = { kind = "Job", spec = { template = { spec = {
    containers = { { name = "other", image = "o:1" } } } } } }
  local cm = { kind = "ConfigMap", data = { app = "x" } }
  local objs = { d, ds, pod, cron, job, cm, { kind = "StatefulSet" } }
  local set, changed = manifest.set_image(objs, "app", "app:2")
  t.eq({ set, changed }, { 5, 4 })
  t.eq(d.spec.template.spec.containers[1].image, "app:2")
  t.eq(d.spec.template.spec.initContainers[1].image, "app:2")
  t.eq(d.spec.template.spec.containers[2].image, "s:1")
  t.eq(pod.spec.containers[1].image, "app:2")
  t.eq(cron.spec.jobTemplate.spec.template.spec.containers[1].image, "app:2")
  t.eq(job.spec.template.spec.containers[1].image, "o:1")
  t.eq({ manifest.set_image(objs, "app", "app:2") }, { 5, 0 })
  t.eq({ manifest.set_image(objs, "nope", "x:1") }, { 0, 0 })
  t.eq({ manifest.set_image(job, "other", "o:2") }, { 1, 1 })  -- one object
  t.err(function() manifest.set_image(objs, "app") end, "image non%-empty strings")
end)

t.case("parse_image: registries, ports, tags and digests", function()
  t.eq(manifest.parse_image("nginx"), { repository = "nginx" })
  t.eq(manifest.parse_image("nginx:1.25"), { repository = "nginx", tag = "1.25" })
  t.eq(manifest.parse_image("library/nginx:1.25"),
       { repository = "library/nginx", tag = "1.25" })
  t.eq(manifest.parse_image("host:5000/x:tag"),
       { registry = "host:5000", repository = "x", tag = "tag" })
  t.eq(manifest.parse_image("host:5000/x"), { registry = "host:5000", repository = "x" })
  t.eq(manifest.parse_image("localhost/a/b:v1"),
       { registry = "localhost", repository = "a/b", tag = "v1" })
  t.eq(manifest.parse_image("registry.k8s.io/coredns/coredns:v1.11.1"),
       { registry = "registry.k8s.io", repository = "coredns/coredns", tag = "v1.11.1" })
  t.eq(manifest.parse_image("x@sha256:abcd"), { repository = "x", digest = "sha256:abcd" })
  t.eq(manifest.parse_image("h.io:443/x:1.0@sha256:ab"),
       { registry = "h.io:443", repository = "x", tag = "1.0", digest = "sha256:ab" })
end)

t.case("image_tag: tag of a named container, registry ports and digests", function()
  local d = deploy("d", { { name = "a", image = "host:5000/x:tag" },
                          { name = "b", image = "host:5000/y" },
                          { name = "c", image = "z@sha256:0123" },
                          { name = "e", image = "q:1.2@sha256:ff" } },
                   { { name = "init", image = "busybox:1.36" } })
  t.eq(manifest.image_tag(d, "a"), "tag")
  t.eq(manifest.image_tag(d, "b"), nil)
  t.eq({ manifest.image_tag(d, "c") }, { nil, "sha256:0123" })
  t.eq({ manifest.image_tag(d, "e") }, { "1.2", "sha256:ff" })
  t.eq(manifest.image_tag(d, "init"), "1.36")
  t.eq(manifest.image_tag(d, "missing"), nil)
  t.eq(manifest.image_tag(d), nil)              -- several containers: name one
  local one = deploy("o", { { name = "only", image = "cdkbot/hostpath:1.4.2" } })
  t.eq(manifest.image_tag(one), "1.4.2")
  t.eq(manifest.image_tag({ kind = "Service" }, "x"), nil)
  t.err(function() manifest.image_tag(nil, "x") end, "obj must be a table")
end)

--- load fills placeholders as YAML scalars (no value adds keys) ------------

-- With the real codecs, when the harness has them.
local real = { yaml = rawget(_ENV, "yaml") or (pcall(function() return yaml end) and yaml),
               json = rawget(_ENV, "json") or (pcall(function() return json end) and json) }

local function load_real(text, vars)
  local saved_yaml, saved_json = manifest.yaml, manifest.json
  manifest.yaml, manifest.json = real.yaml, real.json
  files["inj.yaml"] = text
  local ok, res = pcall(manifest.load, "inj.yaml", vars)
  manifest.yaml, manifest.json = saved_yaml, saved_json
  if not ok then error(res, 0) end
  return res
end

if not (real.yaml and real.json) then
  t.skip("load: placeholders are YAML scalars", "no yaml/json codec here")
else
  t.case("load: a value with a newline and a key adds no key", function()
    local evil = "Delete\nallowVolumeExpansion: true"
    local o = load_real("kind: StorageClass\nmetadata:\n  name: x\n"
      .. "reclaimPolicy: $P\n", { P = evil })[1]
    t.eq(o.reclaimPolicy, evil)
    t.eq(o.allowVolumeExpansion, nil)
    -- in a list, and with ${NAME}
    o = load_real("kind: X\nmetadata:\n  name: x\nargs:\n  - ${A}\n  - --b\n",
      { A = "--a\n  - --privileged" })[1]
    t.eq(o.args, { "--a\n  - --privileged", "--b" })
  end)

  t.case("load: quotes, comments and indicators stay inside the value", function()
    for _, v in ipairs { 'a "quoted" value', "it's", "x # not a comment",
                         "- item", "key: value", "{a: 1}", "[1, 2]", "*alias",
                         "!!binary", "trailing:", "a\\b", "tab\there", "" } do
      local o = load_real("kind: X\nmetadata:\n  name: x\nv: $V\n", { V = v })[1]
      t.eq(o.v, v, v)
      o = load_real('kind: X\nmetadata:\n  name: x\nv: "$V"\n', { V = v })[1]
      t.eq(o.v, v, "double-quoted " .. v)
      o = load_real("kind: X\nmetadata:\n  name: x\nv: '$V'\n", { V = v })[1]
      t.eq(o.v, v, "single-quoted " .. v)
    end
  end)

  t.case("load: plain values keep their YAML type and their place in a scalar", function()
    local o = load_real("kind: X\nmetadata:\n  name: x\ncount: $N\nflag: $B\n"
      .. "image: cdkbot/p-$ARCH:1.0\nq: \"$Q\"\npath: $ROOT/default-storage\n",
      { N = "3", B = "true", ARCH = "arm64", Q = "true", ROOT = "/var/snap/microk8s/common" })[1]
    t.eq(o.count, 3)
    t.eq(o.flag, true)
    t.eq(o.image, "cdkbot/p-arm64:1.0")
    t.eq(o.q, "true")
    t.eq(o.path, "/var/snap/microk8s/common/default-storage")
  end)

  t.case("load: in a block scalar a value stays text; a line break there is refused", function()
    local text = "kind: ConfigMap\nmetadata:\n  name: c\ndata:\n  Corefile: |\n"
      .. "    .:53 {\n        forward . $NS\n    }\n"
    local o = load_real(text, { NS = "8.8.8.8 # \"x\": 'y'" })[1]
    t.eq(o.data.Corefile, ".:53 {\n    forward . 8.8.8.8 # \"x\": 'y'\n}\n")
    t.err(function() load_real(text, { NS = "1.1.1.1\n}\nevil: {" }) end,
      "manifest inj%.yaml:7: the value of NS has a line break inside a block scalar")
  end)

  t.case("load: a value that would end its plain scalar is refused, naming it", function()
    t.err(function()
      load_real("kind: X\nmetadata:\n  name: x\nimage: repo/p-$ARCH:1.0\n",
        { ARCH = "x\nevil: 1" })
    end, "manifest inj%.yaml:4: the value of ARCH would end the plain scalar "
      .. "it is part of: .*manifest%.raw%(value%)")
  end)

  t.case("load: manifest.raw inserts YAML text on purpose", function()
    local o = load_real("kind: X\nmetadata:\n  name: x\nspec:\n  $EXTRA\n",
      { EXTRA = manifest.raw("a: 1\n  b: 2") })[1]
    t.eq(o.spec, { a = 1, b = 2 })
    t.err(function() manifest.raw(3) end, "manifest.raw: text must be a string")
  end)
end

t.case("load: a file the addon lacks is named without the library's line", function()
  local e = t.err(function() manifest.load("absent.yaml") end, "no file absent%.yaml")
  t.ok(not e:find("manifest.lua:", 1, true), e)
end)
