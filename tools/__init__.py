"""Programs around the three routes, run as modules from the repository root: `python -m tools.prepare_data`,
`python -m tools.local_cluster`, `python -m tools.mnist_cluster`."""
