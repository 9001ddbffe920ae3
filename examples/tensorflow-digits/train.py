#!/usr/bin/env python3
"""Synchronous data-parallel training of a small MLP on scikit-learn's bundled digits data set with
TensorFlow's MultiWorkerMirroredStrategy and Keras 2 (tf_keras).

Run under tony with the tensorflow framework: TensorFlow reads TF_CONFIG, which tony gives every
worker. Without TF_CONFIG it trains in one process.

Under tony, Keras' BackupAndRestore keeps the training state in TONY_CHECKPOINT_DIR after every
epoch, and a restarted attempt resumes from the last finished epoch. TONY_CHECKPOINT_DIR may be a
local directory, or hdfs:// (the YARN default): then the state is kept in a local directory and
copied to HDFS after each epoch with hdfs-native, and copied back when a worker starts.
--fail_at_epoch N makes worker 1 fail at the start of epoch N in its first attempt, to watch a gang
restart resume (set tony.worker.restart-policy=gang and a max-restarts). --result_dir DIR writes
DIR/worker-<index>.json with what TensorFlow reports (replicas in sync, losses, accuracy, weights).
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from urllib.parse import urlparse

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # Keras 3's fit breaks under this strategy
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

EPOCHS = 8
BATCH = 64  # global
SEED = 0


class HdfsMirror:
    """A local directory kept as a copy on HDFS: `restore` brings the last copy back, `publish`
    replaces it with the directory as it is (a whole new copy, then the pointer to it)."""

    def __init__(self, uri, local):
        from hdfs_native import Client, WriteOptions
        self.replace = WriteOptions()
        self.replace.overwrite = True
        self.replace.create_parent = True
        parsed = urlparse(uri)
        self.client = Client(f"hdfs://{parsed.netloc}") if parsed.netloc else Client()
        self.root = parsed.path.rstrip("/") + "/keras-backup"
        self.local = local

    def _latest(self):
        try:
            with self.client.read(self.root + "/latest") as f:
                return f.read().decode().strip()
        except FileNotFoundError:
            return None

    def restore(self):
        latest = self._latest()
        if latest is None:
            return
        base = f"{self.root}/{latest}"
        for status in self.client.list_status(base, recursive=True):
            if status.isdir:
                continue
            relative = status.path[len(base) + 1:]
            target = os.path.join(self.local, relative)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with self.client.read(status.path) as f, open(target, "wb") as out:
                out.write(f.read())

    def publish(self, epoch):
        copy = f"{self.root}/epoch-{epoch}"
        for directory, _, files in os.walk(self.local):
            for name in files:
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, self.local)
                if relative.startswith("workertemp"):
                    continue
                with self.client.create(f"{copy}/{relative}", self.replace) as out, \
                        open(path, "rb") as f:
                    out.write(f.read())
        with self.client.create(self.root + "/latest.partial", self.replace) as out:
            out.write(f"epoch-{epoch}".encode())
        self.client.rename(self.root + "/latest.partial", self.root + "/latest", overwrite=True)
        if epoch > 0:
            try:
                self.client.delete(f"{self.root}/epoch-{epoch - 1}", recursive=True)
            except FileNotFoundError:
                pass


class Report(keras.callbacks.Callback):
    """Prints where each attempt starts and every epoch's loss; on the chief, after the backup of
    an epoch is saved (BackupAndRestore comes first in the callbacks), says so in `saved_file`
    (or publishes it to HDFS); fails on purpose if asked, once the backup before is saved."""

    def __init__(self, name, attempt, fail_at, mirror, chief, saved_file):
        super().__init__()
        self.name, self.attempt, self.fail_at = name, attempt, fail_at
        self.mirror, self.chief, self.saved_file = mirror, chief, saved_file
        self.started = None

    def saved(self):
        """The last epoch whose backup the chief saved, or -1."""
        try:
            if self.mirror is not None:
                latest = self.mirror._latest()
                return int(latest.split("-")[1]) if latest else -1
            with open(self.saved_file) as f:
                return int(f.read())
        except (OSError, ValueError):
            return -1

    def on_epoch_begin(self, epoch, logs=None):
        if self.started is None:
            self.started = epoch
            print(f"{self.name} attempt {self.attempt} starts at epoch {epoch}", flush=True)
        if self.fail_at is not None and self.name == "worker 1" and self.attempt == 0 \
                and epoch == self.fail_at:
            # The chief may still be saving the epoch before: the failure comes after it.
            deadline = time.monotonic() + 60
            while self.saved() < epoch - 1 and time.monotonic() < deadline:
                time.sleep(0.1)
            print(f"{self.name} fails at the start of epoch {epoch}", flush=True)
            os._exit(3)

    def on_epoch_end(self, epoch, logs=None):
        print(f"{self.name} epoch {epoch} loss {logs['loss']:.4f} accuracy "
              f"{logs['accuracy']:.4f}", flush=True)
        if not self.chief:
            return
        if self.mirror is not None:
            self.mirror.publish(epoch)
        elif self.saved_file:
            with open(self.saved_file + ".partial", "w") as f:
                f.write(str(epoch))
            os.replace(self.saved_file + ".partial", self.saved_file)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fail_at_epoch", type=int, metavar="N")
    ap.add_argument("--result_dir")
    args = ap.parse_args()

    config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    task = config.get("task", {"type": "worker", "index": 0})
    name = f"{task['type']} {task['index']}"
    chief = task["type"] == "chief" or (task["type"] == "worker" and task["index"] == 0 and
                                        "chief" not in config.get("cluster", {}))
    attempt = int(os.environ.get("ATTEMPT_NUMBER", "0"))

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.25, random_state=SEED)
    scaler = StandardScaler().fit(x_train)
    x_train = scaler.transform(x_train).astype("float32")
    x_test = scaler.transform(x_test).astype("float32")
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    train = (tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(x_train), SEED)
             .repeat().batch(BATCH).with_options(options))

    with strategy.scope():
        keras.utils.set_random_seed(SEED)
        model = keras.Sequential([keras.layers.Dense(128, activation="relu", input_shape=(64,)),
                                  keras.layers.Dense(10)])
        model.compile(optimizer=keras.optimizers.SGD(0.05),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])

    directory = os.environ.get("TONY_CHECKPOINT_DIR")
    mirror = None
    saved_file = None
    callbacks = []
    if directory:
        if "://" in directory:
            # In the working directory: it goes with the container, whatever ends the attempt.
            backup = tempfile.mkdtemp(prefix="keras-backup-", dir=os.getcwd())
            mirror = HdfsMirror(directory, backup)
            mirror.restore()
        else:
            backup = os.path.join(directory, "keras-backup")
            saved_file = backup + ".saved-epoch"
        callbacks.append(keras.callbacks.BackupAndRestore(backup, delete_checkpoint=False))
    report = Report(name, attempt, args.fail_at_epoch, mirror, chief, saved_file)
    callbacks.append(report)
    history = model.fit(train, epochs=EPOCHS, steps_per_epoch=len(x_train) // BATCH, verbose=0,
                        callbacks=callbacks)
    _, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"{name} test accuracy: {accuracy:.4f}", flush=True)
    if mirror is not None:
        shutil.rmtree(mirror.local, ignore_errors=True)

    if args.result_dir:
        result = {
            "task": name,
            "replicas": strategy.num_replicas_in_sync,
            "started_at_epoch": report.started,
            "attempt": attempt,
            "loss": history.history["loss"],
            "test_accuracy": accuracy,
            "weights": [float(np.sum(w)) for w in model.get_weights()],
        }
        path = os.path.join(args.result_dir, f"{task['type']}-{task['index']}.json")
        with open(path, "w") as out:
            json.dump(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
