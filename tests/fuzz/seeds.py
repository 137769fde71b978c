#!/usr/bin/env python3
"""Build the seed corpora of the fuzz targets (tests/fuzz/fuzz_*.c).

usage: seeds.py OUT_DIR   (run from the repository root)

Writes OUT_DIR/<target>/<sha1> files from tests/data/corpus (YAML
manifests, split into documents), the test fixtures (hooks/*/fixtures,
tests/**) and the small hand-written seeds below.  Nothing here is
committed output: `make fuzz` rebuilds it every time.
"""
import glob, hashlib, json, os, re, struct, sys

MAX = 64 * 1024          # the runner's -max_len
OUT = sys.argv[1]
seeds = {}


def add(target, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) <= MAX:
        seeds.setdefault(target, set()).add(data)


def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except OSError:
        return b''


# ---- a minimal MessagePack writer (python3-msgpack is not a dependency)
def mp(v):
    if v is None:
        return b'\xc0'
    if v is True or v is False:
        return b'\xc3' if v else b'\xc2'
    if isinstance(v, int):
        if 0 <= v < 128:
            return bytes([v])
        if -32 <= v < 0:
            return struct.pack('b', v)
        return b'\xd3' + struct.pack('>q', v)
    if isinstance(v, float):
        return b'\xcb' + struct.pack('>d', v)
    if isinstance(v, str):
        v = v.encode()
    if isinstance(v, bytes):
        n = len(v)
        return (bytes([0xa0 | n]) if n < 32 else b'\xd9' + bytes([n]) if n < 256
                else b'\xda' + struct.pack('>H', n) if n < 65536
                else b'\xdb' + struct.pack('>I', n)) + v
    if isinstance(v, (list, tuple)):
        n = len(v)
        head = bytes([0x90 | n]) if n < 16 else b'\xdc' + struct.pack('>H', n)
        return head + b''.join(mp(x) for x in v)
    if isinstance(v, dict):
        n = len(v)
        head = bytes([0x80 | n]) if n < 16 else b'\xde' + struct.pack('>H', n)
        return head + b''.join(mp(k) + mp(x) for k, x in v.items())
    raise TypeError(type(v))


def payloads(msgs):
    """Mode 1 of fuzz_journal/fuzz_broker: 2-byte length + payload each."""
    out = b'\x01'
    for m in msgs:
        b = mp(m)
        out += struct.pack('>H', len(b)) + b
    return out


# ---- YAML and JSON: the shared corpus and every fixture
yaml_files = sorted(glob.glob('tests/data/corpus/**/*.yaml', recursive=True)
                    + glob.glob('hooks/**/*.yaml', recursive=True)
                    + glob.glob('tests/**/*.yaml', recursive=True))
docs = []
for path in yaml_files:
    text = read(path)
    if len(text) <= MAX:
        add('yaml', b'\x01' + text)
    for doc in re.split(rb'(?m)^---[^\n]*\n', text):
        if doc.strip() and len(doc) <= MAX // 4:
            docs.append(doc)
docs = sorted(set(docs))
for d in docs[:3000]:
    add('yaml', b'\x00' + d)
for s in ['a: &x [1, 2]\nb: *x\n', "k: 'quoted'\nv: !!str 1\nn: ~\ne: []\n",
          '- {a: 1, b: [x, y]}\n- "\\u00e9"\n- 0x1F\n- .inf\n- 1e3\n',
          'a: |\n  block\n  text\nb: >-\n  folded\n', '? [complex]\n: key\n']:
    add('yaml', b'\x00' + s.encode())
    add('yaml', b'\x01' + s.encode() + b'---\n' + s.encode())
try:
    import yaml as pyyaml
    for d in docs[:1500]:
        try:
            v = pyyaml.safe_load(d)
            add('json', json.dumps(v, sort_keys=True, default=str))
        except Exception:
            pass
except ImportError:
    pass
for path in glob.glob('tests/**/*.json', recursive=True):
    add('json', read(path))
for s in ['{"a":[1,2.5,-3e10,true,false,null],"b":{"c":"\\u00e9\\n"}}', '[]',
          '{}', '"x"', '[[[[[]]]]]', '{"k":18446744073709551615}', '1.0']:
    add('json', s)

