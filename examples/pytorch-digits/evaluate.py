#!/usr/bin/python3
"""Loads the model train.py saved and evaluates it on the same held-out digits.

Under tony, ship the model to the task as a resource, which tony copies (or, from HDFS, localizes)
into the task's working directory:

    build/tony submit --src_dir examples/pytorch-digits --executes evaluate.py \\
        --python_binary_path /usr/bin/python3 \\
        --conf tony.containers.resources=<the training job's outputs>/model.pt

It prints `evaluated <path>: test accuracy 0.9xxx`, the accuracy train.py printed for the same
model, and exits 1 if the model cannot be read.
"""
import argparse
import sys

import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="model.pt", help="the state dict train.py saved")
    args = ap.parse_args()
    torch.set_num_threads(1)
    # The split and scaling train.py used (same seed), so the test set is the one it held out.
    x, y = load_digits(return_X_y=True)
    x_train, x_test, _, y_test = train_test_split(x, y, test_size=0.2, random_state=0, stratify=y)
    scaler = StandardScaler().fit(x_train)
    x_test = torch.tensor(scaler.transform(x_test), dtype=torch.float32)
    y_test = torch.tensor(y_test, dtype=torch.long)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    try:
        model.load_state_dict(torch.load(args.model))
    except (OSError, RuntimeError) as e:
        print(f"cannot load {args.model}: {e}", file=sys.stderr, flush=True)
        return 1
    model.eval()
    with torch.no_grad():
        acc = (model(x_test).argmax(dim=1) == y_test).float().mean().item()
    print(f"evaluated {args.model}: test accuracy {acc:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
