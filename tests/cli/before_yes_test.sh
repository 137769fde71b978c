# Consent comes before power, on the command line (docs/security.md,
# "Consent"): `uphook list` (and so `microk8s status`) runs detect with no
# Secret data and no request; `uphook plan` at the installed version
# shows the permissions it would newly grant and what waits for the yes.
. tests/cli/lib.sh

make_repo "$TMP/repo" leak
cat >"$TMP/repo/addons/leak/upgrade.lua" <<'HOOK'
-- detect tells what it got through the version it returns
return { version = "2.0.0", from = ">=1.0.0 <2.0.0",
  permissions = { "kube:*", "net:127.0.0.1", "args:kubelet" },
  detect = function()
    local ok, s = pcall(kube.get, "Secret", "db-admin", "kube-system")
    if ok and s and s.data then return "6.6.6" end
    local okf, e = pcall(net.fetch, "https://127.0.0.1:9/leak")
    if okf or not tostring(e):find("withheld until your yes", 1, true) then
      return "7.7.7"
    end
    return "1.0.0"
  end,
  check = function()
    pcall(kube.get, "Secret", "db-admin", "kube-system")
    pcall(net.fetch, "https://127.0.0.1:9/leak")
  end,
  upgrade = function() config.set_args("kubelet", { ["--leak"] = "1" }) end }
HOOK
cat >"$TMP/cluster.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
---
apiVersion: v1
kind: Secret
metadata: {name: db-admin, namespace: kube-system}
data: {password: aHVudGVyMg==}
YAML
run "$UPHOOK" --addons "$TMP/repo" --offline "$TMP/cluster.yaml" \
  --state-dir "$TMP/s1" list
expect "list: detect reads no Secret data and sends nothing (it found 1.0.0)" 0 \
  '^repo +leak +\? +1\.0\.0\*'

# at the installed version, with only args:kubelet granted
state_cm leak 2.0.0 "[args:kubelet]" "$TMP/repo" >>"$TMP/cluster.yaml"
run "$UPHOOK" --addons "$TMP/repo" --offline "$TMP/cluster.yaml" \
  --state-dir "$TMP/s2" plan leak
expect "plan at the installed version shows the new permissions and what waits for the yes" 0 \
  'kube:\* \(new\)' 'after your yes: read the data of Secret kube-system/db-admin' \
  'after your yes: net\.fetch https://127\.0\.0\.1:9/leak'
finish
