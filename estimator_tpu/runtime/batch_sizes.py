"""The batch sizes of a run whose --batch_size or --eval_batch_size is left unset: they depend on where it runs.

Global batches, all cores together. The local ones suit this project's CPU runs (README, docs/BENCHMARKS.md).
"""
LOCAL_BATCH_SIZE = 128
TPU_BATCH_SIZE = 1024
LOCAL_EVAL_BATCH_SIZE = 1000  # divides the 10,000 MNIST test images: no padding off TPU
# A power of two, so it splits evenly over the cores of any slice up to 1,024 cores (8, 4 on a v4-8, 32, 128, ...);
# exact evaluation pads the last batch (10,000 test images: 10 batches, 240 rows of weight 0).
TPU_EVAL_BATCH_SIZE = 1024


def effective_batch_size(batch_size, use_tpu):
  return batch_size if batch_size is not None else (TPU_BATCH_SIZE if use_tpu else LOCAL_BATCH_SIZE)


def effective_eval_batch_size(eval_batch_size, use_tpu):
  if eval_batch_size is not None:
    return eval_batch_size
  return TPU_EVAL_BATCH_SIZE if use_tpu else LOCAL_EVAL_BATCH_SIZE


def resolve(fv, use_tpu):
  """Sets fv.batch_size and fv.eval_batch_size, where unset, to the defaults for a run on the TPU or not."""
  fv.batch_size = effective_batch_size(fv.batch_size, use_tpu)
  fv.eval_batch_size = effective_eval_batch_size(fv.eval_batch_size, use_tpu)


def tpu_default_args():
  """The defaults of a TPU run as explicit flags, for a run on this CPU that measures them (bench/default_runs.py)."""
  return ['--batch_size=%d' % TPU_BATCH_SIZE, '--eval_batch_size=%d' % TPU_EVAL_BATCH_SIZE]
