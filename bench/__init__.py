"""Benchmarks of the mnist_tpu training path on the local CPU (not tests): see run_benchmarks.py."""
