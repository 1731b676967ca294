"""A throw-away network + mount namespace in which Google's storage host names mean 127.0.0.1.

TensorFlow's GCS client has fixed endpoints (www.googleapis.com for the JSON and upload APIs,
storage.googleapis.com for object data), so a test cannot point it elsewhere; it can only change what those names
mean. Doing that for the whole machine would be wrong, so each test session makes a private namespace pair:
  * network: only `lo`, so nothing inside can reach the real service or anything off this machine, and each
    sandbox may serve 127.0.0.1:443 without clashing with another test run;
  * mount: bind mounts over /etc/hosts (the names -> 127.0.0.1), /etc/resolv.conf (no DNS server but 127.0.0.1)
    and /etc/ssl/certs/ca-certificates.crt (the system CAs + the test CA: TF 1.15's libcurl reads that file and
    ignores CURL_CA_BUNDLE).
A holder process (`cat`, until its stdin closes) keeps the namespaces alive; commands enter them with `nsenter`.
`check()` is the guard: it refuses a sandbox in which any of the names resolves to anything but 127.0.0.1, or in
which a network interface other than lo exists.

Standard library only (the TF 1.15 leg runs Python 3.7). Needs root, util-linux (unshare, nsenter, mount),
iproute2 (ip) and openssl.
"""
import hashlib
import json
import os
import select
import shutil
import subprocess
import sys
import time

GOOGLE_HOSTS = ('www.googleapis.com', 'storage.googleapis.com', 'oauth2.googleapis.com', 'metadata',
                'metadata.google.internal')
LOOPBACK = '127.0.0.1'
SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt'
REQUIRED_TOOLS = ('unshare', 'nsenter', 'mount', 'ip', 'openssl')
START_TIMEOUT_SECS = 20.0

# The holder, run in the new namespaces: $1 hosts file, $2 resolv.conf, $3 CA bundle.
HOLDER_SCRIPT = """set -e
ip link set lo up
mount --bind "$1" /etc/hosts
mount --bind "$2" /etc/resolv.conf
mount --bind "$3" %s
echo ready
exec cat >/dev/null
""" % SYSTEM_CA_BUNDLE

# Run inside the sandbox: what each name resolves to, which interfaces exist, which CA bundle is in place.
PROBE_SCRIPT = r"""
import hashlib, json, socket, sys
names = {}
for host in sys.argv[1:]:
  try:
    names[host] = sorted(set(info[4][0] for info in socket.getaddrinfo(host, 443)))
  except socket.gaierror as e:
    names[host] = 'does not resolve (%s)' % e
with open('/etc/ssl/certs/ca-certificates.crt', 'rb') as f:
  bundle = hashlib.sha256(f.read()).hexdigest()
print(json.dumps({'names': names, 'interfaces': sorted(name for _, name in socket.if_nameindex()),
                  'ca_bundle_sha256': bundle}))
"""


class SandboxError(RuntimeError):
  """The sandbox cannot be made, or is not safe to use."""


def require_tools():
  missing = [tool for tool in REQUIRED_TOOLS if shutil.which(tool) is None]
  if missing:
    raise SandboxError('the gs:// tests need %s: apt-get install util-linux iproute2 openssl'
                       % ', '.join(missing))
  if os.geteuid() != 0:
    raise SandboxError('the gs:// tests need root (they create network and mount namespaces).')


