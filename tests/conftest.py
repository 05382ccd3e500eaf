"""Suite-wide Hypothesis settings.

Hypothesis's default per-example deadline measures the machine, not the code: on a loaded CI
runner a first call that misses it and a replay that does not is reported as a flaky failure.
Tests that promise a speed bound it themselves, in their own assertions.
"""

from hypothesis import settings

settings.register_profile("tcpdsl", deadline=None)
settings.load_profile("tcpdsl")
