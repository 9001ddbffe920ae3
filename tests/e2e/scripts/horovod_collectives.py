#!/usr/bin/python3
"""horovod_collectives.py OUT_DIR

A Horovod worker as a TonY user writes one, with nothing of tony in it: hvd.init() from the
variables tony set, then collectives and a short data-parallel training with Horovod's
DistributedOptimizer. Writes OUT_DIR/rank-<rank>.json with what Horovod itself reports (rank, size,
local and cross ranks, the collectives' results, the trained parameters gathered from every rank,
the loss before and after) and the HOROVOD_* variables it was given.
"""
import json
import os
import sys

import torch
import horovod.torch as hvd

hvd.init()
rank, size = hvd.rank(), hvd.size()

total = hvd.allreduce(torch.tensor([float(rank + 1)]), op=hvd.Sum, name="sum").item()
gathered = hvd.allgather(torch.tensor([rank]), name="ranks").tolist()
root_value = hvd.broadcast(torch.tensor([42.0 if rank == 0 else -1.0]), root_rank=0,
                           name="root").item()

# y = 3x - 1 from a shard of points per rank; every rank starts from its own random weights, which
# broadcast_parameters replaces with rank 0's.
torch.manual_seed(1000 + rank)
model = torch.nn.Linear(1, 1)
optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                     named_parameters=model.named_parameters())
hvd.broadcast_parameters(model.state_dict(), root_rank=0)
x = torch.linspace(-1, 1, 64).reshape(-1, 1)[rank::size]
y = 3 * x - 1
losses = []
for _ in range(60):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(hvd.allreduce(loss.detach(), name="loss").item())
params = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
every_rank_params = hvd.allgather(params.reshape(1, -1), name="params").tolist()

result = {
    "rank": rank, "size": size, "local_rank": hvd.local_rank(), "local_size": hvd.local_size(),
    "cross_rank": hvd.cross_rank(), "cross_size": hvd.cross_size(),
    "gloo": hvd.gloo_enabled(), "sum": total, "gathered": gathered, "broadcast": root_value,
    "first_loss": losses[0], "last_loss": losses[-1], "params": every_rank_params,
    "env": {k: v for k, v in os.environ.items() if k.startswith("HOROVOD_")},
}
with open(os.path.join(sys.argv[1], f"rank-{rank}.json"), "w") as out:
    json.dump(result, out)
print(f"horovod rank {rank} of {size}: sum {total}, loss {losses[0]:.4f} -> {losses[-1]:.4f}",
      flush=True)
hvd.shutdown()
