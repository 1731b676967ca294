"""Files that appear complete or not at all, even when the writer is killed.

Writers put data under a temporary name next to the final one and rename it when it is complete (tf.io.gfile, so
the same code serves local disks and gs://):
  * on a local disk a rename within one directory is atomic;
  * Cloud Storage has no rename: TensorFlow copies the object, then deletes the old name. But an object only ever
    exists whole: TF's GCS writer keeps the file on local disk and uploads it in one request when it is closed,
    and a copy creates the new object in one step. So on gs:// too, a final name never holds part of a file.
Why a temporary name on gs:// as well, when an upload is all-or-nothing anyway: a writer that fails part-way (an
exception, not a kill) still closes its file, and TF then uploads whatever had been written. Under the temporary
name that partial object is never read (the programs only read fixed names) and the writer's cleanup deletes it.
What is not atomic on either: a set of files. Several renames land one after the other (milliseconds apart; on
gs:// each is a copy), so see records.write_splits for how a set of splits is published.

A writer killed with `kill -9` cannot clean up, so its temporary file stays behind (on gs:// only if the kill came
after the upload and before the copy: an upload in progress leaves nothing). The temporary name records the host
and process id, and the next writer of the same file removes leftovers whose process is gone. Files of writers
that are still running, or that ran on another host, are never touched.
"""
import os
import socket
import uuid

import tensorflow.compat.v1 as tf
from absl import logging

TEMP_MARKER = '.tmp-'


def _host():
  # '-' separates the fields of a temporary name, so a host name must not contain one.
  return socket.gethostname().replace('-', '_') or 'host'


def temp_path(path):
  """Returns a fresh temporary name for `path`: `<path>.tmp-<host>-<pid>-<random>`."""
  return '%s%s%s-%d-%s' % (path, TEMP_MARKER, _host(), os.getpid(), uuid.uuid4().hex[:8])


def _writer_of(temp):
  """Returns (host, pid) encoded in a temporary name, or None if it is not one of ours."""
  fields = temp.rsplit(TEMP_MARKER, 1)[-1].split('-')
  if len(fields) != 3 or not fields[1].isdigit():
    return None
  return fields[0], int(fields[1])


def _process_exists(pid):
  try:
    os.kill(pid, 0)  # signal 0 checks existence and permission; nothing is delivered
  except ProcessLookupError:
    return False
  except PermissionError:
    return True  # it exists, it just belongs to another user
  return True


def remove_stale_temps(path):
  """Removes temporary files of `path` left by writers on this host that no longer run; returns their names."""
  removed = []
  for temp in tf.io.gfile.glob(path + TEMP_MARKER + '*'):
    writer = _writer_of(temp)
    if writer is None or writer[0] != _host() or _process_exists(writer[1]):
      continue
    try:
      tf.io.gfile.remove(temp)
    except tf.errors.NotFoundError:
      continue  # another run cleaned it up first
    logging.warning('Removed %s, left behind by an interrupted run (process %d).', temp, writer[1])
    removed.append(temp)
  return removed


def write_text(path, text):
  """Writes `text` to `path` under a temporary name, then renames it; creates the directory if needed."""
  tf.io.gfile.makedirs(os.path.dirname(path) or '.')
  remove_stale_temps(path)
  temp = temp_path(path)
  try:
    with tf.io.gfile.GFile(temp, 'w') as f:
      f.write(text)
    tf.io.gfile.rename(temp, path, overwrite=True)
  finally:
    if tf.io.gfile.exists(temp):
      tf.io.gfile.remove(temp)
