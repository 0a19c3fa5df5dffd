"""The extension's symbols. Once a process imports torch, libstdc++'s own std::filesystem calls bind to
the copies PyTorch's libraries export, built against another libstdc++ (docs/build.md,
pytorch/pytorch#133437), so the extension keeps to POSIX calls; and it exports nothing but its module's
init, so that none of its own calls can bind to another library's copy of a name (docs/python.md)."""

import shutil
import subprocess

import pytest

import ffyolo._ffyolo
from conftest import TOOLS


def dynamic_symbols(*which: str) -> list[str]:
    """The extension's dynamic symbols nm lists with `which` (--defined-only, --undefined-only)."""
    nm = TOOLS / "nm" if (TOOLS / "nm").is_file() else shutil.which("nm")
    if nm is None:
        pytest.skip("no nm here (binutils)")
    out = subprocess.run([str(nm), "-D", *which, ffyolo._ffyolo.__file__], check=True, capture_output=True,
                         text=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


def test_the_extension_makes_no_std_filesystem_calls():
    calls = [s for s in dynamic_symbols("--undefined-only") if "_ZNSt10filesystem" in s]
    assert not calls, f"std::filesystem calls in {ffyolo._ffyolo.__file__}: {calls}"


def test_the_extension_exports_its_module_init_alone():
    """Any other name it exported would bind its own calls to whichever loaded library defines that name
    first (python/src/exports.map): with torch imported first, torch's copies of std:: code."""
    assert dynamic_symbols("--defined-only") == ["PyInit__ffyolo"]
