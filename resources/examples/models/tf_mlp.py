"""A small TensorFlow MLP with random weights, declared for `cuvil compile` and the Workbench.

    cuvil compile tf_mlp.py             # the Cuvil IR imported from the TensorFlow graph
    cuvil-workbench tf_mlp.py           # passes, graph (nodes named after TF nodes such
                                        # as "tf_mlp_1/hidden_1/MatMul"), execute: Cuvil vs TF

A file declares its model with module-level ``model`` and ``example_inputs``.
Here the model is a ``tf.function`` calling Keras layers; a Keras model works
too (it runs with ``training=False``).
"""

import tensorflow as tf

tf.keras.utils.set_random_seed(0)  # the same random weights and input on every run
network = tf.keras.Sequential(
    [
        tf.keras.Input(shape=(16,)),
        tf.keras.layers.Dense(32, activation="relu", name="hidden"),
        tf.keras.layers.Dense(4, activation="softmax", name="probabilities"),
    ],
    name="tf_mlp",
)


@tf.function(input_signature=[tf.TensorSpec((8, 16), tf.float32)])
def classify(x):
    return network(x, training=False)


model = classify
example_inputs = (tf.random.normal((8, 16)),)
