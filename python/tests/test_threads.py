"""The GIL is released during compiles and runs, and calls from several threads are safe."""

import sys
import threading
import time

import seed_specs
import tmemjit


def test_other_threads_run_during_a_simulator_run():
    spec = seed_specs.layout_b()
    tmemjit.run_transfer(spec, device="sim")  # compiled and warm: what follows is the run itself
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        calls, ticks, done = [], [], threading.Event()

        def worker():
            for _ in range(8):
                start = time.perf_counter()
                tmemjit.run_transfer(spec, device="sim")
                calls.append((start, time.perf_counter()))
            done.set()

        thread = threading.Thread(target=worker)
        thread.start()
        while not done.is_set():
            ticks.append(time.perf_counter())
        thread.join()
    finally:
        sys.setswitchinterval(old_interval)

    # With the GIL held, a call would be one silent gap as long as the call; released, this
    # thread keeps ticking through it (allowing for a busy machine taking the core away).
    def largest_gap(start, end):
        inside = [start] + [t for t in ticks if start < t < end] + [end]
        return max(b - a for a, b in zip(inside, inside[1:]))

    overlapped = sum(largest_gap(s, e) < 0.5 * (e - s) for s, e in calls)
    assert overlapped >= len(calls) // 2, (overlapped, calls)


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
