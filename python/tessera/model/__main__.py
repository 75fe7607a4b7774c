"""`python -m tessera.model`: the same as `tessera model`, the output cost model (docs/model.md)."""
import sys

from .command import main

sys.exit(main())
