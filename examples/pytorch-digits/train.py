#!/usr/bin/python3
"""Data-parallel training of a small MLP on scikit-learn's bundled digits data set.

Run under tony with the pytorch framework: tony sets MASTER_ADDR, MASTER_PORT, RANK and
WORLD_SIZE, so torch.distributed's init_method="env://" works. Without WORLD_SIZE the script
trains in a single process (tony's single-node mode, or a plain `python3 train.py`).

--hdfs_input_path hdfs://[namenode]/path.csv reads the data from HDFS instead (one sample a line:
64 pixel values, then the label; `--export_digits FILE` writes the bundled set in that form), and
--hdfs_output_path hdfs://[namenode]/path.pt writes the model there. Both use hdfs-native, a
native HDFS client: the task finds the cluster through HADOOP_CONF_DIR, and its user and tokens
through HADOOP_USER_NAME / HADOOP_TOKEN_FILE_LOCATION, all of which tony gives a task on YARN.

Under tony every epoch's state (model, optimizer, epoch) is kept in TONY_CHECKPOINT_DIR (a local
directory, or hdfs:// with hdfs-native), and a restarted attempt resumes from it: after a gang
restart the workers go on from the last finished epoch. --fail_at_epoch N makes rank 1 fail at the
start of epoch N in its first attempt, to watch that happen.
"""
import argparse
import io
import os
import sys
import time
from urllib.parse import urlparse

import torch
import torch.distributed as dist
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

SEED = 0
EPOCHS = 20
BATCH = 32  # per rank
LR = 0.05


def hdfs(uri):
    """A client for the namenode an hdfs:// URI names (the default file system if none), and
    the path within it."""
    from hdfs_native import Client  # only needed with HDFS paths
    parsed = urlparse(uri)
    if parsed.scheme not in ("hdfs", ""):
        raise SystemExit(f"{uri}: expected an hdfs:// path")
    client = Client(f"hdfs://{parsed.netloc}") if parsed.netloc else Client()
    return client, parsed.path


class Checkpoints:
    """The training state between attempts, in TONY_CHECKPOINT_DIR: a local directory, or an
    hdfs:// URI (written with hdfs-native; without it, no checkpoints)."""

    NAME = "digits.pt"

    def __init__(self, directory):
        self.directory = directory
        self.client = None
        if directory and "://" in directory:
            try:
                self.client, self.path = hdfs(directory.rstrip("/") + "/" + self.NAME)
            except ImportError:
                print(f"no checkpoints: {directory} needs hdfs-native", flush=True)
                self.directory = None
        elif directory:
            self.path = os.path.join(directory, self.NAME)

    def load(self):
        """The last state saved, or None."""
        if not self.directory:
            return None
        if self.client is None:
            if not os.path.exists(self.path):
                return None
            return torch.load(self.path)
        try:
            self.client.get_file_info(self.path)
        except FileNotFoundError:
            return None
        with self.client.read(self.path) as f:
            return torch.load(io.BytesIO(f.read()))

    def save(self, state):
        """Replaces the saved state at once: a reader sees the old state or the new one."""
        if not self.directory:
            return
        buffer = io.BytesIO()
        torch.save(state, buffer)
        partial = self.path + ".partial"
        if self.client is None:
            with open(partial, "wb") as f:
                f.write(buffer.getvalue())
            os.replace(partial, self.path)
        else:
            with self.client.create(partial) as out:
                out.write(buffer.getvalue())
            self.client.rename(partial, self.path, overwrite=True)


