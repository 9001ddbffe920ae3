"""Each task writes one file into the job's output directory and says so."""
import os

name = f"{os.environ['JOB_NAME']}-{os.environ['TASK_INDEX']}"
with open(os.path.join(os.environ["TONY_OUTPUT_DIR"], name + ".txt"), "w") as f:
    f.write(name + "\n")
print(f"{name} wrote its output", flush=True)
