"""Install the real ``brv`` (npm ``byterover-cli``) into a directory for the tests.

Usage: python install_brv.py PREFIX — runs ``npm install --prefix PREFIX byterover-cli@3.14.0``
unless PREFIX already has it. Without node/npm it prints why and exits 0: the real-brv test
is then skipped with that reason (``tests/test_byterover_real_brv.py``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE = "byterover-cli@3.14.0"
TIMEOUT = 1200


def main(prefix: Path) -> int:
    brv = prefix / "node_modules" / ".bin" / "brv"
    if brv.exists():
        print(f"real brv already installed: {brv}")
        return 0
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        print("node/npm not found: the real-brv test will be skipped")
        return 0
    prefix.mkdir(parents=True, exist_ok=True)
    command = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        "--no-update-notifier",
        "--loglevel=error",
        PACKAGE,
    ]
    print("installing the real brv:", " ".join(command), flush=True)
    try:
        return subprocess.run(
            command, check=False, stdin=subprocess.DEVNULL, timeout=TIMEOUT
        ).returncode
    except subprocess.TimeoutExpired:
        print(
            f"npm install did not finish within {TIMEOUT} s: check access to the npm registry "
            "(behind a TLS-intercepting proxy, NODE_EXTRA_CA_CERTS must reach tox)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
