"""`tessera stage in SRC... --to DIR` (python/tessera/stage/inputs.py): the copy's
name is the library's (base name, FNV-1a of the resolved path), its bytes and
modification time are the source's, an up-to-date copy is kept (same inode),
a changed source is copied again, a missing one is an error naming it. That
`tsr_open` reuses the copy is stage_in_cli.sh's test. Standard library only:
`python3 -m unittest test_stage_in` with python/ on PYTHONPATH."""
import os
import tempfile
import unittest

from tessera.stage import command as stage
from tessera.stage import inputs as stage_in

DATA = bytes(range(256)) * 4099 + b"tail"


class StageIn(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.src = os.path.join(self.tmp.name, "wrfinput_d01")
        with open(self.src, "wb") as fh:
            fh.write(DATA)
        self.sdir = os.path.join(self.tmp.name, "stage")
        self.log = []

    def tearDown(self):
        self.tmp.cleanup()

    def test_hash_is_the_librarys(self):
        # src/tier/stage_in.c: h = 1469598103934665603, then per byte
        # h = (h ^ byte) * 1099511628211 mod 2^64.
        self.assertEqual(stage_in.path_hash(""), 1469598103934665603)
        self.assertEqual(stage_in.path_hash("a"),
                         ((1469598103934665603 ^ 0x61) * 1099511628211) % 2**64)

    def test_name_follows_the_resolved_path(self):
        real = os.path.realpath(self.src)
        want = os.path.join(self.sdir, f"wrfinput_d01.{stage_in.path_hash(real):016x}.in")
        self.assertEqual(stage_in.staged_name(self.src, self.sdir), want)
        rel = os.path.relpath(self.src)
        self.assertEqual(stage_in.staged_name(rel, self.sdir), want)

    def test_copy_exact_then_kept(self):
        self.assertEqual(stage_in.run([self.src], self.sdir, log=self.log.append), 0)
        local = stage_in.staged_name(self.src, self.sdir)
        with open(local, "rb") as fh:
            self.assertEqual(fh.read(), DATA)
        self.assertEqual(os.stat(local).st_mtime_ns, os.stat(self.src).st_mtime_ns)
        self.assertEqual(sorted(os.listdir(self.sdir)), [os.path.basename(local)])
        ino = os.stat(local).st_ino
        self.assertEqual(stage_in.stage_in(self.src, self.sdir), (local, 0))
        self.assertEqual(os.stat(local).st_ino, ino)

    def test_changed_source_copied_again(self):
        os.makedirs(self.sdir)
        local, n = stage_in.stage_in(self.src, self.sdir)
        self.assertEqual(n, len(DATA))
        with open(self.src, "ab") as fh:
            fh.write(b"more")
        self.assertEqual(stage_in.stage_in(self.src, self.sdir), (local, len(DATA) + 4))
        with open(local, "rb") as fh:
            self.assertEqual(fh.read(), DATA + b"more")

    def test_missing_source_is_named(self):
        gone = os.path.join(self.tmp.name, "no_such_input")
        self.assertEqual(stage_in.run([gone, self.src], self.sdir, log=self.log.append), 1)
        self.assertIn(f"ERROR: {gone}:", self.log[0])
        self.assertTrue(os.path.exists(stage_in.staged_name(self.src, self.sdir)))

    def test_cli_exit_status(self):
        self.assertEqual(stage.main(["in", self.src, "--to", self.sdir]), 0)
        self.assertEqual(stage.main(["in", self.src + ".nope", "--to", self.sdir]), 1)


if __name__ == "__main__":
    unittest.main()
