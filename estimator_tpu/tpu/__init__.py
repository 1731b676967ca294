"""The "after" of the port: what TPUEstimator needs (mnist_tpu.py).

model_fn.py and input_fn.py are the twins of estimator_tpu/estimator/'s files; host_call.py (summaries leave the
device), run_config.py (RunConfig/TPUConfig), cluster.py (where the TPU is) and serving.py (export) exist only on
this side.
"""
