#!/usr/bin/python3
"""tensorboard_writer.py FLAG

Writes a falling loss for run "run1" under TB_LOG_DIR (the job's --sidecar_tensorboard_log_dir)
with PyTorch's SummaryWriter, prints "wrote run1", then stays until the file FLAG exists (the
test has seen TensorBoard serve the run), at most 120 s.
"""
import os
import sys
import time

from torch.utils.tensorboard import SummaryWriter

writer = SummaryWriter(os.path.join(os.environ["TB_LOG_DIR"], "run1"))
for step in range(10):
    writer.add_scalar("loss", 1.0 / (step + 1), step)
writer.close()
print("wrote run1", flush=True)
deadline = time.monotonic() + 120
while not os.path.exists(sys.argv[1]):
    if time.monotonic() > deadline:
        print("the test never said it was done", flush=True)
        sys.exit(1)
    time.sleep(0.1)  # a file the test creates: nothing to wait on but its existence
