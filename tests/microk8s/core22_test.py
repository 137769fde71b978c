#!/usr/bin/env python3
"""uphook on core22 (Ubuntu 22.04), as far as this machine can tell.

- The library API: every identifier host/ uses that the installed headers
  of libcurl, jansson, libyaml, libseccomp and msgpack-c declare is in the
  headers of the version jammy packages (tests/microk8s/jammy-api.txt), or
  is a newer one used only in the file that holds its fallback.
- The snapcraft part of docs/microk8s/microk8s-upgrade.patch (applied to
  upstream's snapcraft.yaml): YAML that parses, the component build,
  `enable-patchelf`, and every build and stage package named in jammy's
  lists (tests/microk8s/jammy-packages.txt, read from packages.ubuntu.com).
- Its `prime` list against what it must carry: every shared library the
  built binary needs (and libcurl and libarchive, loaded at run time) and every file
  `make install PREFIX=/` installs.

This machine reaches no Ubuntu archive: the package names and versions are
checked against the data file, not against the archive itself.
Run from the repository root with $UPHOOK and $BUILD set (tests/run.sh
does). Prints "ok - ..." lines and "N passed, N failed".
"""
import fnmatch
import glob
import os
import re
import shutil
import subprocess
import tempfile

import yaml

from testlib import ROOT, UPHOOK, check, finish, patched_tree

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("BUILD") or "build"

# identifier prefixes of each library, and the pkg-config name of its headers
LIBS = {"curl": (r"(CURL|curl_)", "libcurl", ["curl/*.h"]),
        "jansson": (r"(json_|JSON_|JANSSON_)", "jansson", ["jansson*.h"]),
        "yaml": (r"(yaml_|YAML_)", "yaml-0.1", ["yaml.h"]),
        "seccomp": (r"(seccomp_|SCMP_)", "libseccomp", ["seccomp*.h"]),
        "msgpack": (r"(msgpack_|MSGPACK_)", "msgpack", ["msgpack.h", "msgpack/*.h"])}
# provided by the base snap (core22) or the toolchain, not staged
BASE_LIBS = ("libc.so.", "libm.so.", "libdl.so.", "libpthread.so.", "librt.so.",
             "ld-linux", "libgcc_s.so.", "libstdc++.so.")
WORD = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]*\b")


def strip_c(src):
    """C source without comments and string literals."""
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"//[^\n]*", " ", src)
    return re.sub(r'"(\\.|[^"\\])*"', '""', src)


def host_words():
    """{identifier: [files]} over host/*.c and host/*.h."""
    words = {}
    for f in sorted(glob.glob("host/*.c") + glob.glob("host/*.h")):
        with open(f) as fh:
            for w in set(WORD.findall(strip_c(fh.read()))):
                words.setdefault(w, []).append(f)
    return words


def installed_header_words(pkg, patterns):
    """Every identifier of the installed headers of pkg-config module pkg."""
    p = subprocess.run(["pkg-config", "--cflags-only-I", pkg], capture_output=True,
                       text=True)
    dirs = [d[2:] for d in p.stdout.split()] + ["/usr/include"]
    words = set()
    for d in dirs:
        for pat in patterns:
            for f in glob.glob(os.path.join(d, pat)):
                with open(f, errors="replace") as fh:
                    words |= set(WORD.findall(fh.read()))
    return words


def read_api():
    has, newer, libs = {}, {}, {}
    with open(os.path.join(HERE, "jammy-api.txt")) as f:
        for line in f:
            t = line.split()
            if not t or t[0].startswith("#"):
                continue
            if t[0] == "lib":
                libs[t[1]] = t[2]
            elif t[0] == "has":
                has.setdefault(t[1], set()).update(t[2:])
            elif t[0] == "newer":
                newer[(t[1], t[2])] = (t[3], t[4])
    return libs, has, newer


def test_api():
    libs, has, newer = read_api()
    words = host_words()
    for lib, (prefix, pkg, patterns) in LIBS.items():
        api = installed_header_words(pkg, patterns)
        used = sorted(w for w in words if re.match(prefix, w) and w in api)
        unknown = [w for w in used if w not in has.get(lib, ()) and (lib, w) not in newer]
        check("%s: the %d identifiers host/ uses are in %s %s's headers or have a "
              "fallback" % (lib, len(used), lib, libs.get(lib)),
              used and not unknown,
              "not checked against %s %s (add to tests/microk8s/jammy-api.txt once "
              "checked, or give them a fallback): %s" % (lib, libs.get(lib), unknown))
        misplaced = ["%s in %s" % (w, ", ".join(words[w])) for w in used
                     if (lib, w) in newer and words[w] != [newer[(lib, w)][1]]]
        check("%s: what is newer than %s is used only where its fallback is"
              % (lib, libs.get(lib)), not misplaced, misplaced)


