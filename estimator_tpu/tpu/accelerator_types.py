"""What a Cloud TPU accelerator type is (v2-8, v3-32, v4-8, v5litepod-8, v5p-16, v6e-8, ...),
without asking a TPU: its hosts, the TPU devices TensorFlow lists on each, and the runtimes offered.

TPUEstimator never needs this: with TPUConfig(num_shards=None) it counts the cores and hosts itself,
from the devices the TPU master lists (tensorflow/python/tpu/tpu_system_metadata.py,
_query_tpu_system_metadata: a host is one `task` of the TPU job, i.e. one TPU VM). Only the
readiness checks (--mode=check_tpu), which run without a TPU, and the flag checks need the shape
in advance, and they take it from here. docs/RUNNING.md ("What you can rent") has the same table.

The Cloud TPU documentation, per generation (copies dated 2026-04-09 to 2026-08-26):
  * v2, v3 (cloud.google.com/tpu/docs/v3): N counts TensorCores, 2 per chip, 4 chips per host;
    each TensorCore is one TensorFlow TPU device: v3-8 = 1 host x 8, v3-32 = 4 hosts x 8.
  * v4 (cloud.google.com/tpu/docs/v4): N counts TensorCores, 2 per chip, 4 chips per host; the two
    cores of a chip act as one device (megacore), so TensorFlow is taken to list 4 per host
    (v4-8 = 1 host x 4). The docs state megacore, not TensorFlow's count: see UNVERIFIED.
  * v5p (cloud.google.com/tpu/docs/v5p): as v4 ("v5p-32 ... 32 TensorCores (16 chips)"), 4 chips
    per host, megacore; the same assumption.
  * v5e (cloud.google.com/tpu/docs/v5e; type v5litepod-N) and v6e (cloud.google.com/tpu/docs/v6e):
    N counts chips of one TensorCore each; a TPU VM holds 1, 4 or 8 chips: v5litepod-8 and v6e-8
    are one VM of 8, larger slices are VMs of 4 chips (v6e: "half-host VMs, each with 4 TPU chips").
Runtimes (cloud.google.com/tpu/docs/runtimes): v2, v3 and v4 TPU VMs run TensorFlow 2.15+ with the
StreamExecutor (`tpu-vm-tf-2.15.1-se`) or PJRT (`-pjrt`) device API; "TPU v5e and future TPU
generations only support PJRT" (v5e, v5p, v6e: `tpu-vm-tf-2.15.1-pjrt` and newer). TPUEstimator
is StreamExecutor-era graph code, reported failing on PJRT ("No TPU platform registered",
tensorflow/tensorflow#90807): for those types the TPUStrategy route (mnist_keras.py) is the one.
TPU Nodes (v2, v3; the only architecture of TensorFlow 1.15) lost support on 2025-04-15
(GoogleCloudPlatform/magic-modules#13759).
"""
import collections
import re

from estimator_tpu.runtime.errors import UserError

STREAM_EXECUTOR, PJRT = 'se', 'pjrt'
UNVERIFIED = ('one TensorFlow device per v4/v5p chip (megacore) is what the Cloud TPU docs imply '
              'and what TPU_FACTS.md records for v4-8 (4 cores); no TensorFlow source or Google '
              'page states it, so --num_shards overrides it, and the run counts its own cores')


class Generation(collections.namedtuple('Generation', [
    'name', 'prefix', 'counts', 'tensorcores_per_device', 'chips_per_vm', 'sizes', 'runtimes',
    'doc', 'device_count_verified'])):
  """A TPU generation: `prefix` + N names a slice, N counting `counts` ('TensorCores' or 'chips').

  `chips_per_vm(chips)`: the chips of each TPU VM (TensorFlow's host) of a slice of `chips`.
  `sizes(n)`: whether N is a slice Cloud TPU offers. `runtimes`: the TPU VM device APIs offered.
  """

  @property
  def pjrt_only(self):
    return self.runtimes == (PJRT,)

  def software_version(self, tf_version='2.15.1', multi_host=False):
    """The TPU VM software version to create the slice with (cloud.google.com/tpu/docs/runtimes)."""
    return 'tpu-vm-tf-%s%s-%s' % (tf_version, '-pod' if multi_host else '',
                                  STREAM_EXECUTOR if STREAM_EXECUTOR in self.runtimes else PJRT)


def _v2_v3_sizes(largest):
  return lambda n: n in (8, 32, 128, 256, 512, 1024, 2048) and n <= largest


def _chips_sizes(n):
  return n in (1, 4, 8, 16, 32, 64, 128, 256)


def _four_chip_vms(chips):
  del chips
  return 4


def _half_host_vms(chips):
  """v5e/v6e: slices of up to 8 chips are one VM; larger ones are VMs of 4 chips."""
  return chips if chips <= 8 else 4


