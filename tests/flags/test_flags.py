"""Flag definitions and validation, on a private FlagValues so tests don't share state."""
import pytest
from absl import flags

from flags import training
from support.programs import LOCAL_TPU_ARGS as LOCAL
from support.programs import parse
from estimator_tpu.runtime import batch_sizes

TPU_PATHS = ['--model_dir=gs://b/model', '--data_dir=gs://b/data']


def test_local_defaults():
  fv = parse(LOCAL)
  assert (fv.use_tpu, fv.master, fv.iterations, fv.num_shards) == (False, '', 50, None)
  assert batch_sizes.effective_batch_size(fv.batch_size, fv.use_tpu) == training.LOCAL_BATCH_SIZE


def test_tpu_by_name_gets_the_tpu_batch():
  fv = parse(['--tpu_name=my-tpu', '--tpu_zone=us-central1-b', '--gcp_project=p'] + TPU_PATHS)
  assert fv.use_tpu and fv.tpu_name == 'my-tpu'
  assert batch_sizes.effective_batch_size(fv.batch_size, fv.use_tpu) == training.TPU_BATCH_SIZE


def test_the_learning_rate_default_depends_on_where_the_run_is():
  local, tpu = parse(LOCAL), parse(['--tpu_name=t'] + TPU_PATHS)
  assert local.learning_rate is None and tpu.learning_rate is None
  assert training.learning_rate_args(local)['learning_rate'] == batch_sizes.LOCAL_LEARNING_RATE
  assert training.learning_rate_args(tpu)['learning_rate'] == batch_sizes.TPU_LEARNING_RATE
  batch_sizes.resolve(tpu, use_tpu=True)
  assert (tpu.batch_size, tpu.eval_batch_size, tpu.learning_rate) == (
      batch_sizes.TPU_BATCH_SIZE, batch_sizes.TPU_EVAL_BATCH_SIZE, batch_sizes.TPU_LEARNING_RATE)
  given = parse(['--tpu_name=t', '--learning_rate=0.01', '--batch_size=256'] + TPU_PATHS)
  batch_sizes.resolve(given, use_tpu=True)
  assert (given.learning_rate, given.batch_size) == (0.01, 256)
  # What bench/default_runs.py --defaults=tpu gives a run on this CPU: the same values, as flags.
  measured = parse(LOCAL + batch_sizes.tpu_default_args())
  batch_sizes.resolve(measured, use_tpu=False)
  assert (measured.batch_size, measured.learning_rate) == (tpu.batch_size, tpu.learning_rate)


def test_master_address_is_accepted():
  assert parse(['--master=grpc://10.0.0.2:8470'] + TPU_PATHS).master == 'grpc://10.0.0.2:8470'