def read_packages():
    pkgs = {}
    with open(os.path.join(HERE, "jammy-packages.txt")) as f:
        for line in f:
            t = line.split()
            if t and not t[0].startswith("#"):
                pkgs[t[0]] = t[1:]
    return pkgs


def test_part(src):
    with open(os.path.join(src, "snap", "snapcraft.yaml")) as f:
        sc = yaml.safe_load(f)
    check("snapcraft.yaml: base core22, the `upgrade` app runs microk8s-upgrade.wrapper",
          sc.get("base") == "core22"
          and sc["apps"].get("upgrade") == {"command": "microk8s-upgrade.wrapper"},
          sc["apps"].get("upgrade"))
    part = sc["parts"].get("uphook") or {}
    check("the uphook part builds as a component, after build-deps, with enable-patchelf",
          part.get("build-attributes") == ["enable-patchelf"]
          and "build-deps" in part.get("after", [])
          and part.get("override-build", "").endswith("build-component.sh uphook"), part)
    comp = os.path.join(src, "build-scripts", "components", "uphook")
    with open(os.path.join(comp, "build.sh")) as f:
        build = f.read()
    check("its build.sh installs with PREFIX=/ into the part",
          os.access(os.path.join(comp, "build.sh"), os.X_OK)
          and os.access(os.path.join(comp, "version.sh"), os.X_OK)
          and re.search(r'make install PREFIX=/ DESTDIR="\$\{INSTALL\}"', build), build)
    # build-component.sh clones the tag version.sh prints: the uphook this
    # patch was tested with, not an older release
    tag = subprocess.run([os.path.join(comp, "version.sh")], capture_output=True,
                         text=True).stdout.strip()
    own = subprocess.run([UPHOOK, "--version"], capture_output=True,
                         text=True).stdout.split()
    check("its version.sh prints the tag of this uphook (v%s)" % own[1],
          len(own) > 1 and tag == "v" + own[1], tag)
    pkgs = read_packages()
    for key in ("build-packages", "stage-packages"):
        names = part.get(key) or []
        missing = [n for n in names if n not in pkgs]
        check("%s: all %d are jammy packages (jammy-packages.txt)" % (key, len(names)),
              names and not missing, missing)
    bad = [n for n, row in pkgs.items()
           if len(row) < 3 or not row[2].startswith("https://packages.ubuntu.com/")
           or "jammy" not in row[2]]
    check("each jammy package has its version and packages.ubuntu.com jammy page",
          not bad, bad)
    return part


def covered(path, prime):
    for p in prime:
        if fnmatch.fnmatch(path, p) or path.startswith(p.rstrip("/") + "/"):
            return True
    return False


def test_prime(part, tmp):
    prime = part.get("prime") or []
    p = subprocess.run(["readelf", "-d", UPHOOK], capture_output=True, text=True)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", p.stdout)
    for lazy in ("curl_lazy.c", "helm_chart.c"):   # loaded on first use
        with open(os.path.join(ROOT, "host", lazy)) as f:
            needed += re.findall(r'#define SONAME "([^"]+)"', f.read())
    staged = [n for n in needed if not n.startswith(BASE_LIBS)
              and not n.startswith(("libasan", "libubsan"))]
    missing = [n for n in staged if not covered("usr/lib/x86_64-linux-gnu/" + n, prime)]
    check("prime keeps every library bin/uphook loads (%s)" % ", ".join(staged),
          "libcurl.so.4" in staged and "liblua5.4.so.0" in staged and not missing,
          "not primed: %s" % missing)
    dest = os.path.join(tmp, "install")
    r = subprocess.run(["make", "-s", "install", "PREFIX=/", "DESTDIR=" + dest,
                        "BUILD=" + BUILD], capture_output=True, text=True)
    files = sorted(os.path.relpath(os.path.join(d, f), dest)
                   for d, _, fs in os.walk(dest) for f in fs)
    lost = [f for f in files if not covered(f, prime)]
    check("prime keeps every file `make install PREFIX=/` installs (%d files)" % len(files),
          r.returncode == 0 and "bin/uphook" in files and not lost,
          r.stderr + "not primed: %s" % lost)
    absent = [e for e in prime if not e.startswith("usr/")
              and not any(covered(f, [e]) for f in files)]
    check("every uphook entry of prime names an installed file", not absent, absent)


def main():
    test_api()
    tmp = tempfile.mkdtemp(prefix="core22_test.")
    try:
        src = patched_tree(tmp)
        part = test_part(src)
        test_prime(part, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