# ---- args files
args = ['--kubeconfig=${SNAP_DATA}/credentials/kubelet.config\n'
        '--cert-dir=${SNAP_DATA}/certs\n# comment\n\n--node-ip 10.0.0.1\n'
        '--feature-gates="A=true,B=false"\n--bare\n',
        "--a='single quoted'\n--b=\"$VAR x\"\r\n  --c\t=\tv\n--d=x\\ y",
        '--cluster-dns=10.152.183.10\n--cluster-domain=cluster.local\n']
for t in args:
    add('argsfile', t)
    add('argsfile', t + '\0--node-ip 10.0.0.2\n!--bare\n--new\n--q it\'s "x"')
    add('argsfile', t + '\0--cluster-dns $X\n--e=1 2\n')
for path in glob.glob('tests/**/args/*', recursive=True):
    add('argsfile', read(path))

# ---- semver: versions and ranges from the hooks and the tests
strings = set()
for path in (glob.glob('hooks/*/*.lua') + glob.glob('stdlib/semver*.lua')
             + glob.glob('lua/core/semver.lua')
             + glob.glob('tests/lua/*.lua')):
    for m in re.finditer(r'"([~^<>=*xXv0-9][^"\n]{0,60})"', read(path).decode(
            'utf-8', 'replace')):
        strings.add(m.group(1))
strings = sorted(strings)
vers = [s for s in strings if re.match(r'^v?\d', s)] or ['1.2.3']
for i, s in enumerate(strings):
    add('semver', '%s\n%s\n%s' % (vers[i % len(vers)],
                                  vers[(i * 7 + 3) % len(vers)], s))
for s in ['1.2.3-alpha.1+build.5\n1.2.3\n>=1.2.0 <2.0.0-0 || ^3.x',
          'v1.14.5\n1.8.0\n1.8.x - 1.14', '0.0.1\n0.0.1-rc.1\n~0.0.1']:
    add('semver', s)

# ---- kubeconfig
kc = '''apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBQUEKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
    server: https://127.0.0.1:16443
  name: microk8s-cluster
contexts:
- context:
    cluster: microk8s-cluster
    user: admin
    namespace: kube-system
  name: microk8s
current-context: microk8s
kind: Config
preferences: {}
users:
- name: admin
  user:
    token: abcdef
'''
add('kubeconfig', kc)
add('kubeconfig', kc.replace('    token: abcdef\n', '    tokenFile: token\n')
    .replace('certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBQUEKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=',
             'certificate-authority: ca.crt'))
add('kubeconfig', kc.replace('    token: abcdef\n',
                             '    username: u\n    password: p\n')
    .replace('    certificate-authority-data', '    insecure-skip-tls-verify: true\n'
             '    certificate-authority-data'))
add('kubeconfig', kc.replace('    token: abcdef\n',
    '    client-certificate: ca.crt\n    client-key-data: QUJD\n'))

# ---- addons.yaml
add('addons', '''microk8s-addons:
  description: "Core addons"
  addons:
    - name: dns
      description: CoreDNS
      version: "1.14.3"
      check_status: "pod/coredns"
      supported_architectures:
        - amd64
        - arm64
    - name: a
      version: 1.0.0
    - name: b
    - name: missing
    - name: ../x
''')
for path in glob.glob('tests/**/addons.yaml', recursive=True):
    add('addons', read(path))

# ---- checksum files
h = hashlib.sha256(b'x').hexdigest()
add('checksum', 'kubectl\n%s  kubectl\n%s *other\n' % (h, h.upper()))
add('checksum', 'a b.tgz\nSHA256 (a b.tgz) = %s\n' % h)
add('checksum', 'x\n%s\n' % h)
add('checksum', 'dir/f\n%s  ./dir/f\r\n%s  f\n' % (h, h[::-1]))
add('checksum', 'f\\n\n\\%s  f\\\\n\n' % h)

# ---- MessagePack, journal records, broker messages
obj = {'apiVersion': 'v1', 'kind': 'ConfigMap',
       'metadata': {'name': 'x', 'namespace': 'kube-system', 'labels': {}},
       'data': {'k': 'v'}}
records = [{'op': 'apply', 'obj': obj, 'prior': None, 'seq': 1},
           {'op': 'file', 'root': 'args', 'path': 'kubelet', 'prior': 'x',
            'mode': 420}, {'op': 'begin', 'from': '1.0.0', 'to': '2.0.0',
                           'time': 1.5e9, 'pi': 3.25, 'neg': -7},
           [1, [2, [3, []]], {}], 'plain']
for r in records:
    add('mpack', mp(r))
