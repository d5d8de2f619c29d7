"""One module per command (`cli.py` parses the arguments and dispatches).

- `common.py`: exit codes, output files and their staging, one-line errors, the config merge.
- `run.py`: `run` and `demo`.
- `load.py`: `load`, in process or against a server (`--target`).
- `scan.py`: `redact scan`.

`serve` lives with the server (`server/command.py`); `keygen` is three lines in `cli.main`.
"""

__all__: list[str] = []
