#!/usr/bin/python3
"""exit_with.py CODE [--only TYPE:INDEX ...] [--after SECONDS]

Exits with CODE if this task (JOB_NAME:TASK_INDEX) matches an --only, or if no --only is
given; otherwise exits 0. Before a non-zero exit it prints
"failing on purpose with exit code CODE" to stderr. --after sleeps first.
"""
import argparse
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("code", type=int)
    ap.add_argument("--only", action="append", default=[], metavar="TYPE:INDEX")
    ap.add_argument("--after", type=float, default=0, metavar="SECONDS")
    args = ap.parse_args()
    me = f"{os.environ.get('JOB_NAME', '')}:{os.environ.get('TASK_INDEX', '')}"
    code = args.code if not args.only or me in args.only else 0
    if args.after > 0:
        time.sleep(args.after)
    if code != 0:
        print(f"failing on purpose with exit code {args.code}", file=sys.stderr, flush=True)
    else:
        print(f"{me} exiting with 0", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
