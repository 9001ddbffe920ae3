#!/usr/bin/python3
"""Reads Prometheus's text format on stdin and parses it with prometheus_client's own parser
(Debian's python3-prometheus-client), as a scraper would; prints each sample as one line,
name{label="value",...} value, its labels sorted. Exits 1, naming the problem, on text the parser
refuses or a family it reads twice (its samples were split)."""
import sys

from prometheus_client.parser import text_string_to_metric_families

text = sys.stdin.read()
seen = set()
try:
    for family in text_string_to_metric_families(text):
        # A counter's family is named without "_total", a stray sample of it after another
        # family (untyped) with it: both are the same name here.
        name = family.name[:-len("_total")] if family.name.endswith("_total") else family.name
        if name in seen:
            sys.exit(f"parse_metrics.py: the family {family.name} comes twice")
        seen.add(name)
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            print(f"{sample.name}{{{labels}}} {sample.value!r}")
except ValueError as e:
    sys.exit(f"parse_metrics.py: {e}")
