#!/usr/bin/env python3
"""tf_keras_mwms.py OUT_DIR

TensorFlow's MultiWorkerMirroredStrategy with Keras, the recipe of docs/running-jobs.md: tf_keras
(Keras 2) with TF_USE_LEGACY_KERAS=1, since Keras 3's model.fit breaks under this strategy. Reads
only TF_CONFIG. Trains y = 3x - 1 and writes OUT_DIR/<type>-<index>.json with what TensorFlow
reports: replicas in sync, the loss per epoch, the trained weights.
"""
import json
import os
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(1,))])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")

x = np.linspace(-1, 1, 256, dtype="float32").reshape(-1, 1)
options = tf.data.Options()
options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
dataset = tf.data.Dataset.from_tensor_slices((x, 3 * x - 1)).repeat().batch(32).with_options(options)
history = model.fit(dataset, epochs=6, steps_per_epoch=8, verbose=0)

task = json.loads(os.environ["TF_CONFIG"])["task"]
result = {
    "task": f"{task['type']}:{task['index']}",
    "replicas": strategy.num_replicas_in_sync,
    "loss": history.history["loss"],
    "weights": [w.reshape(-1).tolist() for w in model.get_weights()],
}
with open(os.path.join(sys.argv[1], f"{task['type']}-{task['index']}.json"), "w") as out:
    json.dump(result, out)
print(f"{result['task']}: {result['replicas']} replicas, loss {result['loss'][0]:.4f} -> "
      f"{result['loss'][-1]:.4f}", flush=True)
