"""Installs the estimator_tpu library with the TensorFlow that matches the running Python.

Two supported stacks, chosen by environment markers so that one `pip install .` works for both:
  * Python 3.7  -> TensorFlow 1.15.5 (the primary target; pins below are the ones known to install).
  * Python 3.11 -> tensorflow-cpu 2.15.1 + tensorflow-estimator 2.15.0 (the last TF with TPUEstimator).
The runnable scripts (mnist_tpu.py, ...) and the `flags/` package stay in the source tree on purpose: a
top-level package named `flags` would be a poor citizen of site-packages.

LibCST is what `python -m estimator_tpu.port --write` edits code with (estimator_tpu/porting/rewrite). It is
installed with the package, not as an extra, because the console script `estimator-tpu-port` offers --write
to everyone who installs it; 0.4.9 is the last release with a Python 3.7 wheel, 1.x serves 3.9-3.11. The port
report alone never imports it (tests/porting/test_port_write.py runs it with LibCST made unimportable).
pandas is for the tests only, and earns its place there: the custom_estimator fixture reads its CSVs with
pd.read_csv, as TensorFlow's custom-estimator tutorial does; the port report's rule 15 finding on it (read_csv gives
float64 columns, estimator_tpu/porting/report/data.py) and the port's float32 cast are proven by running the
original and the port on real pandas frames (tests/porting/test_port_write.py). NumPy data would not exercise that.
scikit-learn (extra `digits`) is only for the data source that ships with it, its 8x8 digits; CI installs it.
"""
import setuptools

TF1 = 'python_version < "3.8"'
TF2 = 'python_version >= "3.9" and python_version < "3.12"'
# What TensorFlow's TPUClusterResolver looks a named Cloud TPU up with (--tpu_name=NAME): googleapiclient and
# oauth2client, on TF 1.15 (its resolver imports them) and on TF 2.15 (its own copy of the Cloud TPU client does,
# when the cloud-tpu-client package is absent). Not cloud-tpu-client itself: it pins google-api-python-client 1.8,
# whose google-api-core<2 needs protobuf<4 and would move TF 2.15's protobuf 4.25 (or google-auth) back. The
# versions are the ones installed and tested here (tests/tpu/test_named_tpu.py); google-api-core stays at 2.27,
# the last release that does not warn about the Python version when TensorFlow imports it. proto-plus and
# googleapis-common-protos are pinned on TF 2.15 because their newest releases ask for protobuf 5+.
TPU_CLIENT = [
    'google-api-python-client==2.198.0; ' + TF1,
    'google-api-python-client==2.202.0; ' + TF2,
    'google-api-core==2.27.0',
    'oauth2client==4.1.3',
    'proto-plus==1.27.1; ' + TF1,
    'proto-plus==1.28.2; ' + TF2,
    'googleapis-common-protos==1.73.0; ' + TF1,
    'googleapis-common-protos==1.75.0; ' + TF2,
]

setuptools.setup(
    name='estimator_tpu',
    version='0.1.0',
    description='Reference implementation of the TensorFlow TPUEstimator mnist_tpu pattern.',
    packages=setuptools.find_packages(include=['estimator_tpu', 'estimator_tpu.*']),
    python_requires='>=3.7, <3.12',
    install_requires=[
        'absl-py',
        'tensorflow==1.15.5; ' + TF1,
        'numpy==1.18.5; ' + TF1,
        'protobuf==3.20.3; ' + TF1,
        'h5py==2.10.0; ' + TF1,
        'tensorflow-cpu==2.15.1; ' + TF2,
        'tensorflow-estimator==2.15.0; ' + TF2,
        'numpy<2; ' + TF2,
        'libcst==0.4.9; ' + TF1,
        'libcst>=1.1,<2; ' + TF2,
    ],
    extras_require={
        'test': ['pytest<8', 'pandas<1.4; ' + TF1, 'pandas<2.3; ' + TF2],
        'tpu': TPU_CLIENT,
        # `python -m tools.prepare_data --source=digits` only: scikit-learn ships its 8x8 digits (the versions whose
        # wheels install beside numpy 1.18.5 and 1.26).
        'digits': ['scikit-learn==1.0.2; ' + TF1, 'scipy==1.7.3; ' + TF1,
                   'scikit-learn==1.5.2; ' + TF2, 'scipy==1.14.1; ' + TF2],
    },
    # Both run on the user's code from an installed copy: neither needs the flags/ package or the scripts.
    entry_points={
        'console_scripts': [
            'estimator-tpu-port = estimator_tpu.porting.cli:main',  # the report reads source only, no TensorFlow
            'estimator-tpu-readiness = estimator_tpu.readiness:main',
        ],
    },
)
