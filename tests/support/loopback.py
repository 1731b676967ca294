"""Loopback (127.0.0.1) sockets for reachability tests: a closed port, and a port that never answers."""
import contextlib
import socket


def closed_port():
  """A port on 127.0.0.1 that nothing listens on (bound once by us, then released)."""
  with contextlib.closing(socket.socket()) as sock:
    sock.bind(('127.0.0.1', 0))
    return sock.getsockname()[1]


@contextlib.contextmanager
def silent_port():
  """A port whose connections hang: its only accept-queue slot is taken and never accepted, so the kernel
  drops further SYNs and a connect waits until its timeout (Linux behaviour)."""
  listener = socket.socket()
  filler = socket.socket()
  try:
    listener.bind(('127.0.0.1', 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    filler.settimeout(1.0)
    filler.connect(('127.0.0.1', port))
    yield port
  finally:
    filler.close()
    listener.close()