def _openssl(*args):
  result = subprocess.run(('openssl',) + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
  if result.returncode:
    raise SandboxError('openssl %s failed: %s' % (args[0], result.stderr.decode(errors='replace')))


def make_certificates(directory):
  """A test CA, a server certificate for TF's endpoints signed by it, and the system bundle plus that CA.

  Returns {name: path}. EC P-256 keys: generated in milliseconds, every session anew.
  """
  paths = {name: os.path.join(directory, name) for name in
           ('ca.pem', 'ca.key', 'server.pem', 'server.key', 'server.csr', 'server.ext', 'bundle.pem')}
  new_key = ('-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes')
  _openssl('req', '-x509', '-new', *new_key, '-keyout', paths['ca.key'], '-out', paths['ca.pem'], '-days', '7',
           '-subj', '/CN=estimator_tpu test CA', '-addext', 'basicConstraints=critical,CA:TRUE',
           '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
  _openssl('req', '-new', *new_key, '-keyout', paths['server.key'], '-out', paths['server.csr'],
           '-subj', '/CN=www.googleapis.com')
  names = ('www.googleapis.com', 'storage.googleapis.com', '*.storage.googleapis.com', 'localhost')
  with open(paths['server.ext'], 'w') as f:
    f.write('basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n'
            'extendedKeyUsage=serverAuth\nsubjectAltName=%s,IP:%s\n'
            % (','.join('DNS:' + name for name in names), LOOPBACK))
  _openssl('x509', '-req', '-in', paths['server.csr'], '-CA', paths['ca.pem'], '-CAkey', paths['ca.key'],
           '-set_serial', str(int(time.time() * 1000)), '-days', '7', '-extfile', paths['server.ext'],
           '-out', paths['server.pem'])
  with open(paths['bundle.pem'], 'wb') as bundle:
    for source in (SYSTEM_CA_BUNDLE, paths['ca.pem']):
      with open(source, 'rb') as f:
        bundle.write(f.read().rstrip(b'\n') + b'\n')
  return paths


def write_hosts_file(path, addresses=None):
  """An /etc/hosts with localhost and `addresses` ({name: address}; default: every GOOGLE_HOSTS -> 127.0.0.1)."""
  addresses = dict.fromkeys(GOOGLE_HOSTS, LOOPBACK) if addresses is None else addresses
  with open(path, 'w') as f:
    f.write('127.0.0.1 localhost\n')
    for name, address in sorted(addresses.items()):
      f.write('%s %s\n' % (address, name))
  return path


class Sandbox(object):
  """The namespaces, their holder process, and running commands inside.

  `directory` (existing) receives the certificates, hosts file and resolv.conf; `hosts_file` replaces the hosts
  file it would write (the guard's tests pass a wrong one).
  """

  def __init__(self, directory, hosts_file=None):
    self.directory = directory
    self.hosts_file = hosts_file or os.path.join(directory, 'hosts')
    self._write_hosts = hosts_file is None
    self.certificates = None
    self.holder = None

  @property
  def pid(self):
    return self.holder.pid

  def start(self):
    """Makes the namespaces and checks them; raises SandboxError (leaving nothing running) if unsafe."""
    require_tools()
    self.certificates = make_certificates(self.directory)
    if self._write_hosts:
      write_hosts_file(self.hosts_file)
    resolv_conf = os.path.join(self.directory, 'resolv.conf')
    with open(resolv_conf, 'w') as f:
      f.write('nameserver %s\noptions timeout:1 attempts:1\n' % LOOPBACK)
    self.holder = subprocess.Popen(
        ['unshare', '--mount', '--net', '--propagation', 'private', '--', 'sh', '-c', HOLDER_SCRIPT, 'holder',
         self.hosts_file, resolv_conf, self.certificates['bundle.pem']],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
      ready, _, _ = select.select([self.holder.stdout], [], [], START_TIMEOUT_SECS)
      if not ready or self.holder.stdout.readline().strip() != b'ready':
        self.holder.kill()
        raise SandboxError('could not create the sandbox namespaces: %s'
                           % (self.holder.communicate()[1].decode(errors='replace').strip() or 'no answer'))
      self.check()
    except BaseException:
      self.stop()
      raise
    return self

  def check(self):
    """The guard: raises SandboxError unless TF's traffic can only go to 127.0.0.1 in here. Returns the probe."""
    result = self.run([sys.executable, '-c', PROBE_SCRIPT] + list(GOOGLE_HOSTS), env=dict(os.environ), timeout=60)
    if result.returncode:
      raise SandboxError('the sandbox probe failed: %s' % result.stderr.decode(errors='replace'))
    seen = json.loads(result.stdout.decode())
    wrong = sorted((name, found) for name, found in seen['names'].items() if found != [LOOPBACK])
    if wrong:
      raise SandboxError('refusing to use the gs:// sandbox: inside it these names do not resolve to %s only: %s'
                         % (LOOPBACK, ', '.join('%s -> %s' % item for item in wrong)))
    if seen['interfaces'] != ['lo']:
      raise SandboxError('refusing to use the gs:// sandbox: it has the network interfaces %s; only lo is allowed.'
                         % seen['interfaces'])
    with open(self.certificates['bundle.pem'], 'rb') as f:
      if hashlib.sha256(f.read()).hexdigest() != seen['ca_bundle_sha256']:
        raise SandboxError('refusing to use the gs:// sandbox: %s inside is not the test bundle.' % SYSTEM_CA_BUNDLE)
    return seen

  def command(self, argv, cwd=None):
    """`argv` prefixed to run inside the sandbox (nsenter execs it, so the pid is the command's own)."""
    return ['nsenter', '-t', str(self.pid), '--mount', '--net', '--wd=%s' % (cwd or os.getcwd()), '--'] + list(argv)

  def popen(self, argv, env, cwd=None, **kwargs):
    return subprocess.Popen(self.command(argv, cwd), env=env, **kwargs)

  def run(self, argv, env, timeout, cwd=None):
    """Runs `argv` inside; returns the CompletedProcess (bytes output). TimeoutExpired kills it."""
    return subprocess.run(self.command(argv, cwd), env=env, timeout=timeout, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)

  def stop(self):
    """Lets the holder go; the namespaces vanish with their last process."""
    if self.holder is None:
      return
    try:
      self.holder.stdin.close()
      self.holder.wait(timeout=10)
    except subprocess.TimeoutExpired:
      self.holder.kill()
      self.holder.wait()
    finally:
      self.holder.stdout.close()
      self.holder.stderr.close()
