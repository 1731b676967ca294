"""The "after" of the port: TPUEstimator's model_fn and input_fn (mnist_tpu.py), and what exists
only on this side: deployment.py (which shard an input_fn call reads, eval padding), host_call.py
(summaries leave the device), run_config.py (RunConfig/TPUConfig), cluster.py (where the TPU is) and
accelerator_types.py (what a Cloud TPU type is made of).
"""
