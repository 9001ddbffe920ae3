#!/usr/bin/env python3
"""tf_ps_chief.py OUT_DIR

TensorFlow's ParameterServerStrategy as TonY's users run it: the chief is the coordinator, the
workers and the ps are servers (tf_server.py) that the job marks untracked. Creates the model's
variables on the ps, schedules training steps on the workers, saves a checkpoint in OUT_DIR/ckpt
for the evaluator (tf_evaluator.py), and writes OUT_DIR/chief.json with the variables' devices,
the losses the workers returned and the trained values.
"""
import json
import os
import sys

import tensorflow as tf

resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
strategy = tf.distribute.ParameterServerStrategy(resolver)
coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
with strategy.scope():
    w = tf.Variable(0.0, name="w")
    b = tf.Variable(0.0, name="b")


def dataset_fn():
    x = tf.linspace(-1.0, 1.0, 256)
    return tf.data.Dataset.from_tensor_slices((x, 3 * x - 1)).shuffle(256).repeat().batch(32)


iterator = iter(coordinator.create_per_worker_dataset(dataset_fn))


@tf.function
def train_step(it):
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(w * x + b - y))
        dw, db = tape.gradient(loss, [w, b])
        w.assign_sub(0.2 * dw)
        b.assign_sub(0.2 * db)
        return loss

    x, y = next(it)
    return strategy.run(step, args=(x, y))


losses = [coordinator.schedule(train_step, args=(iterator,)) for _ in range(200)]
coordinator.join()
values = [float(loss.fetch()) for loss in losses]
tf.train.Checkpoint(w=w, b=b).save(os.path.join(sys.argv[1], "ckpt", "model"))
result = {
    "devices": [w.device, b.device],
    "workers": len(resolver.cluster_spec().as_dict().get("worker", [])),
    "first_loss": values[0],
    "last_loss": values[-1],
    "w": float(w.numpy()),
    "b": float(b.numpy()),
}
with open(os.path.join(sys.argv[1], "chief.json"), "w") as out:
    json.dump(result, out)
print(f"chief: w {result['w']:.3f} b {result['b']:.3f} on {w.device}", flush=True)
