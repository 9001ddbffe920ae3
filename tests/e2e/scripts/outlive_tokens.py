#!/usr/bin/python3
"""outlive_tokens.py INPUT OUTPUT [MINICLUSTER_DIR]

A task that outlives its first HDFS (and KMS) delegation tokens (on a cluster whose tokens die
quickly):
  1. copies the tokens it started with (HADOOP_TOKEN_FILE_LOCATION) aside and reads INPUT;
  2. waits until the file holds other tokens (the AM's fresh ones, put there by the executor);
  3. waits until the first tokens are past their maximum date (the NameNode refuses them then);
  4. reads INPUT again with the file as it is now, and writes OUTPUT with what it read;
  5. with MINICLUSTER_DIR (a cluster with a KMS), reads the file of its encryption zone too, with
     read_encryption_zone.sh and the fresh tokens.
Each read runs in a process of its own: hdfs-native reads the token file when a client is made.
(hdfs-native passes over a token within 60 s of its maximum date, so the cluster's tokens must
live well over a minute for this to work.)
Prints each step; exits 1 with the reason when a wait passes its deadline or a read fails.
"""
import os
import shutil
import subprocess
import sys
import time

READ = """
import sys
from hdfs_native import Client
with Client().read(sys.argv[1]) as f:
    print(len(f.read().decode().splitlines()))
"""
DEADLINE_S = 300


def vlong(data, pos):
    """Hadoop's WritableUtils VLong at data[pos:]: (value, next position)."""
    first = data[pos] - 256 if data[pos] > 127 else data[pos]
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = (-119 - first) if negative else (-111 - first)
    value = int.from_bytes(data[pos + 1:pos + size], "big")
    return (~value if negative else value), pos + size


def max_dates(path):
    """The maximum date (ms since the epoch) of each HDFS and KMS token in a Writable credentials
    file."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:5] == b"HDTS\0", "not a Writable credentials file"
    count, pos = vlong(data, 5)
    dates = []
    for _ in range(count):
        fields = []
        for _ in range(5):  # alias, identifier, password, kind, service
            size, pos = vlong(data, pos)
            fields.append(data[pos:pos + size])
            pos += size
        if fields[3] in (b"HDFS_DELEGATION_TOKEN", b"kms-dt"):
            ident, p = fields[1], 1
            for _ in range(3):  # owner, renewer, real user
                size, p = vlong(ident, p)
                p += size
            _, p = vlong(ident, p)  # issue date
            dates.append(vlong(ident, p)[0])
    return dates


def read(path, token_file):
    env = dict(os.environ, HADOOP_TOKEN_FILE_LOCATION=token_file)
    done = subprocess.run([sys.executable, "-c", READ, path], env=env, capture_output=True,
                          text=True, timeout=60)
    return done.returncode == 0, (done.stdout.strip() if done.returncode == 0 else
                                  done.stderr.strip().splitlines()[-1:])


def wait_for(what, condition):
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            print(f"gave up waiting {DEADLINE_S} s for {what}", flush=True)
            sys.exit(1)
        time.sleep(0.5)  # polling a file and a NameNode: neither tells when it changes
    print(f"done waiting for {what}", flush=True)


token_file = os.environ["HADOOP_TOKEN_FILE_LOCATION"]
first = os.path.abspath("first-tokens")
shutil.copyfile(token_file, first)
with open(first, "rb") as f:
    first_bytes = f.read()

ok, lines = read(sys.argv[1], first)
print(f"read with the first tokens: {ok} {lines}", flush=True)
if not ok:
    sys.exit(1)


def file_changed():
    with open(token_file, "rb") as f:
        return f.read() != first_bytes


wait_for("fresh tokens in " + token_file, file_changed)
first_dies_ms = min(max_dates(first))
print(f"fresh tokens die at {max(max_dates(token_file))}, after the first at {first_dies_ms}",
      flush=True)
wait_for("the first tokens to die", lambda: time.time() * 1000 > first_dies_ms + 1000)
ok, lines = read(sys.argv[1], token_file)
print(f"read with the fresh tokens: {ok} {lines}", flush=True)
if not ok:
    sys.exit(1)
if len(sys.argv) > 3:
    zone = subprocess.run(["sh", "read_encryption_zone.sh", sys.argv[3]], capture_output=True,
                          text=True, timeout=120)
    print(zone.stdout, zone.stderr[-2000:], flush=True)
    if zone.returncode != 0:
        sys.exit(1)
done = subprocess.run([sys.executable, "-c", """
import sys
from hdfs_native import Client
with Client().create(sys.argv[1]) as out:
    out.write(sys.argv[2].encode())
""", sys.argv[2], f"read {lines} lines after the first tokens died"], capture_output=True,
                      text=True, timeout=60)
print(f"wrote {sys.argv[2]}: {done.returncode == 0} {done.stderr.strip()[-300:]}", flush=True)
sys.exit(done.returncode)
