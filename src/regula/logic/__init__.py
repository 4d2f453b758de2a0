"""Temporal logic over finite traces: parser, monitors (native and Spot), laws, shield."""
from .formula import Formula
from .laws import Law, LawError, load_laws, save_laws
from .monitor import Verdict, monitor, resolve_backend, spot_available
from .parser import FormulaError, parse
from .shield import Shield

__all__ = ["Formula", "FormulaError", "Law", "LawError", "Shield", "Verdict", "load_laws", "monitor",
           "parse", "resolve_backend", "save_laws", "spot_available"]
