"""`python -m stepscope`: the recorder (stepscope-record)."""
import sys

from .record import main

sys.exit(main())
