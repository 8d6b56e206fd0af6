"""pytest setup for the tmemjit package: a private disk cache per session, and the seed specs."""

import pytest

import seed_specs
import tmemjit


@pytest.fixture(autouse=True, scope="session")
def private_cache(tmp_path_factory):
    # Tests count hits and misses: a cache shared with other runs would make them lie.
    tmemjit.set_cache_dir(str(tmp_path_factory.mktemp("tmemjit-cache")))
    yield


@pytest.fixture(params=[name for name, _ in seed_specs.SEEDS])
def seed_name(request):
    return request.param


@pytest.fixture(params=[True, False], ids=["st", "ld"])
def seed_spec(request, seed_name):
    """Each seed example as a store and as a load."""
    return dict(seed_specs.SEEDS)[seed_name](store=request.param)


# A suite whose every test skipped (no GPU, no cuda.core) exits 77, which CTest shows as Skipped
# (SKIP_RETURN_CODE in python/CMakeLists.txt) with pytest's reasons in its output: not a pass.
SKIP_EXIT_CODE = 77
_outcomes = {"passed": 0, "failed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        _outcomes[report.outcome] = _outcomes.get(report.outcome, 0) + 1


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 0 and _outcomes["skipped"] and not _outcomes["passed"] and not _outcomes["failed"]:
        session.exitstatus = SKIP_EXIT_CODE
