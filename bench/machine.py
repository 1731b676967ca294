"""What the numbers were measured on: CPU, load, memory, and the session settings every workload shares."""
import os
import platform
import resource
import sys

import tensorflow.compat.v1 as tf


def cpu_model():
  try:
    with open('/proc/cpuinfo') as f:
      for line in f:
        if line.startswith('model name'):
          return line.split(':', 1)[1].strip()
  except IOError:
    pass
  return platform.processor() or 'unknown'


def load_average():
  """1/5/15-minute load averages: how busy the shared machine was (2 cores = 2.0 is full)."""
  return [round(x, 2) for x in os.getloadavg()]


def describe():
  return {
      'cpus': os.cpu_count(),
      'cpu_model': cpu_model(),
      'python': '%d.%d.%d' % sys.version_info[:3],
      'tensorflow': tf.__version__,
      'load_average_at_start': load_average(),
  }


def peak_rss_mib():
  """Peak resident set size of this process so far (Linux reports ru_maxrss in KiB)."""
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def session_config(intra_op_threads=0, inter_op_threads=0):
  """ConfigProto for the plain sessions; 0 threads means TensorFlow's choice (one per core)."""
  return tf.ConfigProto(intra_op_parallelism_threads=intra_op_threads,
                        inter_op_parallelism_threads=inter_op_threads)
