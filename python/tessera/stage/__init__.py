"""Fast-tier staging (docs/staging.md): the protocol of markers and verified
copies (protocol.py) over the tessera-convert program (converter.py), the
staging of inputs (inputs.py), and the `tessera stage` command (command.py);
`tessera convert` and `tessera clean` use the protocol too."""
