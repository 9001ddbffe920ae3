#!/usr/bin/python3
"""Task-side check of the tensorflow environment tony hands a task.

Run as every task of a tensorflow job (by default chief:1, worker:2, ps:1, evaluator:1).
Checks CLUSTER_SPEC, TF_CONFIG, JOB_NAME, TASK_INDEX, TASK_NUM and IS_CHIEF against each other.
Exit 0 and "ok <type>:<index>" on stdout if all hold; otherwise exit 1 with the problems on
stderr. With --ps-forever a ps task sleeps forever after its checks pass (tony stops it).
"""
import argparse
import json
import os
import signal
import socket
import sys
import time


def parse_counts(text):
    counts = {}
    for item in filter(None, text.split(",")):
        name, _, num = item.partition("=")
        counts[name] = int(num)
    return counts


def check_address(addr, where, errors):
    host, sep, port = addr.rpartition(":")
    if not sep or not host:
        errors.append(f"{where}: {addr!r} is not host:port")
        return None
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        errors.append(f"{where}: {addr!r} has no valid port")
        return None
    return host.strip("[]"), int(port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ps-forever", action="store_true",
                    help="a ps task sleeps forever after its checks pass")
    ap.add_argument("--counts", default="chief=1,worker=2,ps=1",
                    help="expected task counts in CLUSTER_SPEC (type=n,...)")
    ap.add_argument("--untracked", default="ps,tensorboard",
                    help="types not counted in TASK_NUM")
    ap.add_argument("--check-port-free", action="store_true",
                    help="also check this task's own port can be bound now")
    args = ap.parse_args()

    errors = []
    env = os.environ
    missing = [k for k in ("CLUSTER_SPEC", "TF_CONFIG", "JOB_NAME", "TASK_INDEX", "TASK_NUM")
               if k not in env]
    if missing:
        sys.exit(f"check_tf_env: missing environment variables: {' '.join(missing)}")
    job, index_text = env["JOB_NAME"], env["TASK_INDEX"]
    if not index_text.isdigit():
        sys.exit(f"check_tf_env: TASK_INDEX={index_text!r} is not a number")
    index = int(index_text)
    me = f"{job}:{index}"
    try:
        spec = json.loads(env["CLUSTER_SPEC"])
        tf_config = json.loads(env["TF_CONFIG"])
    except ValueError as e:
        sys.exit(f"check_tf_env {me}: bad JSON: {e}")

    # CLUSTER_SPEC: well formed, expected counts, valid and unique addresses.
    if not isinstance(spec, dict) or not all(
            isinstance(v, list) and all(isinstance(a, str) for a in v) for v in spec.values()):
        sys.exit(f"check_tf_env {me}: CLUSTER_SPEC is not {{type: [host:port, ...]}}: {spec!r}")
    for name, num in parse_counts(args.counts).items():
        if len(spec.get(name, [])) != num:
            errors.append(f"CLUSTER_SPEC has {len(spec.get(name, []))} {name} tasks, want {num}")
    seen = {}
    for name, addrs in spec.items():
        for i, addr in enumerate(addrs):
            check_address(addr, f"CLUSTER_SPEC {name}:{i}", errors)
            if addr in seen:
                errors.append(f"address {addr} used by both {seen[addr]} and {name}:{i}")
            seen.setdefault(addr, f"{name}:{i}")

    # This task's own entry.
    own = spec.get(job, [])
    if index >= len(own):
        errors.append(f"CLUSTER_SPEC has no {me} (its {job} list: {own})")
    else:
        hp = check_address(own[index], f"own address {me}", errors)
        if hp:
            host, port = hp
            try:  # the host must name this machine: binding to it must work
                fam = socket.AF_INET6 if ":" in host else socket.AF_INET
                with socket.socket(fam, socket.SOCK_STREAM) as s:
                    if args.check_port_free:
                        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                        if env.get("TF_GRPC_REUSE_PORT", "").lower() == "true":
                            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                    s.bind((socket.gethostbyname(host) if fam == socket.AF_INET else host,
                            port if args.check_port_free else 0))
            except OSError as e:
                errors.append(f"own address {own[index]}: cannot bind "
                              f"{'its port' if args.check_port_free else 'its host'}: {e}")

    # TF_CONFIG.
    if not isinstance(tf_config, dict):
        errors.append(f"TF_CONFIG is not an object: {tf_config!r}")
        tf_config = {}
    want_task = {"type": job, "index": index}
    task = tf_config.get("task")
    if task != want_task or type(task.get("index")) is not int:
        errors.append(f"TF_CONFIG.task is {tf_config.get('task')!r}, want {want_task!r}")
    want_cluster = {k: v for k, v in spec.items()
                    if k != "tensorboard" and (k != "evaluator" or job == "evaluator")}
    if tf_config.get("cluster") != want_cluster:
        errors.append(f"TF_CONFIG.cluster is {tf_config.get('cluster')!r}, want {want_cluster!r}")
    extra = set(tf_config) - {"cluster", "task", "environment", "rpc_layer"}
    if extra:
        errors.append(f"TF_CONFIG has unexpected keys {sorted(extra)}")

    # TASK_NUM: the number of tracked tasks.
    untracked = set(filter(None, args.untracked.split(",")))
    want_num = sum(len(v) for k, v in spec.items() if k not in untracked)
    if env["TASK_NUM"] != str(want_num):
        errors.append(f"TASK_NUM is {env['TASK_NUM']!r}, want {want_num} (tracked tasks)")

    # IS_CHIEF: "true" on the chief only (chief:0, or worker:0 without a chief type).
    chief = ("chief", 0) if "chief" in spec else ("worker", 0)
    is_chief = env.get("IS_CHIEF")
    if (job, index) == chief:
        if is_chief != "true":
            errors.append(f"IS_CHIEF is {is_chief!r} on the chief {me}, want 'true'")
    elif is_chief is not None:
        errors.append(f"IS_CHIEF is set ({is_chief!r}) on {me}, which is not the chief")

    if "MALLOC_ARENA_MAX" in env:
        errors.append(f"MALLOC_ARENA_MAX is set ({env['MALLOC_ARENA_MAX']!r})")

    if errors:
        print(f"check_tf_env {me}: FAILED", file=sys.stderr)
        for e in errors:
            print(f"  {e}", file=sys.stderr)
        sys.stderr.flush()
        return 1
    print(f"ok {me}", flush=True)
    if job == "ps" and args.ps_forever:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        while True:
            time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
