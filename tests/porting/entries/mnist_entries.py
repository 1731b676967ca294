"""Data for the port proofs of the project's own Estimator program (mnist.py + estimator_tpu/estimator): the
tests' tiny synthetic digits as TFRecords (conftest.py's data_dir)."""
from estimator_tpu.data import records
from estimator_tpu.data import synthetic

VALIDATION = 50


def write_data(data_dir):
  synthetic.write_idx_dir(data_dir + '/idx')
  records.convert_idx_dir(data_dir + '/idx', data_dir, validation_size=VALIDATION)
