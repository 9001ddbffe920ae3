#!/usr/bin/python3
"""eat_memory.py MB: allocates MB MiB, touches every page, prints "allocated", sleeps forever."""
import os
import signal
import sys
import time

PAGE = 4096
CHUNK = 64 * 2**20


def main():
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # die on SIGINT, even if inherited ignored
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: eat_memory.py MB")
    total = int(sys.argv[1]) * 2**20
    chunks = []
    while total > 0:
        buf = bytearray(min(CHUNK, total))
        for i in range(0, len(buf), PAGE):
            buf[i] = 1
        chunks.append(buf)
        total -= len(buf)
    print(f"allocated {sys.argv[1]} MiB in pid {os.getpid()}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
