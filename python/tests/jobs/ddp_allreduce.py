"""A torchrun worker: all ranks sum their rank + 1; rank 0 prints the sum and saves it in the
job's output directory."""
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
value = torch.tensor([dist.get_rank() + 1.0])
dist.all_reduce(value)
if dist.get_rank() == 0:
    print(f"sum {value.item():g} over {dist.get_world_size()} ranks", flush=True)
    with open(os.path.join(os.environ["TONY_OUTPUT_DIR"], "sum.txt"), "w") as f:
        f.write(f"{value.item():g}\n")
dist.destroy_process_group()
