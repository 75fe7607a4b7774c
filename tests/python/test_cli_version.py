"""The `tessera` command's --version (top level and every command), the
console script the package installs, and one version everywhere."""
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

import tessera  # noqa: E402
from tessera import __main__ as cli  # noqa: E402


def run(*args, exe=None):
    cmd = [exe] if exe else [sys.executable, "-m", "tessera"]
    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}
    return subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, timeout=60)


def test_one_version_in_cmake_and_python():
    project = re.search(r"project\(Tessera VERSION ([0-9.]+)",
                        (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert tessera.__version__ == project
    meta = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())
    assert meta["project"]["dynamic"] == ["version"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "tessera.__version__"
    assert meta["project"]["scripts"]["tessera"] == "tessera.__main__:main"
    # Runtime dependencies and test extras are separate.
    assert "pytest" not in " ".join(meta["project"]["dependencies"])
    assert "pytest" in " ".join(meta["project"]["optional-dependencies"]["test"])


def test_top_level_version():
    p = run("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"tessera {tessera.__version__}"


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_command_has_version(command):
    if cli.load(command) is None:
        pytest.skip(f"tessera.{command} is not in this checkout")
    p = run(command, "--version")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"tessera {command} {tessera.__version__}"


def test_version_after_double_dash_belongs_to_the_tuned_command():
    assert cli.asks_version(["--budget", "3", "--version"])
    assert not cli.asks_version(["--budget", "3", "--", "mpiexec", "prog", "--version"])


def test_console_script_of_the_venv():
    exe = ROOT / ".venv" / "bin" / "tessera"
    if not exe.is_file():
        pytest.skip("no .venv/bin/tessera (make venv installs it)")
    p = run("--version", exe=str(exe))
    assert p.returncode == 0 and p.stdout.strip() == f"tessera {tessera.__version__}"
    p = run("--help", exe=str(exe))
    assert "tune" in p.stdout and "stats" in p.stdout


def test_missing_dependency_is_a_clear_message(tmp_path):
    # An interpreter without the tools' dependencies (here: rich hidden by a
    # module that fails to import) gets a sentence, not a traceback.
    fake = tmp_path / "rich"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'rich'\", "
                                      "name='rich')\n")
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT / 'python'}", "PATH": "/usr/bin:/bin"}
    p = subprocess.run([sys.executable, "-m", "tessera", "tune", "--version"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "needs the Python package 'rich'" in p.stderr and "Traceback" not in p.stderr
