"""`python -m tessera.tune`: the same as `tessera tune`, the autotuner (docs/tuning.md)."""
import sys

from .command import main

sys.exit(main())
