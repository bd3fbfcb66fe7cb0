"""Fixtures shared by the core tests (helpers live in geometry_helpers: conftest modules of
different folders share one module name, so nothing is imported from them)."""

import os

import numpy as np
import pytest
from hypothesis import settings

# CI replays a fixed set of property-test examples, so that a landing never depends on which
# random examples one run happened to draw; local runs keep exploring new ones (and keep any
# failure they find in .hypothesis/ for the next run).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
