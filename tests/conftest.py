"""Shared test configuration: hypothesis profiles and plotting fixtures."""

import os

import pytest
from hypothesis import HealthCheck, settings

# Small, deadline-free profiles keep the whole suite within CI's budget on 2 cores;
# under CI the examples are derandomised so that a run is reproducible.
settings.register_profile(
    "ci",
    deadline=None,
    max_examples=25,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture
def pyplot():
    """Give matplotlib's pyplot with the Agg backend and close every figure afterwards."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")