add('mpack', b'\x92\xc4\x03abc\xca\x3f\x80\x00\x00')
add('journal', payloads(records))
add('journal', b'\x03' + payloads(records[:2])[1:])
raw = b'UPHOOKJ1\x00\x00\x00\x01\x00\x00\x00\x00'
for r in records:
    b = mp(r)
    raw += struct.pack('>II', len(b), int.from_bytes(
        hashlib.sha256(b).digest()[:4], 'big')) + b
add('journal', b'\x00' + raw)
add('journal', b'\x00' + raw + b'\x00' * 12)

desc = {'types': {'version': 'string', 'upgrade': 'function'},
        'data': {'version': '2.0.0', 'from': '>=1.0.0',
                 'permissions': ['kube:kube-system']}}
loaded = ['loaded', True, [desc]]
done = ['done', True, [None]]
calls = {
    'kube.apply': [obj], 'kube.delete': ['ConfigMap', 'x', 'kube-system'],
    'kube.get': ['ConfigMap', 'x', 'kube-system'],
    'kube.list': ['Pod', {'namespace': 'kube-system', 'labels': {'a': 'b'}}],
    'kube.rollout': ['Deployment', 'coredns', 'kube-system', {'timeout': 5}],
    'kube.wait': ['Deployment', 'x', 'kube-system', 'Available', 1],
    'config.write': ['args:kubelet', '--x=1\n'], 'config.read': ['args:kubelet'],
    'config.exists': ['certs:ca.crt'],
    'config.remove': ['config:x.conf'], 'config.args': ['kubelet'],
    'config.set_args': ['kubelet', {'--x': '1', '--y': False}],
    'config.install': ['cache:abc', 'config:bin/x', {'mode': '0755'}],
    'net.download': ['https://example.com/x', {'sha256': h}],
    'net.fetch': ['http://example.com/y'], 'hash.file': ['config:x'],
    'service.restart': ['kubelite'], 'nodes.list': [], 'nodes.this': [],
    'log.info': ['hello'], 'log.step': ['step'], 'log.warn': ['w'],
    'addon.read': ['x.yaml'], '__uphook.sleep': [1],
    '__uphook.require': ['mod'], 'unknown.prim': [None, 1],
}
for name, a in calls.items():
    add('broker', payloads([loaded, ['call', name, a], ['call', name, a],
                            done, done]))
# bit 1: the hook declared permissions; calls inside and outside them
inside = {
    'kube.apply': [obj], 'kube.delete': ['ConfigMap', 'x', 'kube-system'],
    'config.write': ['args:kubelet', '--x=1\n'],
    'config.remove': ['args:kubelet'], 'config.args': ['kubelet'],
    'config.set_args': ['kubelet', {'--x': '1', '--y': False}],
    'config.install': ['cache:' + h, 'bin:tool', {'mode': '0755'}],
    'net.download': ['https://example.com/x', {'sha256': h}],
    'net.fetch': ['https://example.com/y'], 'service.restart': ['kubelite'],
    'config.write#state': ['state:notes', 'x'],
}
outside = {
    'kube.apply': [dict(obj, metadata={'name': 'x', 'namespace': 'default'})],
    'kube.delete': ['Namespace', 'kube-system'],
    'config.write': ['args:kube-apiserver', '--x=1\n'],
    'config.install': ['cache:' + h, 'bin:other'],
    'net.fetch': ['https://example.org/y'],
    'service.restart': ['microk8s.daemon-k8s-dqlite'],
}
for table in (inside, outside):
    for name, a in table.items():
        name = name.split('#')[0]
        add('broker', b'\x03' + payloads([loaded, ['call', 'kube.apply', [obj]],
                                          ['call', name, a], done, done])[1:])
add('broker', payloads([loaded, done, ['call', 'kube.get', {'x': 1}], done]))
add('broker', payloads([loaded, ['ret', True, []], done]))
add('broker', payloads([['loaded', False, 'boom', 'trace']]))
frames = b''
for m in [loaded, ['call', 'kube.apply', [obj]], done, done]:
    b = mp(m)
    frames += struct.pack('<I', len(b)) + b
add('broker', b'\x00' + frames)
add('broker', b'\x00' + frames[:20])
add('broker', b'\x00\xff\xff\xff\x7f')

for target, items in seeds.items():
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    for data in items:
        with open(os.path.join(d, hashlib.sha1(data).hexdigest()), 'wb') as f:
            f.write(data)
    print('%-10s %5d seeds' % (target, len(items)))
