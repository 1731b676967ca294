"""The TensorFlow 2 route (mnist_keras.py): the same network as a Keras model under a tf.distribute
strategy."""
