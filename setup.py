"""Packaging hook: the wheel ships the static view of the facade as ``tcpdsl/__init__.pyi``.

The one copy of that stub lives in ``stubs/tcpdsl/__init__.pyi``, where the project's own checkers
and stubtest read it (``mypy_path``/``stubPath``). Checkers in a user's project read the installed
package instead, so the build places the stub next to the facade module it describes. An editable
install needs no copy: it puts the checkout's root on the path, where the link ``tcpdsl-stubs`` is
a partial stub-only package (docs/static-checking.md). Everything else is configured in
``pyproject.toml``.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

STUB = Path("stubs", "tcpdsl", "__init__.pyi")


class BuildWithStub(build_py):
    """``build_py`` that also copies the facade stub into the built package."""

    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            self.copy_file(str(STUB), str(Path(self.build_lib, "tcpdsl", "__init__.pyi")))


setup(cmdclass={"build_py": BuildWithStub})
