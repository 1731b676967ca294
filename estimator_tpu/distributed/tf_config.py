"""TF_CONFIG, the environment variable that tells each process of a TensorFlow cluster the cluster and its task.

  {"cluster": {"chief": ["host0:port"], "worker": ["host1:port", ...], "ps": ["host2:port"]},
   "task": {"type": "worker", "index": 0}}

The evaluator is not in "cluster"; its task is {"type": "evaluator", "index": 0}. This module does not import
TensorFlow, so that a launcher (local_cluster.py) can use it without paying for the import.
"""
import collections
import json
import os

from estimator_tpu.runtime.errors import UserError

NAME = 'TF_CONFIG'
CHIEF, WORKER, PS, EVALUATOR = 'chief', 'worker', 'ps', 'evaluator'
TASK_TYPES = (CHIEF, WORKER, PS, EVALUATOR)
TRAINING_TASK_TYPES = (CHIEF, WORKER)
EXAMPLE = ('TF_CONFIG=\'{"cluster": {"chief": ["HOST:PORT"], "worker": ["HOST:PORT"], "ps": ["HOST:PORT"]}, '
           '"task": {"type": "worker", "index": 0}}\'')


class Task(collections.namedtuple('Task', ['type', 'index'])):
  """One process's part in the cluster."""

  @property
  def name(self):
    return '%s-%d' % (self.type, self.index)

  @property
  def trains(self):
    return self.type in TRAINING_TASK_TYPES

  @property
  def is_chief(self):
    return self.type == CHIEF


def encode(cluster, task):
  """The TF_CONFIG value for `task` (a Task) of `cluster` ({job: [address, ...]})."""
  return json.dumps({'cluster': cluster, 'task': {'type': task.type, 'index': task.index}})


def read():
  """This process's TF_CONFIG as a dict ({} when unset); a UserError when it is not a JSON object."""
  text = os.environ.get(NAME, '').strip()
  if not text:
    return {}
  try:
    config = json.loads(text)
  except ValueError as e:
    raise UserError('TF_CONFIG is not valid JSON (%s).' % e, 'set it to a JSON object, e.g. %s.' % EXAMPLE)
  if not isinstance(config, dict):
    raise UserError('TF_CONFIG is %r, not a JSON object.' % text, 'set it like %s.' % EXAMPLE)
  return config


def describe(cluster):
  """'1 chief, 1 ps, 2 worker' for a cluster dict."""
  return ', '.join('%d %s' % (len(addresses), job) for job, addresses in sorted(cluster.items()))