DOCS = 'https://cloud.google.com/tpu/docs/'
GENERATIONS = collections.OrderedDict((g.name, g) for g in (
    Generation('v2', 'v2-', 'TensorCores', 1, _four_chip_vms, _v2_v3_sizes(512),
               (STREAM_EXECUTOR, PJRT), DOCS + 'system-architecture-tpu-vm', True),
    Generation('v3', 'v3-', 'TensorCores', 1, _four_chip_vms, _v2_v3_sizes(2048),
               (STREAM_EXECUTOR, PJRT), DOCS + 'v3', True),
    # v4-8 to v4-64, then multiples of 64 chips (128 TensorCores) up to the 4,096-chip pod.
    Generation('v4', 'v4-', 'TensorCores', 2, _four_chip_vms,
               lambda n: n in (8, 16, 32, 64) or (n % 128 == 0 and 0 < n <= 8192),
               (STREAM_EXECUTOR, PJRT), DOCS + 'v4', False),
    Generation('v5e', 'v5litepod-', 'chips', 1, _half_host_vms, _chips_sizes, (PJRT,),
               DOCS + 'v5e', True),
    # v5p-8 (2x2x1) up to 16x16x24 = 12,288 TensorCores, in whole hosts of 4 chips.
    Generation('v5p', 'v5p-', 'TensorCores', 2, _four_chip_vms,
               lambda n: n % 8 == 0 and 0 < n <= 12288, (PJRT,), DOCS + 'v5p', False),
    Generation('v6e', 'v6e-', 'chips', 1, _half_host_vms, _chips_sizes, (PJRT,), DOCS + 'v6e',
               True),
))
TPU_TYPE = re.compile(r'^(?P<prefix>v2-|v3-|v4-|v5litepod-|v5p-|v6e-)(?P<count>\d+)$')
# What the check assumes without --tpu_type: a v2/v3 host.
DEFAULT_CORES_PER_HOST = 8
KNOWN = ('v2-8, v3-8, v3-32, v4-8, v4-32, v5p-8 (N TensorCores); v5litepod-1, -4, -8, -16 (v5e) '
         'or v6e-1, -4, -8, -16 (N chips); larger slices likewise')


class SliceShape(collections.namedtuple('SliceShape', ['name', 'num_hosts', 'cores_per_host',
                                                       'generation'])):
  """A TPU slice as TensorFlow sees it: hosts (TPU VMs, TensorFlow's workers) x TPU cores (devices)
  per host; `generation` is a Generation, or None when only the core count is known."""

  def __new__(cls, name, num_hosts, cores_per_host, generation=None):
    return super(SliceShape, cls).__new__(cls, name, num_hosts, cores_per_host, generation)

  @property
  def num_cores(self):
    return self.num_hosts * self.cores_per_host

  @property
  def pjrt_only(self):
    return bool(self.generation and self.generation.pjrt_only)

  def describe(self):
    return '%s x %s = %s' % (_plural(self.num_hosts, 'host'), _plural(self.cores_per_host, 'core'),
                             _plural(self.num_cores, 'core'))


def _plural(count, noun):
  return '%d %s%s' % (count, noun, '' if count == 1 else 's')


def parse_tpu_type(tpu_type):
  """SliceShape of an accelerator type such as 'v3-32'; UserError for a name this module does not
  know."""
  match = TPU_TYPE.match(tpu_type or '')
  if not match:
    if re.match(r'^v5e-\d+$', tpu_type or ''):
      raise UserError('unknown TPU type %r: v5e accelerator types are named v5litepod-N.'
                      % tpu_type, 'pass --tpu_type=v5litepod-%s (N chips).'
                      % tpu_type.split('-')[1])
    raise UserError('unknown TPU type %r.' % tpu_type, 'pass one of %s.' % KNOWN)
  generation = next(g for g in GENERATIONS.values() if g.prefix == match.group('prefix'))
  count = int(match.group('count'))
  if not generation.sizes(count):
    raise UserError('%r is not a %s slice size Cloud TPU offers (%s).'
                    % (tpu_type, generation.name, generation.doc), 'pass one of %s.' % KNOWN)
  tensorcores_per_chip = 2 if generation.counts == 'TensorCores' else 1
  chips = count // tensorcores_per_chip
  per_vm = min(chips, generation.chips_per_vm(chips))
  devices_per_chip = tensorcores_per_chip // generation.tensorcores_per_device
  return SliceShape(tpu_type, chips // per_vm, per_vm * devices_per_chip, generation)


def shape_from_cores(num_cores, cores_per_host=DEFAULT_CORES_PER_HOST):
  """The slice for `num_cores` cores when only the count is known: full hosts of `cores_per_host`
  (v2/v3: 8)."""
  per_host = min(num_cores, cores_per_host)
  if num_cores % per_host:
    raise UserError('%d cores do not fill hosts of %d cores.' % (num_cores, per_host),
                    'pass the core count of a real slice (--num_shards=8, 32, 128, ...) or name it '
                    'with --tpu_type.')
  return SliceShape('%d cores' % num_cores, num_cores // per_host, per_host)
