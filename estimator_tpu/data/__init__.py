"""MNIST on disk and on gs://: fetching it, the IDX format, the TFRecord layout, preparing the splits.

Nothing in here knows about models or routes; every route reads the same TFRecords through records.py.
"""
