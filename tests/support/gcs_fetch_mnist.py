"""The MNIST fetch path into a gs:// data_dir, offline: python gcs_fetch_mnist.py gs://BUCKET/DIR

Run inside the sandbox by test_gcs_e2e.py. A mirror on loopback (a thread of this process) serves small gzipped
IDX files; the canonical checksums are replaced by theirs, so download.fetch_mnist verifies and keeps them. Then
prepare.prepare_data does what `python -m tools.prepare_data --data_dir=gs://...` does without --source_dir.
"""
import functools
import gzip
import hashlib
import http.server
import os
import sys
import tempfile
import threading

from estimator_tpu.data import download
from estimator_tpu.data import idx
from estimator_tpu.data import prepare
from estimator_tpu.data import synthetic

NAMES = {'train_images': 'train-images-idx3-ubyte', 'train_labels': 'train-labels-idx1-ubyte',
         'test_images': 't10k-images-idx3-ubyte', 'test_labels': 't10k-labels-idx1-ubyte'}


def serve(directory):
  """An HTTP server for `directory` on 127.0.0.1 (a free port), in a daemon thread; returns its base URL."""
  handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=directory)
  server = http.server.HTTPServer(('127.0.0.1', 0), handler)
  threading.Thread(target=server.serve_forever, daemon=True).start()
  return 'http://127.0.0.1:%d/' % server.server_address[1]


def main(data_dir):
  with tempfile.TemporaryDirectory(prefix='mirror-') as mirror:
    fetch_into(data_dir, mirror)
  print('prepared %s' % data_dir)


def fetch_into(data_dir, mirror):
  arrays = synthetic.write_idx_dir(mirror, gzipped=True)
  for key, name in NAMES.items():
    download.CANONICAL_SHA256[name] = hashlib.sha256(idx.to_bytes(arrays[key])).hexdigest()
    with gzip.open(os.path.join(mirror, name + '.gz')) as f:
      assert hashlib.sha256(f.read()).hexdigest() == download.CANONICAL_SHA256[name]

  def no_carrier(scratch_dir):
    raise OSError('the test mirror should have been enough')

  download.fetch_mnist = functools.partial(download.fetch_mnist, mirrors=(serve(mirror),), carrier_fetcher=no_carrier)
  prepare.prepare_data(data_dir, validation_size=50)


if __name__ == '__main__':
  main(sys.argv[1])
