"""The GIL is released during compiles and runs, and calls from several threads are safe."""

import sys
import threading
import time

import seed_specs
import tmemjit


def _runs_without_the_gil(call):
    """True when this thread ran Python code while `call`, on another thread, was inside the library.

    Flags and the GIL's own rules, not a clock: with a switch interval far longer than the test, a
    thread that holds the GIL keeps it until it blocks or releases it. The worker notes that it is
    inside, calls, then notes that it is done. This thread waits (releasing the GIL) until the
    worker is inside; from then on it holds the GIL. If the binding released the GIL, this thread
    took it while the call ran, and the worker cannot have noted "done" since. If the binding held
    the GIL, this thread ran again only after the worker had finished: it sees "done".
    """
    state = {"inside": False, "done": False}

    def worker():
        state["inside"] = True
        call()
        state["done"] = True

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        thread = threading.Thread(target=worker)
        thread.start()
        while not state["inside"]:
            time.sleep(0)  # releases the GIL to the worker
        seen_during = not state["done"]
    finally:
        sys.setswitchinterval(old_interval)
    thread.join()
    assert state["done"]
    return seen_during


def test_the_gil_check_tells_a_held_gil_from_a_released_one():
    # Pure Python holds the GIL for the whole call; a sleep releases it.
    assert not _runs_without_the_gil(lambda: sum(range(3_000_000)))
    assert _runs_without_the_gil(lambda: time.sleep(0.05))


def test_other_threads_run_during_a_compile():
    spec = seed_specs.layout_b()
    tmemjit.clear_cache(disk=True)  # a miss: the call compiles
    assert _runs_without_the_gil(lambda: tmemjit.compile_transfer(spec))


def test_other_threads_run_during_a_simulator_run():
    spec = seed_specs.layout_b(store=False)
    assert _runs_without_the_gil(lambda: tmemjit.run_transfer(spec, device="sim"))


def test_many_threads_mixing_calls():
    specs = [factory(store=store) for _, factory in seed_specs.SEEDS for store in (True, False)]
    expected = {spec: tmemjit.compile_transfer(spec).cubin for spec in specs}
    invalid = tmemjit.TransferSpec(op="tcgen05.st.sync.aligned.32x32b.x64.b32", scope="cta:8",
                                   tmem=seed_specs.LAYOUT_B_TMEM, regs=seed_specs.LAYOUT_B_REGS)
    failures = []

    def worker(index):
        try:
            for i in range(60):
                spec = specs[(index + i) % len(specs)]
                step = i % 5
                if step == 0:
                    assert tmemjit.compile_transfer(spec).cubin == expected[spec]
                elif step == 1:
                    assert tmemjit.check(spec).op == spec.op
                elif step == 2:
                    assert tmemjit.TransferSpec.from_json(spec.to_json()) == spec
                elif step == 3:
                    try:
                        tmemjit.check(invalid)
                        failures.append("an invalid spec passed")
                    except tmemjit.Error as error:
                        assert error.code == "rule"
                elif i % 20 == 4:
                    assert tmemjit.run_transfer(spec, device="sim").passed
        except Exception as error:  # reported below, with the thread that saw it
            failures.append(f"thread {index}: {error!r}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
