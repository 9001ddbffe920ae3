#!/usr/bin/env python3
"""jax_collectives.py OUT_DIR

JAX across processes on CPUs, started with the call docs/running-jobs.md gives: a psum over every
process's device and an allgather, over Gloo. Writes OUT_DIR/process-<id>.json with what JAX
reports.
"""
import json
import os
import sys

import jax

jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(
    coordinator_address=os.environ["JAX_COORDINATOR_ADDRESS"],
    num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
    process_id=int(os.environ["JAX_PROCESS_ID"]))

import jax.numpy as jnp  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402

me = jax.process_index()
psum = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(
    jnp.full((jax.local_device_count(),), me + 1.0))
gathered = multihost_utils.process_allgather(jnp.array([me * 10]))
result = {
    "process": me,
    "processes": jax.process_count(),
    "devices": jax.device_count(),
    "psum": float(psum[0]),
    "gathered": [int(v) for v in gathered.reshape(-1)],
}
with open(os.path.join(sys.argv[1], f"process-{me}.json"), "w") as out:
    json.dump(result, out)
print(f"process {me} of {result['processes']}: psum {result['psum']}", flush=True)
jax.distributed.shutdown()
