"""Certificates (openssl CLI) and kubeconfig files for the fake API server."""
import base64
import os
import secrets
import subprocess

EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def _run(args, cwd):
    subprocess.run(["openssl"] + args, cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _sign(d, name, subj, ext):
    with open(os.path.join(d, name + ".ext"), "w") as f:
        f.write(ext)
    _run(["req", "-new"] + EC + ["-keyout", name + ".key", "-out", name + ".csr",
                                 "-subj", subj], d)
    _run(["x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
          "-set_serial", "0x" + secrets.token_hex(8), "-days", "3650", "-sha256",
          "-extfile", name + ".ext", "-out", name + ".crt"], d)
    os.unlink(os.path.join(d, name + ".csr"))
    os.unlink(os.path.join(d, name + ".ext"))


def make_certs(d):
    """A CA, a serving cert for 127.0.0.1/localhost and a client cert.
    Kept when already there, so a restart on the same dir keeps trust."""
    files = {k: os.path.join(d, v) for k, v in {
        "ca_crt": "ca.crt", "ca_key": "ca.key", "server_crt": "server.crt",
        "server_key": "server.key", "client_crt": "client.crt",
        "client_key": "client.key"}.items()}
    if all(os.path.exists(p) for p in files.values()):
        return files
    old = os.umask(0o077)
    try:
        _run(["req", "-x509"] + EC + ["-keyout", "ca.key", "-out", "ca.crt", "-days", "3650",
                                      "-subj", "/CN=uphook-fake-ca", "-sha256",
                                      "-addext", "basicConstraints=critical,CA:TRUE",
                                      "-addext", "keyUsage=critical,keyCertSign,cRLSign"], d)
        _sign(d, "server", "/CN=127.0.0.1",
              "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
              "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n")
        _sign(d, "client", "/O=system:masters/CN=admin",
              "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
              "extendedKeyUsage=clientAuth\n")
    finally:
        os.umask(old)
    return files


def _b64(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def _kubeconfig(port, ca, user):
    lines = ["apiVersion: v1", "kind: Config", "clusters:", "- name: fake", "  cluster:",
             "    server: https://127.0.0.1:%d" % port,
             "    certificate-authority-data: " + ca,
             "contexts:", "- name: fake", "  context:", "    cluster: fake",
             "    user: admin", "current-context: fake", "preferences: {}",
             "users:", "- name: admin", "  user:"]
    lines += ["    %s: %s" % kv for kv in user]
    return "\n".join(lines) + "\n"


def _write(path, text):
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_kubeconfigs(d, port, files, token=None, basic=None):
    ca = _b64(files["ca_crt"])
    _write(os.path.join(d, "kubeconfig"), _kubeconfig(port, ca, [
        ("client-certificate-data", _b64(files["client_crt"])),
        ("client-key-data", _b64(files["client_key"]))]))
    if token:
        _write(os.path.join(d, "kubeconfig-token"), _kubeconfig(port, ca, [("token", token)]))
    if basic:
        u, _, p = basic.partition(":")
        _write(os.path.join(d, "kubeconfig-basic"), _kubeconfig(port, ca, [
            ("username", u), ("password", p)]))
