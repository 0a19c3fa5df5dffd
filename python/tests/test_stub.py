"""python/ffyolo/_ffyolo.pyi, the extension's type stub, is nanobind's stubgen output for the
extension as built: regenerate it with the command below when a binding changes."""

import subprocess
import sys
from pathlib import Path

import pytest

STUB = Path(__file__).resolve().parents[1] / "ffyolo" / "_ffyolo.pyi"


def test_stub_is_current(tmp_path):
    pytest.importorskip("nanobind.stubgen", reason="nanobind is not installed here")
    out = tmp_path / "_ffyolo.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "ffyolo._ffyolo", "-o", str(out)],
                   check=True)
    assert out.read_text() == STUB.read_text(), (
        f"stale stub: python -m nanobind.stubgen -m ffyolo._ffyolo -o {STUB}")
