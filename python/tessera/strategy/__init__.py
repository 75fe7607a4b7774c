"""The output strategies, one file each, for the Python tools: each file's
row (a subclass of row.Row) holds the strategy's facts, its cost formula
for the model, its tuning knobs, its advice texts and its statistics
rules. tessera/strategies.py lists the rows; the model, advise, tune, the
statistics' rules and the demo ask them instead of comparing names."""
