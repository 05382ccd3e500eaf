"""Static checking of kernels: the logic behind the mypy plugin (entry point ``tcpdsl.mypy_plugin``).

* :mod:`~tcpdsl.static.names` - the runtime objects the plugin recognises, by full name.
* :mod:`~tcpdsl.static.texts` - reading mapping texts from types and call expressions.
* :mod:`~tcpdsl.static.resolve` - resolving axis names and escapes through mypy's symbol tables.
* The stage rules themselves come from :mod:`tcpdsl.verify.compose`, the code the runtime runs.
* :mod:`~tcpdsl.static.annotations`, :mod:`~tcpdsl.static.calls`, :mod:`~tcpdsl.static.declarations`,
  :mod:`~tcpdsl.static.logical` - the hooks, per mypy phase; :mod:`~tcpdsl.static.plugin` wires them to
  full names.
* :mod:`~tcpdsl.static.report`, :mod:`~tcpdsl.static.codes` - diagnostics with the runtime's text.
"""
