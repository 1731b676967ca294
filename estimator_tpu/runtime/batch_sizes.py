"""The defaults of a run whose --batch_size, --eval_batch_size or --learning_rate is left unset: they depend on
where it runs, this CPU or a TPU.

Global batches, all cores together. The local ones suit this project's CPU runs, the TPU ones 8 cores of 128
examples; each recipe was chosen on the validation split and measured on test in five seeded runs
(docs/BENCHMARKS.md, bench/default_runs.py; the TPU one on this CPU, which applies the same updates: with the mean
over the cores, an 8-core step at global batch 1,024 is one device's step at batch 1,024).
"""
LOCAL_BATCH_SIZE = 128
TPU_BATCH_SIZE = 1024
LOCAL_EVAL_BATCH_SIZE = 1000  # divides the 10,000 MNIST test images: no padding off TPU
# A power of two, so it splits evenly over the cores of any slice up to 1,024 cores (8, 4 on a v4-8, 32, 128, ...);
# exact evaluation pads the last batch (10,000 test images: 10 batches, 240 rows of weight 0).
TPU_EVAL_BATCH_SIZE = 1024
# Adam's initial rate, down to 0 along half a cosine over --train_steps (flags/training.py).
LOCAL_LEARNING_RATE = 2e-3
TPU_LEARNING_RATE = 2e-3


def effective_batch_size(batch_size, use_tpu):
  return batch_size if batch_size is not None else (TPU_BATCH_SIZE if use_tpu else LOCAL_BATCH_SIZE)


def effective_eval_batch_size(eval_batch_size, use_tpu):
  if eval_batch_size is not None:
    return eval_batch_size
  return TPU_EVAL_BATCH_SIZE if use_tpu else LOCAL_EVAL_BATCH_SIZE


def effective_learning_rate(learning_rate, use_tpu):
  if learning_rate is not None:
    return learning_rate
  return TPU_LEARNING_RATE if use_tpu else LOCAL_LEARNING_RATE


def resolve(fv, use_tpu):
  """Sets fv.batch_size, fv.eval_batch_size and fv.learning_rate, where unset, to the defaults for a run on the
  TPU or not."""
  fv.batch_size = effective_batch_size(fv.batch_size, use_tpu)
  fv.eval_batch_size = effective_eval_batch_size(fv.eval_batch_size, use_tpu)
  if 'learning_rate' in fv:
    fv.learning_rate = effective_learning_rate(fv.learning_rate, use_tpu)


def tpu_default_args():
  """The defaults of a TPU run as explicit flags, for a run on this CPU that measures them (bench/default_runs.py)."""
  return ['--batch_size=%d' % TPU_BATCH_SIZE, '--eval_batch_size=%d' % TPU_EVAL_BATCH_SIZE,
          '--learning_rate=%g' % TPU_LEARNING_RATE]
