"""`python -m tessera.tune_compare`, as docs/model.md names it: the same as
`python -m tessera.tune.compare` (tessera/tune/compare.py), kept at this
name so that the documented invocation still works."""
import sys

from .tune.compare import main

if __name__ == "__main__":
    sys.exit(main())
