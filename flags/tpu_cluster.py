"""Where the computation runs: local CPU, a named Cloud TPU, or an explicit grpc:// master."""
from absl import flags

from estimator_tpu.runtime.preflight import GRPC_ADDRESS
from flags import modes


def define_tpu_cluster_flags(fv=flags.FLAGS):
  flags.DEFINE_bool('use_tpu', True, 'Run on a TPU. --use_tpu=false runs the same TPUEstimator on the local CPU.',
                    flag_values=fv)
  flags.DEFINE_string('tpu_name', None, "Name of the Cloud TPU Node to use (resolved with TPUClusterResolver), or "
                      "'local' on a TPU VM, whose TPU is attached to this machine (TensorFlow 2.x only).",
                      flag_values=fv)
  flags.DEFINE_string('tpu_zone', None, 'GCE zone of the Cloud TPU; looked up from the VM when omitted.',
                      flag_values=fv)
  flags.DEFINE_string('gcp_project', None, 'GCP project of the Cloud TPU; looked up from the VM when omitted.',
                      flag_values=fv)
  flags.DEFINE_string('master', None, "TPU worker address grpc://HOST:PORT; '' (with --use_tpu=false) is local.",
                      flag_values=fv)
  flags.DEFINE_bool('eval_on_tpu', True, 'Evaluate on the TPU (input SLICED over its cores, see '
                    'docs/SCALING.md); false: evaluate on the CPU of the TPU host (TPUEstimator eval_on_tpu=False). '
                    'Prediction runs on the TPU either way.', flag_values=fv)
  flags.DEFINE_bool('export_to_tpu', None, '--mode=export: also write a metagraph for serving on TPU (tags '
                    'serve,tpu) next to the CPU one. Default: true with --use_tpu. Works without a TPU, e.g. on the '
                    'VM after training.', flag_values=fv)

  flags.register_validator(
      'master', lambda value: value is None or value == '' or bool(GRPC_ADDRESS.match(value)),
      message="--master must be '' (local) or grpc://HOST:PORT, e.g. --master=grpc://10.240.1.2:8470.",
      flag_values=fv)
  flags.register_multi_flags_validator(
      ['use_tpu', 'tpu_name', 'master'],
      lambda f: not f['use_tpu'] or bool(f['tpu_name']) or bool(f['master']) or modes.checking_tpu(fv),
      message="with --use_tpu=true name the TPU: --tpu_name=NAME (or --master=grpc://HOST:PORT); "
              "for a local run pass --use_tpu=false --master=''.",
      flag_values=fv)
  flags.register_multi_flags_validator(
      ['tpu_name', 'master'], lambda f: not (f['tpu_name'] and f['master']),
      message='--tpu_name and --master both say where the TPU is; pass only one of them.',
      flag_values=fv)
  flags.register_multi_flags_validator(
      ['use_tpu', 'tpu_name', 'tpu_zone', 'gcp_project'],
      lambda f: f['use_tpu'] or not (f['tpu_name'] or f['tpu_zone'] or f['gcp_project']),
      message='--tpu_name/--tpu_zone/--gcp_project are set but --use_tpu=false; drop them or pass --use_tpu=true.',
      flag_values=fv)
