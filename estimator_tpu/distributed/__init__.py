"""Training one plain Estimator across processes with TF_CONFIG (tools/mnist_cluster.py, tools/local_cluster.py).

TensorFlow's CPU/GPU route to scale; a TPU pod slice is TPUEstimator's (README, docs/SCALING.md).
"""
