#!/usr/bin/python3
"""hdfs_io.py INPUT OUTPUT_DIR

Reads INPUT from HDFS with hdfs-native (a native client: no JVM, no Kerberos ticket), as a task
finds HDFS from its own environment: fs.defaultFS from HADOOP_CONF_DIR, the user from
HADOOP_USER_NAME, tokens from HADOOP_TOKEN_FILE_LOCATION. Writes OUTPUT_DIR/<JOB_NAME>-<TASK_INDEX>
with "<task> read <n> lines: <first line>" and prints the same line, with HADOOP_CONF_DIR and
whether the task could have used a Kerberos ticket ("ticket cache: none" when it could not).
"""
import os
import sys

from hdfs_native import Client

task = f"{os.environ.get('JOB_NAME', '')}-{os.environ.get('TASK_INDEX', '')}"
client = Client()
with client.read(sys.argv[1]) as f:
    lines = f.read().decode().splitlines()
line = f"{task} read {len(lines)} lines: {lines[0] if lines else ''}"
with client.create(f"{sys.argv[2]}/{task}") as out:
    out.write(line.encode())
cache = os.environ.get("KRB5CCNAME", f"FILE:/tmp/krb5cc_{os.getuid()}")
has_cache = not cache.startswith("FILE:") or os.path.exists(cache[len("FILE:"):])
print(line, f"HADOOP_CONF_DIR={os.environ.get('HADOOP_CONF_DIR', '')}",
      f"ticket cache: {cache if has_cache else 'none'}", flush=True)
