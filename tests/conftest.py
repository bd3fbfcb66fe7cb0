"""Fixtures shared by the core tests (helpers live in geometry_helpers: conftest modules of
different folders share one module name, so nothing is imported from them)."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
