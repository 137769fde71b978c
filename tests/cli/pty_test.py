#!/usr/bin/env python3
"""The terminal as an operator has it (docs/output.md "For people"), under a
pseudo-terminal (Python's pty):

- colour and the status line (spinner) only on a stream that is a
  terminal: stderr redirected to a file while stdout is a terminal gets
  no escape codes, and neither does stdout in a file; TERM=dumb gets none
  anywhere; NO_COLOR no colour; the status line is cleared before the next
  line is printed;
- the data-loss confirmation of a live upgrade against the fake API
  server (tests/fakes): asked on the terminal with the object shown, then
  yes (deleted), no and end of input (refused: the delete fails, the run
  rolls back, exit 1; exit 4 when nothing had changed yet); without a
  terminal --allow-data-loss allows it and --yes never does; --offline and plan
  never ask.
"""
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.getcwd(), "tests", "microk8s"))
from testlib import ROOT, UPHOOK, Fake, check, finish, write  # noqa: E402

TMP = tempfile.mkdtemp(prefix="uphook-pty.")
PROMPT = b"[y/N] "


def run_tty(argv, env, stdin="tty", stdout="tty", stderr="tty", answer=None,
            timeout=90):
    """Run argv with each of stdin/stdout/stderr on one pseudo-terminal
    ("tty"), a file ("file") or /dev/null (stdin "null"). `answer` is typed
    when the prompt shows. Returns (code, terminal bytes, stdout file bytes,
    stderr file bytes)."""
    m, s = os.openpty()
    files = {}

    def target(kind, name):
        if kind == "tty":
            return s
        files[name] = tempfile.TemporaryFile(dir=TMP)
        return files[name]
    p = subprocess.Popen(argv, env=env, start_new_session=True,
                         stdin=s if stdin == "tty" else subprocess.DEVNULL,
                         stdout=target(stdout, "out"),
                         stderr=target(stderr, "err"))
    os.close(s)
    buf, sent, end = b"", False, time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([m], [], [], 0.2)
        if r:
            try:
                d = os.read(m, 65536)
            except OSError:
                d = b""
            if not d:
                break
            buf += d
        elif p.poll() is not None:
            break
        # the prompt on the terminal, or on a piped stderr (read without
        # moving the file's offset, which the child shares)
        shown = buf + (os.pread(files["err"].fileno(), 1 << 20, 0)
                       if "err" in files else b"")
        if answer is not None and not sent and PROMPT in shown:
            if answer == "SIGINT":      # ^C: the process has no terminal
                time.sleep(0.5)         # (once it reads: either way works)
                os.kill(p.pid, signal.SIGINT)
            else:
                os.write(m, answer)
            sent = True
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    os.close(m)
    got = {}
    for k, f in files.items():
        f.seek(0)
        got[k] = f.read()
    return p.returncode, buf, got.get("out", b""), got.get("err", b"")


def show(*parts):
    return "\n".join(repr(p[-1500:]) for p in parts)


# ---------------------------------------------------------------- terminal
REPO = os.path.join(TMP, "repo")
write(os.path.join(REPO, "addons.yaml"), "microk8s-addons:\n  addons:\n"
      "    - name: dns\n      version: 1.0.0\n    - name: dl\n      version: 1.0.0\n"
      "    - name: dl0\n      version: 1.0.0\n")
os.makedirs(os.path.join(REPO, "addons"))
os.symlink(os.path.join(ROOT, "hooks", "dns"), os.path.join(REPO, "addons", "dns"))
DNS_FIX = os.path.join(ROOT, "hooks", "dns", "fixtures", "cluster-1.8.0.yaml")
BASE_ENV = {k: v for k, v in os.environ.items()
            if k not in ("NO_COLOR", "TERM", "SUDO_USER")}


def dns(term="xterm-256color", extra=None, **kw):
    env = dict(BASE_ENV, TERM=term, **(extra or {}))
    return run_tty([UPHOOK, "--addons", REPO, "--offline", DNS_FIX,
                    "upgrade", "dns"], env, **kw)


SPIN = re.compile(rb"\r\x1b\[K  [|/\\-] [^\r\n\x1b]*")
COLOUR = re.compile(rb"\x1b\[[0-9;]*m")

