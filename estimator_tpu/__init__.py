"""estimator_tpu: the TensorFlow TPUEstimator "mnist_tpu" pattern, complete and tested.

Written against `tensorflow.compat.v1` so that one code base runs on TensorFlow 1.15 and 2.15.
"""
