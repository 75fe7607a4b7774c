"""`python -m tessera.stage`: the same as `tessera stage`, fast-tier staging (docs/staging.md)."""
import sys

from .command import main

sys.exit(main())
