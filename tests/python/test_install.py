"""pip installs the package into a venv (offline: setuptools and wheel from
Debian, through --system-site-packages), and the installed plugin is found
through its pytest11 entry point."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from conftest import GETPPID, SRCDIR


def test_pip_install_into_venv(tmp_path, perfgate_bin: str) -> None:
    # pip builds in the directory it installs from: use a copy, not the tree.
    src = tmp_path / "src"
    shutil.copytree(os.path.join(SRCDIR, "clients", "python"), src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PIP_NO_INPUT"] = "1"
    py = str(venv / "bin" / "python")
    r = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                        "--no-cache-dir", str(src)],
                       env=env, text=True, capture_output=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(
        [py, "-c", "import os, perfgate, importlib.metadata as m\n"
                   "d = os.path.dirname(perfgate.__file__)\n"
                   "print(d)\n"
                   "print(os.path.exists(os.path.join(d, 'py.typed')))\n"
                   "print([e.value for e in m.entry_points(group='pytest11')"
                   " if e.name == 'perfgate.pytest_plugin'])\n"],
        cwd=tmp_path, env=env, text=True, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    where, typed, entry = r.stdout.splitlines()
    assert where.startswith(str(venv)), where
    assert (typed, entry) == ("True", "['perfgate.pytest_plugin']")
    # pytest finds the installed plugin by itself (no -p).
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "t" / "test_one.py").write_text(
        "import os\ndef test_one():\n    for _ in range(9):\n        os.getppid()\n")
    r = subprocess.run([py, "-m", "pytest", "-p", "no:cacheprovider", "--perfgate", "-e", GETPPID,
                        "--perfgate-bin", perfgate_bin, "--perfgate-json", "run.json"],
                       cwd=tmp_path / "t", env=env, text=True, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    views = json.loads((tmp_path / "t" / "run.json").read_text())["views"]
    assert [v["count"] for v in views
            if v.get("window") == "test_one.py::test_one" and v["event"] == GETPPID] == [9]
