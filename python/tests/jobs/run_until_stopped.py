"""Says it started, then runs until tony stops it."""
import time

print("started", flush=True)
time.sleep(600)
