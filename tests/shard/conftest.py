"""Makes ``shard_testlib`` importable (``--import-mode=importlib`` puts no test directory
on ``sys.path``)."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
