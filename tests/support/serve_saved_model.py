"""Serves a SavedModel in a fresh process: python serve_saved_model.py EXPORT_DIR TAGS IMAGES.npy EXAMPLES.npy.

Loads the metagraph with the comma-separated TAGS through the TF1 loader, runs both signatures (images and
serialized tf.Examples) and prints their outputs as JSON: what a serving client sees, without estimator_tpu.
"""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf


def run_signature(sess, signature, inputs):
  feed = {sess.graph.get_tensor_by_name(signature.inputs[name].name): value for name, value in inputs.items()}
  fetch = {name: sess.graph.get_tensor_by_name(info.name) for name, info in signature.outputs.items()}
  return {name: value.tolist() for name, value in sess.run(fetch, feed).items()}


def main(export_dir, tags, images_path, examples_path):
  with tf.Graph().as_default(), tf.Session() as sess:
    meta_graph = tf.saved_model.loader.load(sess, tags.split(','), export_dir)
    signatures = meta_graph.signature_def
    print(json.dumps({
        'signatures': sorted(signatures),
        'images': run_signature(sess, signatures['serving_default'], {'images': np.load(images_path)}),
        'examples': run_signature(sess, signatures['examples:serving_default'],
                                  {'examples': np.load(examples_path, allow_pickle=True)}),
    }))


if __name__ == '__main__':
  main(*sys.argv[1:])
