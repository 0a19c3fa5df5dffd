"""Run by test_reference.py: the interpreter exits while a daemon thread iterates an ffyolo.torch.Loader.
The loader's closer (a weakref.finalize, called at exit) stops it as the thread waits for a batch, which
raises ValueError there; the interpreter must exit 0, neither hanging nor aborting.

    python torch_daemon_exit.py PACKED_COCO128
"""

import sys
import threading
import time

import ffyolo.torch

loader = ffyolo.torch.Loader(sys.argv[1], img=128, batch=8, workers=1)


def iterate():
    try:
        while True:
            for _ in loader:
                pass
    except ValueError:  # closed at exit
        pass


threading.Thread(target=iterate, daemon=True).start()
time.sleep(0.5)
print("exiting while a daemon thread iterates")
