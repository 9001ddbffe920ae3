"""A torchrun worker that says it started and runs until it is cancelled."""
import time

print("started", flush=True)
time.sleep(600)
