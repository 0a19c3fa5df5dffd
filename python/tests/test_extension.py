"""The extension as built makes no std::filesystem calls. Once a process imports torch, libstdc++'s
own std::filesystem calls bind to the copies PyTorch's libraries export, built against another
libstdc++ (docs/build.md, pytorch/pytorch#133437), so the extension keeps to POSIX calls."""

import shutil
import subprocess

import pytest

import ffyolo._ffyolo


def test_the_extension_makes_no_std_filesystem_calls():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm here (binutils)")
    imported = subprocess.run([nm, "-D", "--undefined-only", ffyolo._ffyolo.__file__], check=True,
                              capture_output=True, text=True).stdout.splitlines()
    calls = [line.split()[-1] for line in imported if "_ZNSt10filesystem" in line]
    assert not calls, f"std::filesystem calls in {ffyolo._ffyolo.__file__}: {calls}"
