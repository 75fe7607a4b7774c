"""`tessera stage recover` on every state a crash can leave (docs/staging.md):
each marker resolved as the table says, staged data never removed unless its
final copy is in place. Runs with the standard library alone:
`python3 -m unittest test_recover` with python/ on PYTHONPATH."""
import os
import tempfile
import unittest

from tessera.stage import protocol as stage

DATA = bytes(range(256)) * 4099  # not a multiple of the copy chunk


class Recover(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.sdir = os.path.join(self.tmp.name, "stage")
        self.ddir = os.path.join(self.tmp.name, "final")
        os.mkdir(self.sdir)
        os.mkdir(self.ddir)
        self.log = []

    def tearDown(self):
        self.tmp.cleanup()

    def staged(self, name, data=DATA, marker_size=None, final=None, make_file=True):
        s = os.path.join(self.sdir, name)
        final = final or os.path.join(self.ddir, name + ".nc")
        if make_file:
            with open(s, "wb") as fh:
                fh.write(data)
        size = len(data) if marker_size is None else marker_size
        with open(s + stage.DEST_SUFFIX, "w") as fh:
            fh.write(f"{final}\n{size}\n")
        return s, final

    def recover(self):
        return stage.recover(self.sdir, log=self.log.append)

    def test_staged_file_is_placed(self):
        s, final = self.staged("a")
        with open(final + stage.TMP_SUFFIX, "wb") as fh:  # a drain killed mid-copy
            fh.write(DATA[:1000])
        self.assertEqual(self.recover(), 0)
        with open(final, "rb") as fh:
            self.assertEqual(fh.read(), DATA)
        self.assertFalse(os.path.exists(final + stage.TMP_SUFFIX))
        self.assertEqual(os.listdir(self.sdir), [])

    def test_size_mismatch_is_kept(self):
        s, final = self.staged("b", marker_size=len(DATA) + 1)
        self.assertEqual(self.recover(), 1)
        self.assertTrue(os.path.exists(s))
        self.assertTrue(os.path.exists(s + stage.DEST_SUFFIX))
        self.assertFalse(os.path.exists(final))

    def test_never_closed_is_removed(self):
        s, final = self.staged("c", make_file=False)
        with open(s + stage.TMP_SUFFIX, "wb") as fh:
            fh.write(DATA)
        self.assertEqual(self.recover(), 0)
        self.assertEqual(os.listdir(self.sdir), [])
        self.assertFalse(os.path.exists(final))

    def test_finished_drain_marker_is_removed(self):
        s, final = self.staged("d", make_file=False)
        with open(final, "wb") as fh:
            fh.write(DATA)
        self.assertEqual(self.recover(), 0)
        self.assertEqual(os.listdir(self.sdir), [])

    def test_torn_marker_without_file(self):
        s = os.path.join(self.sdir, "e")
        with open(s + stage.DEST_SUFFIX, "w") as fh:
            fh.write("/some/where")  # no newline: cut short
        self.assertEqual(self.recover(), 0)
        self.assertEqual(os.listdir(self.sdir), [])

    def test_unwritable_destination_keeps_staged(self):
        s, final = self.staged("f", final=os.path.join(self.ddir, "missing", "f.nc"))
        self.assertEqual(self.recover(), 1)
        self.assertTrue(os.path.exists(s))
        self.assertTrue(os.path.exists(s + stage.DEST_SUFFIX))

    def test_two_versions_land_in_order(self):
        final = os.path.join(self.ddir, "g.nc")
        s1, _ = self.staged("g1", data=b"old" * 100, final=final)
        os.utime(s1 + stage.DEST_SUFFIX, ns=(1, 1))
        self.staged("g2", data=b"new" * 100, final=final)
        self.assertEqual(self.recover(), 0)
        with open(final, "rb") as fh:
            self.assertEqual(fh.read(), b"new" * 100)

    def test_newer_final_is_not_replaced(self):
        s, final = self.staged("h")
        old = os.stat(s).st_mtime_ns - 100 * 10**9
        os.utime(s + stage.DEST_SUFFIX, ns=(old, old))  # closed 100 s ago
        with open(final, "wb") as fh:  # a rerun wrote the path since
            fh.write(b"newer")
        self.assertEqual(self.recover(), 1)
        with open(final, "rb") as fh:
            self.assertEqual(fh.read(), b"newer")
        self.assertTrue(os.path.exists(s))
        self.assertTrue(os.path.exists(s + stage.DEST_SUFFIX))
        self.assertFalse(os.path.lexists(final + stage.TMP_SUFFIX))
        self.assertTrue(any("is newer" in line for line in self.log), self.log)

    def test_copy_carries_the_marker_time(self):
        s, final = self.staged("i")
        made = os.stat(s + stage.DEST_SUFFIX).st_mtime_ns
        self.assertEqual(self.recover(), 0)
        self.assertEqual(os.stat(final).st_mtime_ns, made)

    def test_link_at_temporary_is_not_followed(self):
        victim = os.path.join(self.tmp.name, "victim")
        with open(victim, "wb") as fh:
            fh.write(b"precious")
        s, final = self.staged("j")
        os.symlink(victim, final + stage.TMP_SUFFIX)
        self.assertEqual(self.recover(), 0)
        with open(victim, "rb") as fh:
            self.assertEqual(fh.read(), b"precious")
        self.assertFalse(os.path.islink(final))
        with open(final, "rb") as fh:
            self.assertEqual(fh.read(), DATA)

    @unittest.skipUnless(hasattr(os, "geteuid") and os.geteuid() == 0, "needs root to chown")
    def test_foreign_marker_is_left_alone(self):
        s, final = self.staged("k")
        os.chown(s + stage.DEST_SUFFIX, 4242, -1)  # another user's marker names any path
        self.assertEqual(self.recover(), 1)
        self.assertFalse(os.path.exists(final))
        self.assertTrue(os.path.exists(s))
        self.assertTrue(any("not to this user" in line for line in self.log), self.log)

    def test_link_as_staged_file_is_left_alone(self):
        victim = os.path.join(self.tmp.name, "secret")
        with open(victim, "wb") as fh:
            fh.write(DATA)
        s, final = self.staged("l", make_file=False)
        os.symlink(victim, s)
        self.assertEqual(self.recover(), 1)
        self.assertFalse(os.path.exists(final))

    def test_orphan_temporaries(self):
        dead = os.path.join(self.sdir, "m.nc.0123456789abcdef-4194305-0" + stage.TMP_SUFFIX)
        live = os.path.join(self.sdir, f"n.nc.0123456789abcdef-{os.getpid()}-0" + stage.TMP_SUFFIX)
        log_dir = os.path.join(self.sdir, "o.nc.0123456789abcdef-4194305-1" + stage.TMP_SUFFIX)
        for p in (dead, live):
            with open(p, "wb") as fh:
                fh.write(b"partial")
        os.mkdir(log_dir)
        with open(os.path.join(log_dir, "000000.log"), "wb") as fh:
            fh.write(b"partial")
        self.assertEqual(self.recover(), 0)
        self.assertEqual(os.listdir(self.sdir), [os.path.basename(live)])


if __name__ == "__main__":
    unittest.main()
