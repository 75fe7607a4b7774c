"""tessera clean removes what killed runs leave (temporaries, stale locks) and
keeps the temporary of a file another process is writing now."""
import fcntl
import os
import subprocess
import sys

from tessera import clean


def test_removes_leftovers_and_keeps_live_ones(tmp_path):
    (tmp_path / "wrfout_d01.nc").write_bytes(b"final")
    (tmp_path / "old.nc.tessera-tmp").write_bytes(b"partial")
    (tmp_path / "old.nc.tessera-lock").write_bytes(b"")
    (tmp_path / "piece.nc.0003.tessera-tmp").write_bytes(b"partial")
    (tmp_path / "live.nc.tessera-tmp").write_bytes(b"being written")
    lock = tmp_path / "live.nc.tessera-lock"
    lock.write_bytes(b"")
    # A running job's lock, held by another process (fcntl locks are per process).
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl,os,sys; fd=os.open(sys.argv[1], os.O_RDWR); "
         "fcntl.lockf(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()",
         str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert clean.main([str(tmp_path)]) == 0
        left = sorted(p.name for p in tmp_path.iterdir())
        assert left == ["live.nc.tessera-lock", "live.nc.tessera-tmp", "wrfout_d01.nc"]
    finally:
        holder.stdin.close()
        holder.wait()
    assert clean.main([str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wrfout_d01.nc"]


def test_dry_run_removes_nothing(tmp_path, capsys):
    (tmp_path / "a.nc.tessera-tmp").write_bytes(b"x")
    assert clean.main(["--dry-run", str(tmp_path)]) == 0
    assert (tmp_path / "a.nc.tessera-tmp").exists()
    assert "would remove" in capsys.readouterr().out


def test_not_a_directory(tmp_path):
    assert clean.main([str(tmp_path / "missing")]) == 2


def test_log_temporary_and_planted_link(tmp_path):
    """A staged log's temporary is a directory; a link is removed, never its target."""
    log = tmp_path / "run.nc.tessera-tmp"
    log.mkdir()
    (log / "000000.log").write_bytes(b"partial")
    victim = tmp_path / "precious.txt"
    victim.write_bytes(b"keep me")
    (tmp_path / "x.nc.tessera-tmp").symlink_to(victim)
    (tmp_path / "x.nc.tessera-lock").symlink_to(victim)
    assert clean.main([str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious.txt"]
    assert victim.read_bytes() == b"keep me"
