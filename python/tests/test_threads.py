"""Threads and the interpreter's exit (docs/python.md, "Threads and processes"): close() against the calls of
other threads, daemon threads inside the extension when the interpreter exits, memory hooks that call their
own loader. What fails here hangs or aborts the interpreter, so each scenario runs in a child interpreter
under a timeout."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

RUNS_AT_EXIT = 3  # the aborts these runs look for came in 5 runs of 5, and 7 of 8, before the fix


def run(code: str, *args, timeout: float = 60, env: dict | None = None) -> str:
    """`code` run by a new interpreter, which must exit 0 within `timeout` seconds; its stdout."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ, **(env or {})))
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_close_wakes_a_next_waiting_in_another_thread(coco128):
    """A batch of 64 mosaics at 640 takes one worker seconds: close() comes while the other thread waits."""
    out = run("""
        import sys, threading, time
        import ffyolo

        loader = ffyolo.Loader(sys.argv[1], img=640, batch=64, workers=1)
        waiting, raised = threading.Event(), []

        def iterate():
            waiting.set()
            try:
                next(loader)
            except ValueError as e:
                raised.append(str(e))

        thread = threading.Thread(target=iterate)
        thread.start()
        waiting.wait()
        time.sleep(0.3)
        loader.close()
        thread.join()
        print(raised)
    """, coco128)
    assert out.strip() == "['this ffyolo.Loader is closed']"


def test_close_and_dropped_batches_while_another_thread_runs_a_memory_hook(coco128):
    """The other thread holds every batch, so each one past the ring's depth is handed over and its new
    buffer registered; while a register hook sleeps, without the GIL, this thread drops the batches, the
    one being handed over among them, and closes the loader. Every buffer is unregistered once, when its
    memory goes. glibc fills freed memory (MALLOC_PERTURB_), so that a use after free shows."""
    out = run("""
        import json, sys, threading, time
        import ffyolo

        registered, unregistered, hooked, raised = [], [], threading.Event(), []

        def register(address, size):
            registered.append(address)
            if len(registered) > 2:  # a hand-over's, not the ring's
                hooked.set()
                time.sleep(0.2)

        loader = ffyolo.Loader(sys.argv[1], img=128, batch=8, workers=1, prefetch=2,
                               memory_hooks=(register, unregistered.append))
        kept = []

        def iterate():
            try:
                for batch in loader:
                    kept.append(batch)
            except ValueError as e:
                raised.append(str(e))

        thread = threading.Thread(target=iterate)
        thread.start()
        hooked.wait()
        kept.clear()
        loader.close()
        thread.join()
        kept.clear()
        print(json.dumps({"raised": raised, "registered": sorted(registered), "unregistered": sorted(unregistered)}))
    """, coco128, env={"MALLOC_PERTURB_": "165"})
    result = json.loads(out)
    assert result["raised"] == ["this ffyolo.Loader is closed"]
    assert len(result["registered"]) > 2 and result["unregistered"] == result["registered"]


def test_a_loader_closed_while_next_makes_its_batch_raises(coco128):
    """Making the batch's Python objects may run other Python code: here a finalizer of cyclic garbage,
    which the collector, run at every allocation, calls as next() makes the batch's arrays."""
    out = run("""
        import gc, sys
        import ffyolo

        loader = ffyolo.Loader(sys.argv[1], img=128, batch=8, workers=1)

        class Closer:
            def __del__(self):
                loader.close()

        closer = Closer()
        closer.cycle = closer
        del closer
        gc.set_threshold(1)
        try:
            next(loader)
        except ValueError as e:
            print(e)
    """, coco128)
    assert out.strip() == "this ffyolo.Loader is closed"


@pytest.mark.parametrize("backend", ["pread", "mmap"])
def test_daemon_threads_reading_at_exit(coco128, backend):
    for _ in range(RUNS_AT_EXIT):
        run("""
            import sys, threading, time
            import ffyolo

            reader = ffyolo.Reader(sys.argv[1], backend=sys.argv[2])

            def read():
                while True:
                    reader.read_batch(range(len(reader)))

            for _ in range(4):
                threading.Thread(target=read, daemon=True).start()
            time.sleep(0.2)
        """, coco128 / "train2017", backend)


