"""A fresh venv: the core installed editable from this checkout, then a provider with
``hermes-memory install`` (resolved from this checkout's ``plugins/``/``contrib/``): the core is
still
the editable checkout afterwards, also with ``--force-reinstall``.

Offline: the venv sees this environment's packages after its own (a ``.pth`` file naming
this environment's site-packages) and pip runs with ``--no-index --no-build-isolation``, so
nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{cmd}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def _core_origin(python: Path, env: dict[str, str]) -> dict[str, object]:
    code = (
        "import json, hermes_core\n"
        "from importlib.metadata import distribution\n"
        "d = distribution('hermes-memory-core')\n"
        "print(json.dumps({'file': hermes_core.__file__, "
        "'direct_url': json.loads(d.read_text('direct_url.json') or '{}')}))"
    )
    return dict(json.loads(_run([str(python), "-c", code], env).stdout))


def test_installing_a_provider_keeps_the_editable_core(tmp_path: Path) -> None:
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(target)
    python = target / "bin" / "python"
    inner = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    outer = sysconfig.get_paths()["purelib"]
    Path(inner, "outer-env.pth").write_text(outer + "\n", encoding="utf-8")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))},
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # pip's inverted spelling: build isolation OFF
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "HERMES_HOME": str(tmp_path / "home"),
        "PATH": f"{target / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    _run([str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(ROOT)], env)
    before = _core_origin(python, env)
    assert before["direct_url"]["dir_info"]["editable"] is True  # type: ignore[index]
    assert str(before["file"]).startswith(str(ROOT))

    hermes = [str(python), "-m", "hermes_core"]
    done = _run([*hermes, "install", "holographic"], env)
    assert "from this checkout" in done.stderr
    listed = _run([*hermes, "memory", "list", "--json"], env)
    assert "holographic" in {p["name"] for p in json.loads(listed.stdout)}
    assert _core_origin(python, env) == before  # still the editable checkout

    _run([*hermes, "install", "--force-reinstall", "hermes-memory-holographic"], env)
    assert _core_origin(python, env) == before
    assert sys.executable  # the outer environment is untouched (nothing installed there)
