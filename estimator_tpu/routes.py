"""What a program hands the runner (estimator_tpu/runner.py): its Route, and the Job each of its estimators is
built for. The phases of a run and the split predictions come from are named here once."""
import collections
import os

TRAIN, EVALUATE, PREDICT, EXPORT = 'train', 'evaluate', 'predict', 'export'
PREDICT_SPLIT = 'test'


class Route(collections.namedtuple('Route', ['program', 'tpu', 'build_model_fn', 'build_estimator', 'train',
                                             'evaluate', 'predict', 'export'])):
  """What a program hands over (mnist.py, mnist_tpu.py): its file; whether it is the TPU route (TPUEstimator, with
  --use_tpu and the TPU flags); and build_model_fn(fv, model_dir) -> model_fn; build_estimator(fv, job) ->
  estimator; train(fv, estimator, max_steps, hooks); evaluate(fv, estimator, checkpoint, hooks) -> metrics;
  predict(fv, estimator, checkpoint, count) -> outputs; export(fv, estimator, export_dir, checkpoint) -> path.
  """

  @property
  def name(self):
    """The program's name: mnist_tpu for mnist_tpu.py; its default model directory is named after it."""
    return os.path.splitext(os.path.basename(self.program))[0]

  @property
  def results_file(self):
    """What `all` writes into the model directory: mnist_tpu_results.json for mnist_tpu.py."""
    return self.name + '_results.json'

  def on_tpu(self, fv):
    """True for a run on a TPU: the TPU route without --use_tpu=false."""
    return self.tpu and fv.use_tpu


# What an estimator is built for: the model directory, the resolved TPU (None off the TPU or when --master names
# it), the checkpoint a new run starts from (--warm_start_from), the graph seed of a training run (None
# otherwise; runtime/seeds.py) and the phase it serves: TRAIN, EVALUATE, PREDICT or EXPORT.
Job = collections.namedtuple('Job', ['model_dir', 'cluster', 'warm_start_from', 'graph_seed', 'phase'])