def load_data(args):
    if not args.hdfs_input_path:
        return load_digits(return_X_y=True)
    import numpy as np
    client, path = hdfs(args.hdfs_input_path)
    with client.read(path) as f:
        table = np.loadtxt(io.BytesIO(f.read()), delimiter=",")
    print(f"read {len(table)} samples from {args.hdfs_input_path}", flush=True)
    return table[:, :-1], table[:, -1].astype(int)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hdfs_input_path", help="the data set on HDFS (CSV: 64 pixels, label)")
    ap.add_argument("--hdfs_output_path", help="where on HDFS rank 0 saves the model")
    ap.add_argument("--export_digits", metavar="FILE",
                    help="write the bundled digits as CSV to FILE and exit")
    ap.add_argument("--fail_at_epoch", type=int, metavar="N",
                    help="rank 1 fails at the start of epoch N in its first attempt")
    args = ap.parse_args()
    if args.export_digits:
        import numpy as np
        x, y = load_digits(return_X_y=True)
        np.savetxt(args.export_digits, np.column_stack([x, y]), delimiter=",", fmt="%g")
        return 0
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    distributed = "WORLD_SIZE" in os.environ or "WORLD" in os.environ
    if distributed:
        if "MASTER_ADDR" in os.environ:
            dist.init_process_group(backend="gloo", init_method="env://")
        else:  # only TonY's own variables: INIT_METHOD=tcp://host:port, RANK, WORLD
            dist.init_process_group(backend="gloo", init_method=os.environ["INIT_METHOD"],
                                    rank=int(os.environ["RANK"]),
                                    world_size=int(os.environ["WORLD"]))
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    print(f"rank {rank} of world size {world} (local rank {os.environ.get('LOCAL_RANK', 0)})"
          f" on {os.uname().nodename}", flush=True)

    x, y = load_data(args)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=0, stratify=y)
    scaler = StandardScaler().fit(x_train)
    x_train = torch.tensor(scaler.transform(x_train), dtype=torch.float32)
    x_test = torch.tensor(scaler.transform(x_test), dtype=torch.float32)
    y_train = torch.tensor(y_train, dtype=torch.long)
    y_test = torch.tensor(y_test, dtype=torch.long)

    # Every rank gets the same number of batches, so the collective calls match up.
    n = len(x_train) // world * world
    x_shard, y_shard = x_train[rank:n:world], y_train[rank:n:world]

    torch.manual_seed(SEED)  # identical initial weights on every rank
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    if distributed:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    checkpoints = Checkpoints(os.environ.get("TONY_CHECKPOINT_DIR"))
    first_epoch = 0
    state = checkpoints.load()
    if state is not None:
        (model.module if distributed else model).load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        first_epoch = state["epoch"]
        print(f"rank {rank} resumes after epoch {first_epoch} (attempt "
              f"{os.environ.get('ATTEMPT_NUMBER', 0)})", flush=True)
    start = time.time()
    for epoch in range(first_epoch, EPOCHS):
        if (args.fail_at_epoch is not None and epoch + 1 == args.fail_at_epoch and rank == 1
                and os.environ.get("ATTEMPT_NUMBER", "0") == "0"):
            print(f"rank 1 fails at the start of epoch {epoch + 1}", flush=True)
            # At once, as a crash would: a normal exit with the process group's threads still
            # running may end in an abort instead of this exit code.
            os._exit(1)
        model.train()
        # Each epoch's order is its own, so that a resumed run shuffles as an unbroken one.
        gen = torch.Generator().manual_seed(SEED + rank + 1000 * epoch)
        perm = torch.randperm(len(x_shard), generator=gen)
        total, count = 0.0, 0
        for i in range(0, len(perm), BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss = loss_fn(model(x_shard[idx]), y_shard[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
            count += len(idx)
        stats = torch.tensor([total, count], dtype=torch.float64)
        if distributed:
            dist.all_reduce(stats)
        if rank == 0:
            print(f"epoch {epoch + 1}/{EPOCHS} loss {stats[0].item() / stats[1].item():.4f}",
                  flush=True)
            checkpoints.save({"epoch": epoch + 1, "optimizer": opt.state_dict(),
                              "model": (model.module if distributed else model).state_dict()})

    if rank == 0:
        net = model.module if distributed else model
        net.eval()
        with torch.no_grad():
            acc = (net(x_test).argmax(dim=1) == y_test).float().mean().item()
        print(f"training took {time.time() - start:.1f} s", flush=True)
        print(f"test accuracy: {acc:.4f}", flush=True)
        # Under tony, the job's output directory, which outlives the job (on YARN a local one
        # that tony copies to HDFS when the task ends); "." when run by hand.
        model_dir = os.environ.get("TONY_OUTPUT_DIR") or "."
        os.makedirs(model_dir, exist_ok=True)
        path = os.path.abspath(os.path.join(model_dir, "model.pt"))
        torch.save(net.state_dict(), path)
        where = os.environ.get("TONY_OUTPUT_URI")
        if where and where != model_dir:  # copied there when the task ends
            path = where.rstrip("/") + "/model.pt"
        print(f"saved model to {path}", flush=True)
        if args.hdfs_output_path:
            client, hdfs_path = hdfs(args.hdfs_output_path)
            buffer = io.BytesIO()
            torch.save(net.state_dict(), buffer)
            with client.create(hdfs_path) as out:
                out.write(buffer.getvalue())
            print(f"saved model to {args.hdfs_output_path}", flush=True)

    if distributed:
        dist.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
