"""worker:1 exits with 3; the others succeed."""
import os
import sys

sys.exit(3 if os.environ["TASK_INDEX"] == "1" else 0)
