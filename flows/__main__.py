"""`python -m flows STAGE`: run one stage of the pipeline as a Prefect flow (see flows/__init__.py)."""
import sys

from regula.cli_support import run_main

from flows import main

sys.exit(run_main(main, sys.argv[1:]))
