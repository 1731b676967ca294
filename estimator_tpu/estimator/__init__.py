"""The "before" of the port: model_fn and input_fn for a plain tf.estimator.Estimator (mnist.py).

Read each file next to its twin in estimator_tpu/tpu/: every difference carries a numbered TPU rule
(estimator_tpu/rules.py).
"""
