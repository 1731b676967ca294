"""How many TPU hosts and cores a Cloud TPU accelerator type has (v2-8, v3-32, v4-8, ...), without
asking a TPU.

TPUEstimator never needs this: with TPUConfig(num_shards=None) it counts the cores and hosts itself,
from the devices the TPU master lists (tensorflow/python/tpu/tpu_system_metadata.py,
_query_tpu_system_metadata; a host is one `task` of the TPU job). Only the readiness check
(--mode=check_tpu), which runs without a TPU, and the flag checks need the shape in advance, and
they take it from here.

What the names mean (Cloud TPU documentation, cloud.google.com/tpu/docs/system-architecture-tpu-vm
and cloud.google.com/tpu/docs/v4):
  * v2 and v3: the number is TensorCores; each is one TensorFlow TPU device, and each host has 4
  chips of 2 cores,
    i.e. 8 cores: v3-8 = 1 host x 8 cores, v3-32 = 4 hosts x 8 cores.
  * v4: the number is TensorCores too, but the two cores of a chip form one device (megacore), so
  TensorFlow sees
    half as many cores, 4 per host: v4-8 = 1 host x 4 cores, v4-32 = 4 hosts x 4 cores.
Later generations (v5e, v5p, v6e) are left out: they need the PJRT runtime, and whether TPUEstimator
runs there is not established (tensorflow/tensorflow#90807).
"""
import collections
import re

from estimator_tpu.runtime.errors import UserError

TPU_TYPE = re.compile(r'^v(?P<generation>[234])-(?P<tensorcores>\d+)$')
# generation -> (TensorCores per TensorFlow TPU device, TensorFlow TPU devices per host)
GENERATIONS = {'2': (1, 8), '3': (1, 8), '4': (2, 4)}
# What the check assumes without --tpu_type: a v2/v3 host.
DEFAULT_CORES_PER_HOST = 8
KNOWN = ('v2-8, v2-32, v3-8, v3-32, v3-128, v4-8, v4-32, ... (v2, v3 or v4, then the TensorCore '
         'count)')


class SliceShape(collections.namedtuple('SliceShape', ['name', 'num_hosts', 'cores_per_host'])):
  """A TPU slice as TensorFlow sees it: hosts (TPU workers) x TPU cores (devices) per host."""

  @property
  def num_cores(self):
    return self.num_hosts * self.cores_per_host

  def describe(self):
    return '%d host%s x %d cores = %d cores' % (self.num_hosts, '' if self.num_hosts == 1 else 's',
                                                self.cores_per_host, self.num_cores)


def parse_tpu_type(tpu_type):
  """SliceShape of an accelerator type such as 'v3-32'; UserError for a name this module does not
  know."""
  match = TPU_TYPE.match(tpu_type or '')
  if not match:
    raise UserError('unknown TPU type %r.' % tpu_type, 'pass one of %s.' % KNOWN)
  per_device, per_host = GENERATIONS[match.group('generation')]
  tensorcores = int(match.group('tensorcores'))
  devices = tensorcores // per_device
  if tensorcores % per_device or devices % per_host and devices > per_host:
    raise UserError('%r is not a slice size Cloud TPU offers.' % tpu_type,
                    'pass one of %s.' % KNOWN)
  return SliceShape(tpu_type, max(1, devices // per_host), min(devices, per_host))


def shape_from_cores(num_cores, cores_per_host=DEFAULT_CORES_PER_HOST):
  """The slice for `num_cores` cores when only the count is known: full hosts of `cores_per_host`
  (v2/v3: 8)."""
  per_host = min(num_cores, cores_per_host)
  if num_cores % per_host:
    raise UserError('%d cores do not fill hosts of %d cores.' % (num_cores, per_host),
                    'pass the core count of a real slice (--num_shards=8, 32, 128, ...) or name it '
                    'with --tpu_type.')
  return SliceShape('%d cores' % num_cores, num_cores // per_host, per_host)
