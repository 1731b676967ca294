"""What the TPU routes compute the network in (mnist_tpu.py, mnist_keras.py): --precision."""
from absl import flags

from estimator_tpu import model


def define_precision_flag(fv=flags.FLAGS):
  # TPU rule 20 (bfloat16): the TPU's matrix units multiply in bfloat16; computing in it halves what activations
  # cost in memory and bandwidth, while the variables and the loss stay float32.
  flags.DEFINE_enum('precision', model.FLOAT32, list(model.PRECISIONS),
                    'What the network computes in. bfloat16: under tf.tpu.bfloat16_scope() (mnist_tpu.py) or the '
                    "Keras 'mixed_bfloat16' policy with a float32 output layer (mnist_keras.py); variables, "
                    'checkpoints, logits and loss stay float32 either way. Works on the CPU too: TF 2.15 has CPU '
                    'bfloat16 kernels; TF 1.15 runs the convolutions and the softmax on its XLA_CPU device '
                    '(docs/MIGRATION.md, rule 20).', flag_values=fv)
