"""Exit as a defined point (docs/reliability.md "Exit"; issue 39 N01, N21): an interpreter that
ends while a compile runs, a lazy kernel's background compile or a daemon thread's own compile,
exits 0 with its output intact. Both crashed inside NVRTC (SIGSEGV, or SIGABRT "terminate called
without an active exception") in many runs: exit tore down NVRTC's statics under the compile.

Each case runs child interpreters with a private cache directory."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import tmemjit

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "epilogue"
RUNS = int(os.environ.get("TMEMJIT_EXIT_RUNS", "4"))

pytestmark = pytest.mark.skipif(not tmemjit._tmemjit._have_specialize,
                                reason="this libtmemjit has no compile_kernel")

CHILD = textwrap.dedent("""
    import sys, threading, time, tmemjit
    mode, cache, load, store = sys.argv[1:5]
    # A second kernel of 256 dependent sinf calls, so that the main thread ends during its compile:
    # 5.5 s on 2 shared cores (64 calls finished within the 50 ms below on a 16-core H100 host).
    SLOW = ('\\nextern "C" __global__ void exit_test_slow(float* p) {\\n  float x = p[threadIdx.x];\\n' +
            "  x = sinf(x) * p[((int)x) & 7];\\n" * 256 + "  p[threadIdx.x] = x;\\n}\\n")
    tmemjit.set_cache_dir(cache)
    text = open(sys.argv[5]).read()
    transfers = {
        "acc_load": tmemjit.Transfer(tmemjit.TransferSpec.from_json(open(load).read()),
                                     wait=False, column_argument=True),
        "acc_store": tmemjit.Transfer(tmemjit.TransferSpec.from_json(open(store).read()),
                                      wait=False, column_argument=True),
    }
    if mode == "warmup":
        tmemjit.warmup_kernel(text, "epilogue", transfers)
    elif mode == "lazy":
        kernel = tmemjit.compile_kernel(text, "epilogue", transfers, specialization="lazy")
        print(kernel.tier, flush=True)
    elif mode == "daemon":
        started, done = threading.Event(), threading.Event()
        def compile_it():
            started.set()
            tmemjit.compile_kernel(text + SLOW, "epilogue", transfers)
            done.set()
        threading.Thread(target=compile_it, daemon=True).start()
        started.wait()
        # Inside NVRTC by then (the wrapper's checks take microseconds), and NVRTC alone takes
        # longer than this on any host: the exit comes during the compile, not before or after.
        time.sleep(0.05)
        print("done" if done.is_set() else "compiling", flush=True)
    elif mode == "eager":
        kernel = tmemjit.compile_kernel(text + SLOW, "epilogue", transfers)
        print(kernel.report.cache, flush=True)
""")


def child(tmp_path, mode, cache, load="d_x32_ld", store="d_x32_st"):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    return subprocess.run(
        [sys.executable, str(script), mode, str(cache), str(EXAMPLE / "layouts" / f"{load}.json"),
         str(EXAMPLE / "layouts" / f"{store}.json"), str(EXAMPLE / "epilogue.cu")],
        capture_output=True, text=True, timeout=600, env=os.environ.copy())


def test_an_interpreter_exits_cleanly_during_a_lazy_kernels_background_compile(tmp_path):
    warm = tmp_path / "warm"
    warmed = child(tmp_path, "warmup", warm)
    assert warmed.returncode == 0, warmed.stderr
    for run in range(RUNS):
        cache = tmp_path / f"run{run}"
        subprocess.run(["cp", "-r", str(warm), str(cache)], check=True)
        layout = ("f_16x256b_ld", "f_16x256b_st") if run % 2 else ("d_x32_ld", "d_x32_st")
        out = child(tmp_path, "lazy", cache, *layout)
        assert (out.returncode, out.stdout) == (0, "generic\n"), out.stderr


def test_an_interpreter_exits_cleanly_while_a_daemon_thread_compiles(tmp_path):
    for run in range(RUNS):
        cache = tmp_path / f"run{run}"
        out = child(tmp_path, "daemon", cache)
        assert (out.returncode, out.stdout) == (0, "compiling\n"), out.stderr
        # The exit waited for the daemon's compile, which landed on disk.
        landed = child(tmp_path, "eager", cache)
        assert (landed.returncode, landed.stdout) == (0, "disk\n"), landed.stderr
