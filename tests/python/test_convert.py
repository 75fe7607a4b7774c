"""`tessera convert` (python/tessera/convert.py): its usage errors and the
error when the converter program is missing. The conversions themselves are
tested end to end by the CTest stage.kill_log (tests/stage/stage_kill.sh)."""
from tessera import convert


def test_not_a_log_directory(tmp_path, capsys):
    assert convert.main([str(tmp_path / "missing")]) == 2
    assert "is not a log directory" in capsys.readouterr().err


def test_log_without_marker_needs_out(tmp_path, capsys):
    log = tmp_path / "f.nc.0123-1-0"
    log.mkdir()
    assert convert.main([str(log)]) == 2
    assert "name the output with --out" in capsys.readouterr().err


def test_missing_program_keeps_the_log(tmp_path, capsys, monkeypatch):
    log = tmp_path / "f.nc.0123-1-0"
    log.mkdir()
    (log / "schema").write_bytes(b"TSRLOG01")
    monkeypatch.setenv("TESSERA_CONVERT", str(tmp_path / "no-such-program"))
    assert convert.main([str(log), "--out", str(tmp_path / "out.nc")]) == 1
    assert "tessera-convert not found" in capsys.readouterr().err
    assert (log / "schema").exists() and not (tmp_path / "out.nc").exists()


def test_marker_follows_the_recover_protocol(tmp_path):
    """`tessera convert MARKER` is recover for one marker: no log directory is
    a usage error; a log whose size is not the marker's is kept, exit 1."""
    final = tmp_path / "f.nc"
    final.write_bytes(b"CDF\x02")
    log = tmp_path / "f.nc.0123-1-0"
    marker = tmp_path / "f.nc.0123-1-0.tessera-dest"
    marker.write_text(f"{final}\n4\n")
    assert convert.main([str(marker)]) == 2  # no log directory: nothing to convert
    log.mkdir()
    assert convert.main([str(marker)]) == 1  # empty log (size 0, marker says 4): kept
    assert marker.exists() and log.exists()
