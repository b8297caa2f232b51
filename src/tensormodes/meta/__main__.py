"""``python -m tensormodes.meta validate calls.jsonl``: replay a record file on meta tensors,
print the report, exit 1 if a meta rule disagreed with a record (2 on a bad file).

>>> from tensormodes.meta.__main__ import main
>>> main(["validate", "/nonexistent/calls.jsonl"])  # the reason goes to stderr
2
"""

from __future__ import annotations

import argparse
import sys

from ._records import RecordFormatError
from .recording import RecordingMode
from .validate import validate

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tensormodes.meta",
                                     description="Tools for meta tensors and their rules.")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("validate", help="replay recorded calls on meta tensors and compare",
                                description="Replay the calls of record files (RecordingMode.save) on meta "
                                            "tensors; exit 1 if a meta result disagrees with a record.")
    check.add_argument("files", nargs="+", metavar="FILE", help="a JSON-lines record file")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` when None); return the exit code."""
    arguments = _parser().parse_args(argv)
    records = []
    for path in arguments.files:
        try:
            records.extend(RecordingMode.load(path))
        except OSError as error:
            print(f"tensormodes.meta: cannot read {path}: {error.strerror or error}", file=sys.stderr)
            return 2
        except RecordFormatError as error:
            print(f"tensormodes.meta: {error}", file=sys.stderr)
            return 2
    try:
        report = validate(records)
    except RecordFormatError as error:
        print(f"tensormodes.meta: {error}", file=sys.stderr)
        return 2
    print(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
