#!/usr/bin/python3
"""horovod_debug_driver.py

A user's own Horovod driver for TonY's debug mode (tony.horovod.driver.mode.debug), written the
way TonY documents it: Horovod's RendezvousServer for the host list in CLUSTER_WORKER_LIST, then a
file "<port>____HOROVOD_RENDEZVOUS_SERVER____" with the slot plan in DRIVER_OUTPUT_PATH. Prints
"rendezvous on port <port>" and serves until it is stopped.
"""
import json
import os
import signal
import sys

from horovod.runner.common.util.hosts import get_host_assignments, parse_hosts
from horovod.runner.http.http_server import RendezvousServer

hosts = parse_hosts(os.environ["CLUSTER_WORKER_LIST"])
plan = get_host_assignments(hosts, 1)
server = RendezvousServer(verbose=0)
port = server.start()
server.init(plan)
slots = [{"hostname": s.hostname, "rank": s.rank, "localRank": s.local_rank,
          "crossRank": s.cross_rank, "size": s.size, "localSize": s.local_size,
          "crossSize": s.cross_size} for s in plan]
with open(os.path.join(os.environ["DRIVER_OUTPUT_PATH"],
                       f"{port}____HOROVOD_RENDEZVOUS_SERVER____"), "w") as out:
    json.dump(slots, out)
print(f"rendezvous on port {port}", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
signal.pause()
