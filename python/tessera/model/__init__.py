"""The output cost model (docs/model.md): a case (case.py) and a strategy
(strategy.py: its knobs; its formula is its row's, tessera/strategy/, built
of moves.py's pieces) give amounts of work (amounts.py), which a machine
profile (profile.py, fitted by calibrate.py and fit.py) prices into
predictions (predict.py); validate*.py compare them with published studies
and runs. `tessera model` is command.py."""
