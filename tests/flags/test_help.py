"""--help of the programs (flags/help.py): their own flags, every one of them, grouped by concern, and none of
absl's or TensorFlow's; it exits 0. absl's own --help listed no flag at all: they are defined in flags/, not in the
program's main module."""
import subprocess
import sys

import pytest
import tensorflow.compat.v1 as tf
from absl import flags

from flags import data as data_flags
from flags import help as program_help
from flags import logs as log_flags
from flags import mnist as mnist_flags
from flags import mnist_tpu as mnist_tpu_flags
from support.paths import REPO_ROOT

TF1 = tf.__version__.startswith('1.')
NOT_OURS = ('--logtostderr', '--test_srcdir', '--runtime_oom_exit', '--only_check_args')


def define_prepare_data(fv):
  data_flags.define_data_flags(fv)
  log_flags.define_log_flags(fv)


PROGRAMS = [
    (['mnist_tpu.py'], mnist_tpu_flags.define_flags),
    (['mnist.py'], mnist_flags.define_flags),
    pytest.param(['mnist_keras.py'], mnist_tpu_flags.define_flags,
                 marks=pytest.mark.skipif(TF1, reason='mnist_keras.py is the TensorFlow 2 route')),
    (['-m', 'tools.prepare_data'], define_prepare_data),
]


@pytest.mark.parametrize('program,define', PROGRAMS)
def test_help_lists_every_own_flag_grouped_and_nothing_else(program, define):
  result = subprocess.run([sys.executable] + program + ['--help'], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
  assert result.returncode == 0, result.stderr[-2000:]
  fv = flags.FlagValues()
  define(fv)  # defined, not parsed: the validators would want a TPU named
  groups = program_help.flag_groups(fv)
  own = [flag.name for _, module_flags in groups for flag in module_flags]
  listed = [line.split()[0].split('=')[0][2:] for line in result.stdout.splitlines() if line.startswith('  --')]
  assert sorted(listed) == sorted(own) and len(own) == len(set(own))
  for module, _ in groups:  # one heading per group, before its flags
    assert '\n%s\n' % program_help.group_title(module) in result.stdout
  assert not [name for name in NOT_OURS if name in result.stdout]
  assert len(result.stdout.splitlines()) < 200


def test_a_flag_shows_its_default_and_its_help():
  fv = flags.FlagValues()
  flags.DEFINE_integer('train_steps', 2000, 'Total training steps.', flag_values=fv)
  flags.DEFINE_string('model_dir', None, 'Checkpoints and event files.', flag_values=fv)
  assert program_help.describe(fv['train_steps']) == '  --train_steps=2000\n      Total training steps.\n'
  assert program_help.describe(fv['model_dir']) == '  --model_dir\n      Checkpoints and event files.\n'
