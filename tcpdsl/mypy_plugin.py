"""mypy entry point: ``[tool.mypy] plugins = ["tcpdsl.mypy_plugin"]``.

mypy keys its cache on this module's source and ``__version__`` only; the plugin also reports the tcpdsl
version and a digest of its logic through ``report_config_data``, so any change to the grammar, algebra,
verifiers or plugin invalidates cached results.
"""

from __future__ import annotations

from importlib.metadata import version as _distribution_version

from mypy.plugin import Plugin

from tcpdsl.static.plugin import TcpdslPlugin

__version__ = "0.1.0"


class _Plugin(TcpdslPlugin):
    version = f"{_distribution_version('tcpdsl')}+plugin.{__version__}"


def plugin(version: str) -> type[Plugin]:
    """The plugin class; ``version`` is mypy's (the hooks use the plugin API of mypy 2.x)."""
    del version
    return _Plugin
