"""Reports its steps through the tony_task helper; as worker 1's first attempt it then stops itself
(SIGSTOP), as a rank stuck in a deadlock or a read would look to tony."""
import os
import signal

import tony_task

for step in range(1, 4):
    tony_task.progress(step, total=3, loss=1.0 / step)
if os.environ["TASK_INDEX"] == "1" and os.environ["ATTEMPT_NUMBER"] == "0":
    os.kill(os.getpid(), signal.SIGSTOP)
print("done")
