# What the two Helm suites of tests/fakes share (sourced, never run, after
# tests/cli/fake_api.sh's fake_tmp): their checks (tests/fakes/checks.sh),
# Helm run on a test's own server and HOME, and the templates of their
# chart "web".
. tests/fakes/checks.sh      # ok, notok, check, check_fail
#
# run_helm DRIVER ARGS...: $HELM on the server of $KC with its own HOME,
# caches and config under $TMP/home, the release stored in DRIVER
# (secret, Helm's default, or configmap), bounded in time
run_helm() {
  drv=$1; shift
  HOME=$TMP/home HELM_CACHE_HOME=$TMP/home/cache HELM_CONFIG_HOME=$TMP/home/config \
    HELM_DATA_HOME=$TMP/home/data HELM_DRIVER=$drv KUBECONFIG=$KC \
    timeout 120 "$HELM" "$@"
}

# web_templates DIR VERSION: the chart's templates in DIR/templates: a
# Deployment (its replicas and image from the values), a Service, a
# ConfigMap from the value greeting (a key "added" after 0.1.0) and a
# pre-install/pre-upgrade hook Job that completes
web_templates() {
  mkdir -p "$1/templates"
  cat >"$1/templates/deployment.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {app: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
      - name: web
        image: {{ .Values.image }}
        ports:
        - containerPort: 80
EOF
  cat >"$1/templates/service.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports:
  - port: 80
EOF
  cat >"$1/templates/configmap.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  greeting: {{ .Values.greeting | quote }}
$( [ "$2" = 0.1.0 ] || echo '  added: "in 0.2.0"' )
EOF
  cat >"$1/templates/hook.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: busybox:1.36
        command: ["true"]
EOF
}