rc, tty, _, _ = dns()
check("on a terminal: the upgrade works", rc == 0 and b"Upgraded dns" in tty, show(tty))
check("on a terminal: steps in colour", b"\x1b[1;34m[1] " in tty, show(tty))
frames = list(SPIN.finditer(tty))
check("on a terminal: a status line with a spinner during the wait",
      any(b"replicas updated" in f.group(0) for f in frames), show(tty))
check("... which says what is awaited, elapsed and limit (docs/output.md \"Waits\")",
      any(re.search(rb"waiting for node \S+ to be Ready again after its restart: "
                    rb"\d+ s of \d+ (s|min)", f.group(0)) for f in frames), show(tty))
uncleared = [f.group(0) for f in frames
             if not tty[f.end():].startswith(b"\r\x1b[K")]
check("the status line is cleared before the next line is printed",
      frames and not uncleared, "%r\n%s" % (uncleared, show(tty)))

rc, tty, _, _ = dns(term="dumb")
check("TERM=dumb: no escape codes at all", rc == 0 and b"\x1b" not in tty
      and b"Upgraded dns" in tty, show(tty))

rc, tty, _, _ = dns(extra={"NO_COLOR": "1"})
check("NO_COLOR: no colour, the status line stays",
      rc == 0 and not COLOUR.search(tty) and SPIN.search(tty), show(tty))

rc, tty, _, err = dns(stderr="file")
check("stderr in a file, stdout a terminal: no escape codes in the file",
      rc == 0 and b"\x1b" not in err and b"\r" not in err, show(err))
check("... while stdout keeps its colour", b"\x1b[1;34m[1] " in tty, show(tty))

rc, tty, out, _ = dns(stdout="file")
check("stdout in a file, stderr a terminal: no escape codes in the file",
      rc == 0 and b"\x1b" not in out and b"Upgraded dns" in out, show(out))

# ------------------------------------------------- the data-loss question
HOOK = '''return {
  version = "1.1.0", from = ">=1.0.0 <1.1.0",
  description = "deletes its old volume claim",
  permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx)
    %s
  end,
}
'''
APPLY = '''log.step("settings")
    kube.apply({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "dl-settings", namespace = "default" },
      data = { v = "2" } })'''
DELETE = '''log.step("old volume")
    kube.delete("PersistentVolumeClaim", "dl-data", "default",
      { allow_data_loss = true })'''
write(os.path.join(REPO, "addons", "dl", "upgrade.lua"), HOOK % (APPLY + "\n    " + DELETE))
write(os.path.join(REPO, "addons", "dl0", "upgrade.lua"), HOOK % DELETE)
PVC = """apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: dl-data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: microk8s-hostpath
  resources: {requests: {storage: 3Gi}}
"""
# the state of an earlier upgrade that was granted kube:default, by this
# repository (docs/state.md "Which repository"): the consent to new
# permissions (docs/security.md "Consent") does not ask before the data loss
for a in ("dl", "dl0"):
    PVC += ("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: uphook-%s, "
            "namespace: kube-system}\ndata: {version: 1.0.0, permissions: "
            "\"- kube:default\\n\", repository: \"repo %s\"}\n"
            % (a, os.path.realpath(REPO)))

fake = Fake(TMP)
check("the fake API server started", fake.port is not None)
if fake.port is None:
    finish()
KC = os.path.join(fake.dir, "kubeconfig")
LIVE_ENV = dict(BASE_ENV, TERM="xterm", SNAP_DATA=os.path.join(TMP, "data"),
                SNAP_COMMON=os.path.join(TMP, "common"), HOME=os.path.join(TMP, "home"))
n = [0]


def live(addon, *args, command="upgrade", **kw):
    """A fresh cluster with the claim, then `uphook upgrade addon args`."""
    fake.call("POST", "reset")
    fake.call("POST", "seed", PVC)
    n[0] += 1
    return run_tty([UPHOOK, "--kubeconfig", KC, "--addons", REPO,
                    "--state-dir", os.path.join(TMP, "state%d" % n[0]),
                    command, addon, *args], LIVE_ENV, **kw)


def pvc():
    return fake.get("PersistentVolumeClaim", "dl-data", "default") is not None


def settings():
    return fake.get("ConfigMap", "dl-settings", "default") is not None


