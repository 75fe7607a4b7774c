"""`python -m tessera.stats`: the same as `tessera stats`, the library's statistics (docs/statistics.md)."""
import sys

from .command import main

sys.exit(main())
