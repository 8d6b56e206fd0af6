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