rc, tty, _, _ = live("dl", answer=b"y\n")
check("a terminal is asked, with the object shown",
      b"DATA LOSS: dl's upgrade deletes PersistentVolumeClaim default/dl-data" in tty
      and b"size 3Gi, storage class microk8s-hostpath" in tty and PROMPT in tty, show(tty))
check("... yes: the claim is deleted and the upgrade done (exit 0)",
      rc == 0 and not pvc() and settings() and b"Upgraded dl" in tty, show(tty))
before = tty.index(PROMPT)
check("... asked when the delete is made, after the change before it",
      b"[1] settings" in tty[:before] and b"[2] old volume" in tty[:before], show(tty))

for answer, name in ((b"n\n", "no"), (b"\x04", "end of input"), (b"maybe\n", "an unclear answer")):
    rc, tty, _, _ = live("dl", answer=answer)
    check("... %s: refused, rolled back, exit 1, the claim kept" % name,
          rc == 1 and pvc() and not settings()
          and b"the data-loss delete of PersistentVolumeClaim default/dl-data was not confirmed" in tty
          and b"Rolled back" in tty, show(tty))

rc, tty, _, _ = live("dl0", answer=b"n\n")
check("refused before any change: exit 4, the claim kept",
      rc == 4 and pvc() and b"was not confirmed (the answer was no)" in tty, show(tty))

rc, _, out, err = live("dl", stdin="null", stdout="file", stderr="file")
check("no terminal and no --yes: refused (exit 1, rolled back), the claim kept",
      rc == 1 and pvc() and not settings()
      and b"no terminal to ask on: --allow-data-loss allows it" in err, show(out, err))

# --yes never covers data loss (docs/security.md, "What permissions guarantee")
rc, _, out, err = live("dl", "--yes", stdin="null", stdout="file", stderr="file")
check("no terminal, --yes: refused (exit 1, rolled back), the claim kept, "
      "--allow-data-loss named",
      rc == 1 and pvc() and not settings()
      and b"no terminal to ask on: --allow-data-loss allows it (--yes never "
      b"covers data loss)" in err, show(out, err))

rc, _, out, err = live("dl", "--allow-data-loss", stdin="null", stdout="file",
                       stderr="file")
check("no terminal, --allow-data-loss: deleted, exit 0, the yes said",
      rc == 0 and not pvc() and b"yes (--allow-data-loss) to the data-loss "
      b"delete of PersistentVolumeClaim default/dl-data" in out, show(out, err))

rc, tty, _, _ = live("dl", "--yes", answer=b"n\n")
check("a terminal with --yes: still asked; no: refused, the claim kept",
      rc == 1 and PROMPT in tty and pvc(), show(tty))

rc, _, out, err = live("dl", "--allow-data-loss", "--output", "json",
                       stdin="null", stdout="file", stderr="file")
check("--output json: a confirm event says who answered",
      rc == 0 and b'"event":"confirm"' in out
      and b'"by":"--allow-data-loss"' in out, show(out, err))

rc, _, out, err = live("dl", stdout="file", stderr="file", answer=b"y\n")
check("stdin a terminal, stdout and stderr piped (2>&1 | tee): asked on "
      "stderr, the yes taken", rc == 0 and PROMPT in err and not pvc()
      and b"Upgraded dl" in out, show(out, err))

rc, tty, _, _ = live("dl0", answer="SIGINT")
check("^C at the prompt: the upgrade is interrupted, not 'end of input'",
      rc in (1, 4) and pvc() and b"interrupted" in tty
      and b"end of input" not in tty, show(tty))

rc, tty, _, _ = live("dl", command="plan")
check("plan never asks (and shows the data-loss delete)",
      rc == 0 and PROMPT not in tty and pvc() and b"DATA LOSS" in tty, show(tty))
rc, tty, _, _ = live("dl", "--dry-run")
check("upgrade --dry-run never asks", rc == 0 and PROMPT not in tty and pvc(), show(tty))

fake.stop()
PVC_FIX = os.path.join(TMP, "pvc.yaml")
write(PVC_FIX, PVC)
rc, tty, _, _ = run_tty([UPHOOK, "--addons", REPO, "--offline", PVC_FIX,
                         "upgrade", "dl"], dict(BASE_ENV, TERM="xterm"))
check("--offline never asks (the mock's claim is deleted)",
      rc == 0 and PROMPT not in tty and b"Upgraded dl" in tty, show(tty))

shutil.rmtree(TMP, ignore_errors=True)
finish()
