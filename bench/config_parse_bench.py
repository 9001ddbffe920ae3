#!/usr/bin/python3
"""Configuration parsing benchmark: is `tony config` linear in the file's size?

For each size N (default 2,000, 20,000 and 200,000 properties) the script writes a Hadoop XML
configuration file of N properties into a temporary directory and times

    tony config --conf_file FILE

(stdout and stderr to /dev/null), best of R runs. It also times the same command with a file of
one property (the `baseline`: process start-up, the built-in defaults, printing), so that the
cost of the N properties themselves is `best - baseline`.

The properties are a mix of what real files hold, and of what used to be slow:
  * 80% Hadoop-style keys that tony passes through (`bench.s<k>.key<i>`),
  * 10% appends to a multi-valued key (`tony.containers.envs`, `V<i>=x`),
  * 10% unknown `tony.*` keys (`tony.bench.key<i>`), each checked for a misspelling of a
    known key and warned about,
each written over four lines, as people write them, so that every property has its own line
number to find.

A linear parser takes about 10x as long for 10x the properties; before the fix it was about
100x (line numbers were found by recounting newlines from the top for every property).

The last line of output is one JSON object with every number. Uses only the Python standard
library and the existing build/tony; builds nothing.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TONY = os.path.join(os.path.dirname(HERE), "build", "tony")


def write_conf(path, properties):
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<configuration>\n')
        f.write("  <property>\n    <name>tony.containers.command</name>\n"
                "    <value>python3 train.py</value>\n  </property>\n")
        for i in range(properties - 1):
            if i % 10 == 1:
                name, value = "tony.containers.envs", f"V{i}=x"
            elif i % 10 == 2:
                name, value = f"tony.bench.key{i}", "1"
            else:
                name, value = f"bench.s{i // 100}.key{i}", f"value-{i}-of-a-plain-setting"
            f.write(f"  <property>\n    <name>{name}</name>\n    <value>{value}</value>\n"
                    f"  </property>\n")
        f.write("</configuration>\n")


def time_config(tony, path, timeout):
    """Seconds of one `tony config --conf_file path`; raises on a non-zero exit."""
    start = time.perf_counter()
    done = subprocess.run([tony, "config", "--conf_file", path], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=timeout, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"tony config --conf_file {path} exited {done.returncode}")
    return elapsed


def best_of(tony, path, repeats, timeout, verbose, label):
    times = []
    for _ in range(repeats):
        times.append(time_config(tony, path, timeout))
        if verbose:
            print(f"  {label}: {times[-1] * 1000:.1f} ms", file=sys.stderr)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tony", default=DEFAULT_TONY, help="the tony binary (build/tony)")
    parser.add_argument("--sizes", default="2000,20000,200000",
                        help="property counts, comma-separated (default 2000,20000,200000)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per size; the best counts")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per run")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every run")
    args = parser.parse_args()
    if not os.access(args.tony, os.X_OK):
        sys.exit(f"no tony binary at {args.tony} (build it first, or pass --tony)")
    sizes = [int(s) for s in args.sizes.split(",")]

    results = {}
    with tempfile.TemporaryDirectory(prefix="tony-config-bench-") as tmp:
        base_path = os.path.join(tmp, "one.xml")
        write_conf(base_path, 1)
        baseline = best_of(args.tony, base_path, args.repeats, args.timeout, args.verbose,
                           "baseline")
        for n in sizes:
            path = os.path.join(tmp, f"conf-{n}.xml")
            write_conf(path, n)
            best = best_of(args.tony, path, args.repeats, args.timeout, args.verbose, str(n))
            results[n] = {"bytes": os.path.getsize(path), "best_ms": best * 1000,
                          "net_ms": max(best - baseline, 0) * 1000}

    print(f"machine: nproc={os.cpu_count()}, load {os.getloadavg()[0]:.2f}; "
          f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; best of {args.repeats} runs")
    print(f"baseline (1 property): {baseline * 1000:.1f} ms")
    print(f"{'properties':>10} {'file MB':>8} {'best ms':>9} {'net ms':>9} {'x previous':>11} "
          f"{'net x previous':>15}")
    ratios = {}
    previous = None
    for n in sizes:
        r = results[n]
        ratio = net_ratio = None
        if previous is not None:
            p = results[previous]
            ratio = r["best_ms"] / p["best_ms"]
            net_ratio = r["net_ms"] / p["net_ms"] if p["net_ms"] > 0 else None
            ratios[f"{n}/{previous}"] = {"ratio": ratio, "net_ratio": net_ratio,
                                         "size_ratio": n / previous}
        cell = lambda v: f"{v:.1f}" if v is not None else "-"
        print(f"{n:>10} {r['bytes'] / 1e6:>8.2f} {r['best_ms']:>9.1f} {r['net_ms']:>9.1f} "
              f"{cell(ratio):>11} {cell(net_ratio):>15}")
        previous = n
    print(json.dumps({"baseline_ms": baseline * 1000, "repeats": args.repeats,
                      "results": {str(n): r for n, r in results.items()}, "ratios": ratios}))


if __name__ == "__main__":
    main()