@pytest.mark.parametrize('args, message', [
    (['--use_tpu=false', '--train_steps=0'], 'train_steps'),
    (['--use_tpu=false', '--batch_size=-4'], 'batch_size'),
    (['--use_tpu=false', '--iterations=0'], 'iterations'),
    (['--use_tpu=false', '--master=localhost:8470'], 'grpc://HOST:PORT'),
    ([], 'name the TPU'),
    (['--tpu_name=t', '--master=grpc://h:1'] + TPU_PATHS, 'pass only one of them'),
    (['--use_tpu=false', '--tpu_name=t'], 'drop them or pass --use_tpu=true'),
    (['--tpu_name=t', '--batch_size=100', '--num_shards=8'] + TPU_PATHS, 'divisible by the core count'),
    (['--tpu_name=t', '--num_shards=3'] + TPU_PATHS, 'divisible by the core count'),
    (['--tpu_name=t', '--eval_batch_size=1000', '--tpu_type=v3-32'] + TPU_PATHS, 'divisible by the core count'),
    (['--tpu_name=t', '--tpu_type=v4-8', '--num_shards=8'] + TPU_PATHS, 'v4-8: --num_shards=4'),
    (['--tpu_name=t', '--tpu_type=v5e-8'] + TPU_PATHS, '--tpu_type must name a Cloud TPU slice'),
    (['--tpu_name=t', '--tpu_type=v6e-8', '--num_shards=4'] + TPU_PATHS, 'one per chip'),
    (['--tpu_name=t', '--model_dir=/tmp/m', '--data_dir=gs://b/d'], 'gs:// paths'),
    (['--tpu_name=t', '--model_dir=gs://b/m'], 'gs:// paths'),
    (['--use_tpu=false', '--mode=evaluate'], 'use a trained model'),
    (['--use_tpu=false', '--mode=export'], 'use a trained model'),
    (['--use_tpu=false', '--mode=train', '--checkpoint_path=/m/model.ckpt-5'], 'pass --warm_start_from instead'),
    (['--use_tpu=false', '--mode=predict', '--model_dir=/m', '--warm_start_from=/w'], 'pass --checkpoint_path'),
    (['--tpu_name=t', '--mode=evaluate', '--checkpoint_path=/m/model.ckpt-5'] + TPU_PATHS,
     'TPU workers read checkpoints'),
    (['--tpu_name=t', '--warm_start_from=/w'] + TPU_PATHS, 'TPU workers read checkpoints'),
    (['--use_tpu=false', '--mode=serve'], 'mode'),
    (['--use_tpu=false', '--num_predictions=-2'], 'num_predictions'),
    (['--use_tpu=false', '--eval_steps=0'], 'eval_steps'),
])
def test_bad_values_are_rejected_with_the_fix(args, message):
  with pytest.raises(flags.IllegalFlagValueError, match=message):
    parse(args)


def test_check_tpu_needs_no_tpu_and_leaves_the_tpu_rules_to_the_check():
  assert parse(['--mode=check_tpu']).mode == 'check_tpu'
  fv = parse(['--mode=check_tpu', '--master=grpc://127.0.0.1:8470', '--model_dir=/tmp/m', '--batch_size=100'])
  assert (fv.model_dir, fv.batch_size) == ('/tmp/m', 100)


def test_core_count_comes_from_the_tpu_unless_given():
  fv = parse(['--tpu_name=t', '--batch_size=1000', '--eval_batch_size=1000'] + TPU_PATHS)
  assert fv.num_shards is None  # TPUEstimator counts the cores; it checks the batches then
  assert parse(['--tpu_name=t', '--tpu_type=v4-8', '--batch_size=1020'] + TPU_PATHS).tpu_type == 'v4-8'


def test_tpu_vm_and_export_use_this_machines_disk():
  assert parse(['--tpu_name=local', '--model_dir=/tmp/m', '--data_dir=/tmp/d']).tpu_name == 'local'
  fv = parse(['--tpu_name=t', '--mode=export', '--model_dir=/tmp/m', '--checkpoint_path=/tmp/m/model.ckpt-5'])
  assert fv.use_tpu and fv.mode == 'export'


def test_batch_not_divisible_is_fine_on_cpu():
  assert parse(LOCAL + ['--batch_size=100', '--num_shards=8']).batch_size == 100


def test_flagfile(tmp_path):
  flagfile = tmp_path / 'local.flags'
  flagfile.write_text('--use_tpu=false\n--master=\n--train_steps=7\n--batch_size=32\n')
  fv = parse(['--flagfile=%s' % flagfile])
  assert (fv.use_tpu, fv.train_steps, fv.batch_size) == (False, 7, 32)


def test_mode_defaults_keep_the_classic_run():
  fv = parse(LOCAL)
  assert (fv.mode, fv.eval_split, fv.eval_steps, fv.num_predictions) == ('all', 'test', None, 10)


@pytest.mark.parametrize('args', [
    ['--mode=evaluate', '--model_dir=/m'],
    ['--mode=predict', '--checkpoint_path=/m/model.ckpt-5', '--num_predictions=-1'],
    ['--mode=train', '--warm_start_from=/w'],
    ['--mode=train_and_evaluate', '--eval_every_steps=100', '--eval_split=validation'],
])
def test_mode_combinations_that_make_sense(args):
  assert parse(LOCAL + args).mode == args[0].split('=')[1]
