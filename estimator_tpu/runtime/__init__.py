"""What every program needs around TensorFlow: user errors, TensorFlow errors translated, checkpoints, files that
appear whole, run results and cheap pre-flight probes. Knows nothing about models or routes."""