def test_a_daemon_thread_iterating_at_exit(coco128):
    for _ in range(RUNS_AT_EXIT):
        run("""
            import sys, threading, time
            import ffyolo

            loader = ffyolo.Loader(sys.argv[1], img=128, batch=8, workers=1)

            def iterate():
                while True:
                    for _ in loader:
                        pass

            threading.Thread(target=iterate, daemon=True).start()
            time.sleep(0.5)
        """, coco128)


# The interpreter exits while a daemon thread runs Python code the extension called: BUSY, which first sets
# `entered`, then computes for a while.
BUSY_AT_EXIT = """
    import sys, threading, time
    import ffyolo

    entered = threading.Event()

    def busy():
        entered.set()
        start = time.perf_counter()
        while time.perf_counter() - start < 0.5:
            pass

    SCENARIO
    threading.Thread(target=daemon, daemon=True).start()
    entered.wait()
"""


@pytest.mark.parametrize("hook", ["register", "unregister"])
def test_a_daemon_thread_in_a_memory_hook_at_exit(coco128, hook):
    """A thread holding every batch: a hand-over registers a new buffer in next(), and dropping the batches
    unregisters them, from the arrays' own release."""
    run(BUSY_AT_EXIT.replace("SCENARIO", f"""
    hooks = {{"register": lambda address, size: None, "unregister": lambda address: None}}
    hooks["{hook}"] = lambda *address_and_size: busy()
    loader = ffyolo.Loader(sys.argv[1], img=128, batch=8, workers=1, prefetch=2,
                           memory_hooks=(hooks["register"], hooks["unregister"]))

    def daemon():
        while True:
            kept = list(loader)
    """), coco128)


def test_a_daemon_thread_in_python_code_of_a_call_at_exit(coco128):
    """load_state_dict compares the state's values with the loader's options: here by a Python __eq__."""
    run(BUSY_AT_EXIT.replace("SCENARIO", """
    class Seed(int):
        def __eq__(self, other):
            busy()
            return int(self) == other

        __hash__ = int.__hash__

    loader = ffyolo.Loader(sys.argv[1], img=128, batch=8, workers=1)
    state = dict(loader.state_dict(), seed=Seed(loader.state_dict()["seed"]))

    def daemon():
        while True:
            loader.load_state_dict(state)
    """), coco128)


HOOK_CALLING_ITS_LOADER = """
    import json, sys
    import ffyolo

    reported, box = [], {}
    sys.unraisablehook = lambda unraisable: reported.append(str(unraisable.exc_value))

    def register(address, size):
        if "loader" in box:  # a hand-over's: at the second epoch's start, of the batch the loop holds
            CALL

    loader = box["loader"] = ffyolo.Loader(sys.argv[1], img=128, batch=8, workers=1, prefetch=2,
                                           memory_hooks=(register, lambda address: None))
    per_epoch, batches, raised = len(loader), 0, None
    try:
        for epoch in range(2):
            for batch in loader:
                batches += 1
    except ValueError as e:
        raised = str(e)
    print(json.dumps({"per_epoch": per_epoch, "batches": batches, "raised": raised, "reported": reported,
                      "closed": loader.closed}))
"""


def test_a_memory_hook_may_close_its_loader(coco128):
    result = json.loads(run(HOOK_CALLING_ITS_LOADER.replace("CALL", 'box["loader"].close()'), coco128))
    assert result["closed"] and result["raised"] == "this ffyolo.Loader is closed" and not result["reported"]
    assert result["batches"] == result["per_epoch"]  # the first epoch's


def test_a_memory_hook_iterating_its_loader_is_refused(coco128):
    result = json.loads(run(HOOK_CALLING_ITS_LOADER.replace("CALL", 'next(box["loader"])'), coco128))
    assert result["raised"] is None and not result["closed"] and result["batches"] == 2 * result["per_epoch"]
    assert len(result["reported"]) == 1 and "memory hook" in result["reported"][0], result["reported"]
