#!/usr/bin/python3
"""tensorboard_writer.py FLAG

Writes a falling loss for run "run1" under TB_LOG_DIR (the job's --sidecar_tensorboard_log_dir)
with PyTorch's SummaryWriter, prints "wrote run1", then stays until the file FLAG exists (the
test has seen TensorBoard serve the run), at most 120 s. An hdfs:// TB_LOG_DIR gets the event
files through hdfs-native, as a task finds HDFS (HADOOP_CONF_DIR, its delegation tokens).
"""
import os
import sys
import tempfile
import time

from torch.utils.tensorboard import SummaryWriter

log_dir = os.environ["TB_LOG_DIR"]
local_dir = tempfile.mkdtemp() if log_dir.startswith("hdfs://") else log_dir
writer = SummaryWriter(os.path.join(local_dir, "run1"))
for step in range(10):
    writer.add_scalar("loss", 1.0 / (step + 1), step)
writer.close()
if local_dir != log_dir:
    from hdfs_native import Client

    client = Client()
    path = log_dir[len("hdfs://"):]
    path = path[path.index("/"):]  # the path after the authority ("" for the default file system)
    client.mkdirs(f"{path}/run1", create_parent=True)
    for name in os.listdir(os.path.join(local_dir, "run1")):
        with open(os.path.join(local_dir, "run1", name), "rb") as src, \
                client.create(f"{path}/run1/{name}") as dst:
            dst.write(src.read())
print("wrote run1", flush=True)
deadline = time.monotonic() + 120
while not os.path.exists(sys.argv[1]):
    if time.monotonic() > deadline:
        print("the test never said it was done", flush=True)
        sys.exit(1)
    time.sleep(0.1)  # a file the test creates: nothing to wait on but its existence
