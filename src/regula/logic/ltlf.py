"""The native LTLf engine: formula progression over finite, non-empty traces.

Semantics follow Spot's LTLf convention: `X` is weak (true at the last position), `X[!]`
strong. A formula is kept in negation normal form; an *obligation* (what the rest of the
trace must satisfy) is a DNF over elements (literals and temporal subformulas) with
subsumption removed, which makes obligations canonical and their number finite, so the
monitor memoises into a DFA as it runs. Spot has no finite-trace monitor API in Python, and
pure-Python LTL libraries are slow or use other semantics, hence this engine.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import product

from .formula import FALSE, MAX_CLAUSES, MAX_PAIRS, TRUE, Formula, FormulaError, binary, unary

DNF = frozenset  # frozenset of clauses; a clause is a frozenset of elements
DNF_TRUE: DNF = frozenset([frozenset()])
DNF_FALSE: DNF = frozenset()


@lru_cache(maxsize=1 << 16)
def nnf(f: Formula, negate: bool = False) -> Formula:
    """Negation normal form over ! & | X X[!] F G U R (negation only on atoms)."""
    op, args = f.op, f.args
    if op == "true":
        return FALSE if negate else TRUE
    if op == "false":
        return TRUE if negate else FALSE
    if op == "ap":
        return unary("not", f) if negate else f
    if op == "not":
        return nnf(args[0], not negate)
    if op in ("and", "or"):
        a, b = nnf(args[0], negate), nnf(args[1], negate)
        return binary({"and": "or", "or": "and"}[op] if negate else op, a, b)
    if op == "implies":
        return nnf(binary("or", unary("not", args[0]), args[1]), negate)
    if op == "equiv":
        a, b = args
        both = binary("and", a, b)
        neither = binary("and", unary("not", a), unary("not", b))
        return nnf(binary("or", both, neither), negate)
    if op == "xor":
        return nnf(binary("equiv", *args), not negate)
    if op == "X":
        return unary("Xs" if negate else "X", nnf(args[0], negate))
    if op == "Xs":
        return unary("X" if negate else "Xs", nnf(args[0], negate))
    if op == "F":
        return unary("G" if negate else "F", nnf(args[0], negate))
    if op == "G":
        return unary("F" if negate else "G", nnf(args[0], negate))
    if op == "U":
        return binary("R" if negate else "U", nnf(args[0], negate), nnf(args[1], negate))
    if op == "R":
        return binary("U" if negate else "R", nnf(args[0], negate), nnf(args[1], negate))
    if op == "W":  # a W b = b R (b | a)
        a, b = args
        return nnf(binary("R", b, binary("or", b, a)), negate)
    if op == "M":  # a M b = b U (b & a)
        a, b = args
        return nnf(binary("U", b, binary("and", b, a)), negate)
    raise ValueError(f"unknown operator {op}")


_NEGATION: dict = {}  # element -> its negation in NNF, kept for as many elements as _PROJECTED keeps letters
_CACHED = 1 << 16


def _negation(e: Formula) -> Formula:
    got = _NEGATION.get(e)
    if got is None:
        if len(_NEGATION) >= _CACHED:  # a long-running process loads law after law: no growth without end
            _NEGATION.clear()
        got = _NEGATION[e] = nnf(e, True)
    return got


def _contradicts(clause: frozenset) -> bool:
    """A clause holding an element and its negation (`p` and `!p`, `F p` and `G !p`) is unsatisfiable."""
    return any(_negation(e) in clause for e in clause)


def _minimal(clauses) -> DNF:
    """Drop clauses that contain another clause, and clauses with a literal and its negation.
    The bound is on what an obligation holds once subsumed clauses are gone (a conjunction of
    small disjunctions, `G(i -> X o | X X o | X X X o)` over four channels, forms thousands of
    pairs that subsume to a few dozen); shortest first, a clause kept is never dropped later,
    so the count can stop as soon as it passes."""
    clauses = set(clauses)
    if len(clauses) == 1:  # most conjunctions in a progression step: nothing to subsume
        (c,) = clauses
        return DNF_FALSE if _contradicts(c) else frozenset(clauses)
    out = []
    for c in sorted(clauses, key=len):
        if _contradicts(c):
            continue
        if not any(o <= c for o in out):
            out.append(c)
            if len(out) > MAX_CLAUSES:
                raise FormulaError(f"its normal form passes {MAX_CLAUSES:,} clauses (the limit; "
                                   "each xor or <-> between subformulas can double it)")
    return frozenset(out)


def dnf_or(a: DNF, b: DNF) -> DNF:
    if a == DNF_TRUE or b == DNF_TRUE:
        return DNF_TRUE
    return _minimal(a | b)


def dnf_and(a: DNF, b: DNF) -> DNF:
    if not a or not b:
        return DNF_FALSE
    if a == DNF_TRUE:
        return b
    if b == DNF_TRUE:
        return a
    if len(a) * len(b) > MAX_PAIRS:  # checked before the pairs are formed
        raise FormulaError(f"a conjunction in its normal form forms {len(a) * len(b):,} clause pairs, "
                           f"more than {MAX_PAIRS:,} (the limit)")
    return _minimal(x | y for x, y in product(a, b))


@lru_cache(maxsize=1 << 16)
def to_dnf(f: Formula) -> DNF:
    """An NNF formula as a DNF over elements (booleans expanded, temporal nodes kept)."""
    if f.op == "true":
        return DNF_TRUE
    if f.op == "false":
        return DNF_FALSE
    if f.op == "and":
        return dnf_and(to_dnf(f.args[0]), to_dnf(f.args[1]))
    if f.op == "or":
        return dnf_or(to_dnf(f.args[0]), to_dnf(f.args[1]))
    return frozenset([frozenset([f])])


@lru_cache(maxsize=1 << 16)
def _prog_elem(e: Formula, letter: frozenset) -> DNF:
    op = e.op
    if op == "ap":
        return DNF_TRUE if e.name in letter else DNF_FALSE
    if op == "not":
        return DNF_FALSE if e.args[0].name in letter else DNF_TRUE
    if op in ("X", "Xs"):
        return to_dnf(e.args[0])
    if op == "F":
        return dnf_or(_prog(to_dnf(e.args[0]), letter), to_dnf(e))
    if op == "G":
        return dnf_and(_prog(to_dnf(e.args[0]), letter), to_dnf(e))
    if op == "U":
        a, b = e.args
        return dnf_or(_prog(to_dnf(b), letter), dnf_and(_prog(to_dnf(a), letter), to_dnf(e)))
    if op == "R":
        a, b = e.args
        return dnf_and(_prog(to_dnf(b), letter), dnf_or(_prog(to_dnf(a), letter), to_dnf(e)))
    raise ValueError(f"not in NNF: {op}")


@lru_cache(maxsize=1 << 16)
def _prog_clause(clause: frozenset, letter: frozenset) -> DNF:
    """One clause's progression; `letter` is projected on the atoms the clause reads, so the
    letters a state is tried on share the work of the clauses that do not read them."""
    single, several = set(), []  # elements that progress to one clause are joined in one union
    for e in clause:
        d = _prog_elem(e, letter)
        if len(d) == 1:
            single |= next(iter(d))
        elif not d:
            return DNF_FALSE
        else:
            several.append(d)
    acc = _minimal([frozenset(single)])
    for d in several:
        if not acc:
            break
        acc = dnf_and(acc, d)
    return acc


@lru_cache(maxsize=1 << 16)
def _clause_reads(clause: frozenset) -> frozenset:
    out = frozenset()
    for e in clause:
        out |= _reads_now(e)
    return out


_PROJECTED: dict = {}  # a letter projected on a clause's atoms, one object for each (the caches' keys)


def _project(letter: frozenset, reads: frozenset) -> frozenset:
    if letter <= reads:
        return letter
    seen = letter & reads
    got = _PROJECTED.get(seen)
    if got is None:
        if len(_PROJECTED) >= _CACHED:
            _PROJECTED.clear()
        got = _PROJECTED[seen] = seen
    return got


@lru_cache(maxsize=1 << 16)
def _join(parts: frozenset) -> DNF:
    """The disjunction of clause progressions; letters whose clauses progress alike share it."""
    out = []
    for acc in parts:
        out.extend(acc)
        if len(out) > 2 * MAX_CLAUSES:  # subsumed early, so that what is kept stays bounded
            out = list(_minimal(out))
    return _minimal(out)


@lru_cache(maxsize=1 << 16)
def _prog(obligation: DNF, letter: frozenset) -> DNF:
    parts = []  # the clauses' progressions, subsumed once at the end
    for clause in obligation:
        acc = _prog_clause(clause, _project(letter, _clause_reads(clause)))
        if acc == DNF_TRUE:
            return DNF_TRUE
        if acc:
            parts.append(acc)
    return _join(frozenset(parts))


@lru_cache(maxsize=1 << 16)
def _last_elem(e: Formula, letter: frozenset) -> bool:
    """Does element e hold at a position that is the last one, reading `letter` there?"""
    op = e.op
    if op == "ap":
        return e.name in letter
    if op == "not":
        return e.args[0].name not in letter
    if op == "X":
        return True
    if op == "Xs":
        return False
    if op in ("F", "G"):
        return _last(to_dnf(e.args[0]), letter)
    if op in ("U", "R"):
        return _last(to_dnf(e.args[1]), letter)
    raise ValueError(f"not in NNF: {op}")


@lru_cache(maxsize=1 << 16)
def _last(obligation: DNF, letter: frozenset) -> bool:
    return any(_last_clause(clause, _project(letter, _clause_reads(clause))) for clause in obligation)


@lru_cache(maxsize=1 << 16)
def _last_clause(clause: frozenset, letter: frozenset) -> bool:
    return all(_last_elem(e, letter) for e in clause)


@lru_cache(maxsize=1 << 16)
def _reads_now(f: Formula) -> frozenset:
    """The atoms an NNF formula reads at the current step (not those under X or X[!])."""
    if f.op == "ap":
        return frozenset([f.name])
    if f.op in ("X", "Xs", "true", "false"):
        return frozenset()
    out = frozenset()
    for a in f.args:
        out |= _reads_now(a)
    return out


def reads(obligation: DNF) -> frozenset:
    """The atoms the next move from `obligation` depends on (its progression and acceptance)."""
    out = frozenset()
    for clause in obligation:
        for e in clause:
            out |= _reads_now(e)
    return out


def initial(f: Formula) -> DNF:
    return to_dnf(nnf(f))


def progress(obligation: DNF, letter: frozenset) -> DNF:
    """What the rest of the trace must satisfy after `letter` (assuming it goes on)."""
    return _prog(obligation, letter)


def move(obligation: DNF, letter: frozenset) -> tuple[DNF, bool]:
    """`progress` and `accepts_here` in one pass over the clauses (each letter projected once a
    clause): an automaton's move, computed for every letter a state reads when it is compiled."""
    parts, accepted, done = [], False, False
    for clause in obligation:
        seen = _project(letter, _clause_reads(clause))
        if not accepted:
            accepted = _last_clause(clause, seen)
        if not done:
            acc = _prog_clause(clause, seen)
            if acc == DNF_TRUE:
                done = True
            elif acc:
                parts.append(acc)
        elif accepted:
            break
    return (DNF_TRUE if done else simplify(_join(frozenset(parts)))), accepted


def accepts_here(obligation: DNF, letter: frozenset) -> bool:
    """Would the trace be accepted if `letter` were its last one?"""
    return _last(obligation, letter)


def accepts(f: Formula, trace) -> bool:
    """Acceptance of a finite, non-empty trace (a sequence of sets of true atoms)."""
    trace = [frozenset(x) for x in trace]
    if not trace:
        raise ValueError("LTLf traces are non-empty")
    ob = initial(f)
    for letter in trace[:-1]:
        ob = progress(ob, letter)
        if not ob:
            return False
    return accepts_here(ob, trace[-1])


def dnf_str(obligation: DNF) -> str:
    if obligation == DNF_TRUE:
        return "true"
    if not obligation:
        return "false"
    clauses = sorted(" & ".join(sorted(str(e) if e.op in ("ap", "not") else f"({e})" for e in c))
                     for c in obligation)
    return " | ".join(f"({c})" if len(obligation) > 1 and "&" in c else c for c in clauses)


# Moves by letter class. A state's move depends on a letter only through the literals its
# elements read now. Each element is unfolded once with the letter left open (guarded clauses:
# the literals a letter must make true and false, and the clause the rest of the trace must then
# satisfy; `_unfold_elem`), and a state's letters are split atom by atom while an atom can still
# change what a clause not yet false progresses to or whether the letter is accepted; the
# letters of a leaf (a class) all move alike, and `move` on one of them is the class's move.
# A state of 12 atoms read had 4,096 letters and 20-400 classes.

class Unfolded(Exception):
    """An element whose unfolding passes the bounds below: its states' moves are made letter by letter."""


# An element unfolded to more guarded clauses than this has its states' moves made letter by
# letter: splitting on its literals would cost more than the letters.
MAX_GUARDS = 256  # guarded clauses one unfolding keeps once subsumed ones are gone
MAX_GUARD_PAIRS = 4096  # pairs one conjunction of unfoldings forms

_NO_GUARD = frozenset()


def _guards_min(guards) -> frozenset:
    """Drop a guarded clause whose literals or clause contradict themselves, and one whose clause
    contains another's under the same literals or under none (any letter that takes it takes
    the other, whose clause subsumes its own). Not every subsumption: what is left is only
    kept small; a move's successor is made canonical once its literals are decided."""
    by_cube: dict = {}
    for pos, neg, nxt in guards:
        if pos & neg or (len(nxt) > 1 and _contradicts_cached(nxt)):
            continue
        by_cube.setdefault((pos, neg), set()).add(nxt)
    always = _antichain(by_cube.pop((_NO_ATOMS, _NO_ATOMS), ()))
    out = [(_NO_ATOMS, _NO_ATOMS, x) for x in always]
    for (pos, neg), clauses in by_cube.items():
        out += [(pos, neg, x) for x in _antichain(clauses, always)]
        if len(out) > MAX_GUARDS:
            raise Unfolded
    return frozenset(out)


def _antichain(clauses, above=()) -> list:
    """The clauses no other one (or one of `above`) is contained in."""
    out = list(above)
    for c in sorted(clauses, key=len):
        if not any(o <= c for o in out):
            out.append(c)
    return out[len(above):]


@lru_cache(maxsize=1 << 16)
def _contradicts_cached(clause: frozenset) -> bool:
    return _contradicts(clause)


_NO_ATOMS = frozenset()


def _guards_or(a: frozenset, b: frozenset) -> frozenset:
    return _guards_min(a | b)


def _guards_and(a: frozenset, b: frozenset) -> frozenset:
    if not a or not b:
        return _NO_GUARD
    if len(a) * len(b) > MAX_GUARD_PAIRS:
        raise Unfolded
    return _guards_min((p | q, n | m, x | y) for (p, n, x), (q, m, y) in product(a, b))


_NOW = frozenset([(frozenset(), frozenset(), frozenset())])  # true now, nothing asked of the rest


def _later(e: Formula) -> frozenset:
    return frozenset([(frozenset(), frozenset(), frozenset([e]))])


@lru_cache(maxsize=1 << 16)
def _unfold_elem(e: Formula) -> frozenset:
    """The element's progression with the letter left open (`_prog_elem`'s cases)."""
    op = e.op
    if op == "ap":
        return frozenset([(frozenset([e.name]), frozenset(), frozenset())])
    if op == "not":
        return frozenset([(frozenset(), frozenset([e.args[0].name]), frozenset())])
    if op in ("X", "Xs"):
        return frozenset((frozenset(), frozenset(), c) for c in to_dnf(e.args[0]))
    if op == "F":
        return _guards_or(_unfold(to_dnf(e.args[0])), _later(e))
    if op == "G":
        return _guards_and(_unfold(to_dnf(e.args[0])), _later(e))
    if op == "U":
        a, b = e.args
        return _guards_or(_unfold(to_dnf(b)), _guards_and(_unfold(to_dnf(a)), _later(e)))
    if op == "R":
        a, b = e.args
        return _guards_and(_unfold(to_dnf(b)), _guards_or(_unfold(to_dnf(a)), _later(e)))
    raise ValueError(f"not in NNF: {op}")


@lru_cache(maxsize=1 << 16)
def _unfold(obligation: DNF) -> frozenset:
    out: list = []
    for clause in obligation:
        acc = _NOW
        for e in clause:
            acc = _guards_and(acc, _unfold_elem(e))
            if not acc:
                break
        out.extend(acc)
        if len(out) > 2 * MAX_GUARDS:  # subsumed early, so that what is kept stays bounded
            out = list(_guards_min(out))
    return _guards_min(out)


@lru_cache(maxsize=1 << 16)
def _last_cubes_elem(e: Formula) -> frozenset:
    """The letters on which the element holds at the last position (`_last_elem`'s cases), as cubes."""
    op = e.op
    if op == "ap":
        return frozenset([(frozenset([e.name]), frozenset())])
    if op == "not":
        return frozenset([(frozenset(), frozenset([e.args[0].name]))])
    if op == "X":
        return frozenset([(frozenset(), frozenset())])
    if op == "Xs":
        return frozenset()
    if op in ("F", "G"):
        return _last_cubes(to_dnf(e.args[0]))
    if op in ("U", "R"):
        return _last_cubes(to_dnf(e.args[1]))
    raise ValueError(f"not in NNF: {op}")


@lru_cache(maxsize=1 << 16)
def _last_cubes(obligation: DNF) -> frozenset:
    out = set()
    for clause in obligation:
        acc = {(frozenset(), frozenset())}
        for e in clause:
            acc = {(p | q, n | m) for p, n in acc for q, m in _last_cubes_elem(e) if not (p | q) & (n | m)}
            if len(acc) > MAX_GUARDS:
                raise Unfolded
            if not acc:
                break
        out |= acc
        if len(out) > MAX_GUARDS:
            raise Unfolded
    return frozenset(out)


def move_classes(obligation: DNF, budget, canon=None) -> tuple:
    """Every move of `obligation` at once, as a decision tree over the atoms it reads now: a
    leaf `(successor, accepted)`, a split `(atom, if true, if false)`. Each element's literals
    are its unfolding's (`_unfold_elem`, `_last_cubes_elem`); atoms are split on while one
    still matters: to an element of a clause not yet false, or to whether the letter is
    accepted. A leaf is `move` on one letter of its class. `budget(n)` is told of each leaf
    made (1) and merged away (-1): it counts the moves and raises past their bound. `canon`, if
    given, maps each leaf's successor to its monitor's state (`Canon`). Raises
    `Unfolded` where an element's unfolding passes its bounds."""
    elements, clauses, reading = [], [], {}
    for clause in obligation:
        start = len(elements)
        for e in clause:
            atoms = _elem_atoms(e)
            if atoms is None:
                raise Unfolded
            for atom in atoms:
                reading.setdefault(atom, []).append(len(elements))
            elements.append((e, atoms))
        clauses.append((start, len(elements)))
    empty = frozenset()
    views = [_view(e, empty, empty) for e, _ in elements]
    return _classes(obligation, (elements, clauses, reading, canon), views, empty, empty, budget)


@lru_cache(maxsize=1 << 16)
def _elem_atoms(e: Formula) -> frozenset | None:
    """The atoms the element's unfoldings read, or None where they pass their bounds (kept, so
    that no state tries them again)."""
    out = set()
    try:
        for p, n, _ in _unfold_elem(e):
            out |= p | n
        for p, n in _last_cubes_elem(e):
            out |= p | n
    except Unfolded:
        return None
    return frozenset(out)


@lru_cache(maxsize=1 << 16)
def _view(e: Formula, true: frozenset, false: frozenset) -> tuple:
    """The element on the letters that make `true` true and `false` false: (false whatever the
    rest, the atoms that can still change its progression, its acceptance at the last position
    if decided (True, False) else None, the atoms that can still decide it)."""
    guards = [(p - true, n - false, x) for p, n, x in _unfold_elem(e) if not p & false and not n & true]
    taken = [x for p, n, x in guards if not p and not n]
    changes = tuple(a for p, n, x in guards if (p or n) and not any(t <= x for t in taken) for a in (*p, *n))
    cubes = [(p - true, n - false) for p, n in _last_cubes_elem(e) if not p & false and not n & true]
    if any(not p and not n for p, n in cubes):
        return not guards, changes, True, ()
    if not cubes:
        return not guards, changes, False, ()
    return not guards, changes, None, tuple(a for p, n in cubes for a in (*p, *n))


def _classes(obligation: DNF, shape: tuple, views: list, true: frozenset, false: frozenset, budget) -> tuple:
    elements, clauses, reading, canon = shape
    counts: dict = {}
    accepted, deciding = False, []
    for start, end in clauses:
        clause = views[start:end]
        if not any(v[0] for v in clause):  # a clause not yet false: what its elements progress to
            for v in clause:
                for atom in v[1]:
                    counts[atom] = counts.get(atom, 0) + 1
        if not accepted and not any(v[2] is False for v in clause):
            if all(v[2] for v in clause):
                accepted = True  # then acceptance is decided, whatever the atoms left
            else:
                deciding += [v[3] for v in clause if v[2] is None]
    if not accepted:
        for atoms in deciding:
            for atom in atoms:
                counts[atom] = counts.get(atom, 0) + 1
    if not counts:
        budget(1)
        if canon is None:
            return move(obligation, true)
        nxt, accepted = move(obligation, true)
        return canon(nxt), accepted
    atom = min(counts, key=lambda a: (-counts[a], a))  # the atom most literals read first
    branches = []
    for t, f in ((true | {atom}, false), (true, false | {atom})):
        seen = views.copy()  # only the elements that read the atom see anything new
        for i in reading[atom]:
            e, atoms = elements[i]
            seen[i] = _view(e, t & atoms, f & atoms)
        branches.append(_classes(obligation, shape, seen, t, f, budget))
    yes, no = branches
    if len(yes) == 2 and yes == no:  # the atom changes nothing here after all: one move
        budget(-1)
        return yes
    return (atom, yes, no)


MAX_MEMO = 1 << 20  # combinations of diagrams remembered (~2-8 for each tree node: 417,063 for 7,109 states)


class Diagrams:
    """One monitor's moves as shared decision diagrams over its atoms in one fixed order
    (Bryant's reduced ordered BDDs with a value at each leaf). Each element's move is a diagram
    whose leaves are (what the rest of the trace must then satisfy, whether a last letter is
    accepted): a literal splits on its atom, `X` is one leaf, and `F`, `G`, `U`, `R` combine
    their operands' diagrams leaf by leaf as `_prog_elem` and `_last_elem` do on one letter; a
    clause is the conjunction of its elements' diagrams, an obligation the disjunction of its
    clauses'. A state's moves are the disjunction of its clauses' diagrams, each leaf the boolean
    function (`Canon`) of the clause progressions a letter keeps and whether one accepts it, so
    letters whose progressions name one function meet in one leaf; a leaf is then made a state,
    by `move` on one of its letters only for a function no move reached before, and equal
    subtrees merged. Elements, clauses, their combinations and the leaves are shared by every
    state of the monitor: a state whose clauses others hold costs only what is new in it, and
    no clause is tried on each of its 2^k letters. A random formula of 9 atoms, 8,698 states:
    21.6 s when each state's moves were a table of its 512 letters, 3.1 s now (the same automaton).
    `moves(state, budget)` is a tree of `(atom, if true, if false)` splits and `(successor,
    accepted)` leaves, one object for each, as `move_classes` makes; the tree nodes no state had
    before are told to `budget` (they are what the monitor keeps: 96,598 for those 8,698 states,
    whose trees have 1,244,133 leaves)."""

    def __init__(self, atoms, canon):
        self.canon = canon
        self.order = sorted(atoms)
        self.level = {a: i for i, a in enumerate(self.order)}
        self.k = len(self.order)  # a leaf's level: below every atom
        self._nodes: list = []  # id -> (level, if true, if false), or (k, value) for a leaf
        self._unique: dict = {}
        self._memo: dict = {}  # (operation, node, node) -> node
        self._elem: dict = {}  # element -> its diagram
        self._dnf: dict = {}  # obligation -> its diagram
        self._clause: dict = {}  # clause -> its diagram, leaves as a state's (`_part`)
        self._tree: dict = {}  # diagram -> its tree of states
        self._made: dict = {}  # (atom, id(if true), id(if false)) or (state, accepted) -> the tree node
        self._numbering = canon.generation  # the canon's numbering of functions that the caches above hold
        self.true = self._leaf((DNF_TRUE, True))  # the conjunction's unit
        self.false = self._leaf((DNF_FALSE, False))  # the disjunction's unit
        self.empty = self._leaf((0, False))  # no clause kept, none accepted (a state's leaves: `_join`'s unit)

    def _leaf(self, value) -> int:
        key = (self.k, value)
        got = self._unique.get(key)
        if got is None:
            got = self._unique[key] = len(self._nodes)
            self._nodes.append(key)
        return got

    def _mk(self, level: int, yes: int, no: int) -> int:
        if yes == no:
            return yes
        key = (level, yes, no)
        got = self._unique.get(key)
        if got is None:
            got = self._unique[key] = len(self._nodes)
            self._nodes.append(key)
        return got

    def _apply(self, op, a: int, b: int) -> int:
        """The diagram whose leaf for a letter is `op` of `a`'s and `b`'s leaves for it."""
        key = (op, a, b)
        got = self._memo.get(key)
        if got is None:
            na, nb = self._nodes[a], self._nodes[b]
            la, lb = na[0], nb[0]
            if la == lb == self.k:
                got = self._leaf(op(na[1], nb[1]))
            elif la == lb:
                got = self._mk(la, self._apply(op, na[1], nb[1]), self._apply(op, na[2], nb[2]))
            elif la < lb:
                got = self._mk(la, self._apply(op, na[1], b), self._apply(op, na[2], b))
            else:
                got = self._mk(lb, self._apply(op, a, nb[1]), self._apply(op, a, nb[2]))
            self._memo[key] = got
        return got

    def _and(self, a: int, b: int) -> int:
        if a == self.true or b == self.false:
            return b
        if b == self.true or a == self.false:
            return a
        return self._apply(_and_moves, *sorted((a, b)))

    def _or(self, a: int, b: int) -> int:
        if a == self.false:
            return b
        if b == self.false:
            return a
        return self._apply(_or_moves, *sorted((a, b)))

    def _element(self, e: Formula) -> int:
        got = self._elem.get(e)
        if got is None:
            op = e.op
            if op == "ap" or op == "not":
                atom = e.name if op == "ap" else e.args[0].name
                yes, no = (self.true, self.false) if op == "ap" else (self.false, self.true)
                got = self._mk(self.level[atom], yes, no)
            elif op in ("X", "Xs"):
                got = self._leaf((to_dnf(e.args[0]), op == "X"))
            elif op in ("F", "G"):
                got = self._apply(_f_moves if op == "F" else _g_moves, self._obligation(to_dnf(e.args[0])),
                                  self._leaf((to_dnf(e), False)))
            elif op in ("U", "R"):
                a, b = (self._obligation(to_dnf(x)) for x in e.args)
                got = self._apply(_u_moves if op == "U" else _r_moves, a, b)
                got = self._apply(_with_rest, got, self._leaf((to_dnf(e), False)))
            else:
                raise ValueError(f"not in NNF: {op}")
            self._elem[e] = got
        return got

    def _conjunction(self, clause: frozenset) -> int:
        acc = self.true
        for d in sorted(self._element(e) for e in _in_order(clause)):  # one order: clauses share their folds
            acc = self._and(acc, d)
            if acc == self.false:
                break
        return acc

    def _obligation(self, obligation: DNF) -> int:
        got = self._dnf.get(obligation)
        if got is None:
            got = self.false
            for d in sorted(self._conjunction(c) for c in _clauses_in_order(obligation)):
                got = self._or(got, d)
            self._dnf[obligation] = got
        return got

    def _clause_diagram(self, clause: frozenset) -> int:
        got = self._clause.get(clause)
        if got is None:
            got = self._clause[clause] = self._apply(self._as_function, self._conjunction(clause), self.true)
        return got

    def _as_function(self, x, _) -> tuple:
        """A clause's move as a state's leaf: its progression's boolean function (`Canon`)."""
        return self.canon.function(x[0]), x[1]

    def _join(self, x, y) -> tuple:
        return self.canon.or_(x[0], y[0]), x[1] or y[1]

    def moves(self, obligation: DNF, budget) -> tuple:
        """The state's tree of moves. Its leaves are the boolean functions of the disjunction of
        the clause progressions a letter keeps, so that letters whose progressions differ but
        name one function meet in one leaf before any state is made; where the canon's BDD is
        rebuilt (its functions renumbered), what was kept here by function is made again."""
        if len(self._memo) > MAX_MEMO:  # only a cache: the nodes it names stay unique
            self._memo.clear()
        for _ in range(3):
            # The canon may have been rebuilt since the caches were filled, here or outside
            # (a state whose moves are made letter by letter, `Canon.__call__`): numbers kept from
            # before it named other functions, and led letters to wrong states.
            if self._numbering != self.canon.generation:
                self._clear()
            generation = self.canon.generation
            try:
                got = self._moves(obligation, budget)
            except _Full:
                self.canon.rebuild()
                continue
            if self.canon.generation == generation:
                return got
        raise self.canon.refused()

    def _clear(self) -> None:
        """Forget what holds function numbers (the leaves of clauses' and states' diagrams)."""
        self._memo.clear()
        self._clause.clear()
        self._tree.clear()
        self._numbering = self.canon.generation

    def _moves(self, obligation: DNF, budget) -> tuple:
        self._generation = self.canon.generation  # the numbering of the functions the leaves hold
        root = self.empty
        for d in sorted(self._clause_diagram(c) for c in _clauses_in_order(obligation)):  # states share folds
            if root == self.empty:
                root = d
            elif root != d:
                root = self._apply(self._join, *sorted((root, d)))
        got = self._tree.get(root)
        if got is None:
            made = len(self._made)
            got = self._tree_of(root, obligation, frozenset())
            budget(len(self._made) - made)
        return got

    def _tree_of(self, node: int, obligation: DNF, true: frozenset) -> tuple:
        """The tree of states below `node`, reached from `obligation` by the letters that make
        `true` true (and no other atom tested above it): a leaf whose function no move has
        reached yet is made the state `move` on one such letter gives."""
        got = self._tree.get(node)
        if got is None:
            split = self._nodes[node]
            if split[0] == self.k:
                function, accepted = split[1]
                state = self.canon.state_of(function, self._generation, obligation, true)
                key = (state, accepted)
                got = self._made.setdefault(key, key)
            else:
                level, yes, no = split
                t = self._tree_of(yes, obligation, true | {self.order[level]})
                f = self._tree_of(no, obligation, true)
                if t is f:
                    got = t
                else:
                    key = (self.order[level], id(t), id(f))
                    got = self._made.get(key)
                    if got is None:
                        got = self._made[key] = (self.order[level], t, f)
            self._tree[node] = got
        return got


# The leaf operations of `Diagrams`: a leaf is (progression, accepted if last) for an element,
# clause or obligation, and (clause progressions kept or None where one is true, accepted) for a state.
def _and_moves(x, y):
    return dnf_and(x[0], y[0]), x[1] and y[1]


def _or_moves(x, y):
    return dnf_or(x[0], y[0]), x[1] or y[1]


def _f_moves(x, rest):  # F a: a now, or F a next; accepted last where a is
    return dnf_or(x[0], rest[0]), x[1]


def _g_moves(x, rest):  # G a: a now and G a next
    return dnf_and(x[0], rest[0]), x[1]


def _u_moves(a, b):  # a U b: b now, or a now and a U b next (`_with_rest` adds the "next")
    return (b[0], a[0]), b[1]


def _r_moves(a, b):  # a R b: b now, and a now or a R b next
    return (b[0], a[0], None), b[1]


def _with_rest(x, rest):
    progs, accepted = x
    if len(progs) == 2:
        b, a = progs
        return dnf_or(b, dnf_and(a, rest[0])), accepted
    b, a, _ = progs
    return dnf_and(b, dnf_or(a, rest[0])), accepted


def class_of(tree: tuple, letter: frozenset) -> tuple:
    """The leaf of `move_classes`'s tree that `letter` takes: `move(obligation, letter)`."""
    while len(tree) == 3:
        tree = tree[1] if tree[0] in letter else tree[2]
    return tree


# Implication-aware simplification of a state. Progression keeps clauses such as
# `(F a U (F a & b)) & F a`, whose `F a` the until already implies, and clauses that only differ
# by such an element, so that one automaton state of Spot's became several here (a random
# formula of 12 atoms: 1,000-4,000 states where Spot's deterministic automaton has 257-869).
# `implies` is syntactic implication (Somenzi and Bloem 2000), sound on finite traces: each rule
# holds on every non-empty trace, with `X` weak and `X[!]` strong; it may miss implications, never
# invent one. A state's successor is simplified once it is made (`move`); `accepts`, the reference
# evaluator, progresses without it.

@lru_cache(maxsize=1 << 16)
def implies(f: Formula, g: Formula) -> bool:
    """Does NNF formula `f` imply `g` on every non-empty finite trace (a sufficient, syntactic check)?"""
    if f is g or g.op == "true" or f.op == "false":
        return True
    fo, go = f.op, g.op
    if fo == "or":
        return implies(f.args[0], g) and implies(f.args[1], g)
    if go == "and":
        return implies(f, g.args[0]) and implies(f, g.args[1])
    if fo == "and" and (implies(f.args[0], g) or implies(f.args[1], g)):
        return True
    if go == "or" and (implies(f, g.args[0]) or implies(f, g.args[1])):
        return True
    if go == "F" and implies(f, g.args[0]):  # f -> g' -> F g'
        return True
    if go == "U" and implies(f, g.args[1]):  # f -> b -> a U b
        return True
    if go == "R" and implies(f, g.args[0]) and implies(f, g.args[1]):  # a & b holds now: a R b
        return True
    if fo == "G" and implies(f.args[0], g):  # G f' -> f'
        return True
    if fo == "R" and implies(f.args[1], g):  # a R b -> b (now)
        return True
    if fo == "U" and implies(f.args[0], g) and implies(f.args[1], g):  # a U b -> a | b (now)
        return True
    if fo == "F" and go == "F":  # F f' -> F g' where f' -> F g'
        return implies(f.args[0], g)
    if fo == "U" and go == "F":  # a U b -> F b -> F g' where b -> F g'
        return implies(f.args[1], g)
    if fo == "G" and go == "G":  # G f' holds on every suffix: G f' -> G g' where G f' -> g'
        return implies(f, g.args[0])
    if fo == "G" and go == "R":  # G f' -> G b -> a R b where G f' -> b
        return implies(f, g.args[1])
    if fo == go and fo in ("U", "R"):  # a U b -> c U d where a -> c and b -> d (so R)
        return implies(f.args[0], g.args[0]) and implies(f.args[1], g.args[1])
    if fo in ("X", "Xs") and go in ("X", "Xs") and (fo == "Xs" or go == "X"):  # X[!] f' -> X f'
        return implies(f.args[0], g.args[0])
    return False


@lru_cache(maxsize=1 << 16)
def _reduced_clause(clause: frozenset) -> frozenset | None:
    """The clause without elements another one implies; None where one element implies the
    negation of another (`p & G !p`): the clause can never hold."""
    order = sorted(clause, key=_text)  # which of two equivalent elements stays: the same every run
    for e in order:
        for d in order:
            if d is not e and implies(e, _negation(d)):
                return None
    kept = list(order)
    for e in order:
        if any(d is not e and implies(d, e) for d in kept):
            kept.remove(e)
    return frozenset(kept)


_text = lru_cache(maxsize=1 << 16)(str)  # an element's text, the sort key that makes the choices above repeatable

MAX_SIMPLIFIED = 64  # clauses past which a state is only reduced clause by clause (pairs cost their square)


@lru_cache(maxsize=1 << 16)
def simplify(obligation: DNF) -> DNF:
    """The obligation with implied elements and unsatisfiable clauses dropped, and a clause
    dropped where it implies another (each element of the other implied by one of its own)."""
    if len(obligation) <= 1 and all(len(c) <= 1 for c in obligation):
        return obligation
    clauses = set()
    for c in obligation:
        r = _reduced_clause(c) if len(c) > 1 else c
        if r is not None:
            clauses.add(r)
    if not clauses:
        return DNF_FALSE
    if frozenset() in clauses:
        return DNF_TRUE
    if len(clauses) > MAX_SIMPLIFIED:
        return _minimal(clauses)
    clauses = _complemented(clauses)
    if clauses is None:
        return DNF_TRUE
    order = sorted(clauses, key=lambda c: (len(c), sorted(map(_text, c))))
    kept = list(order)
    if len(order) <= FEW_CLAUSES:
        for c in reversed(order):  # the longer (stronger) first, so that of two equivalent the shorter stays
            if any(o is not c and all(any(implies(e, x) for e in c) for x in o) for o in kept):
                kept.remove(c)
        return frozenset(kept)
    # Many clauses: what each element implies among the state's elements, once, and a clause
    # implies another where what its elements imply covers the other's elements.
    elements = frozenset().union(*order)
    implied = {e: frozenset(x for x in elements if implies(e, x)) for e in elements}
    for c in reversed(order):
        covered = frozenset().union(*(implied[e] for e in c))
        if any(o is not c and o <= covered for o in kept):
            kept.remove(c)
    return frozenset(kept)


FEW_CLAUSES = 4  # up to this many, clause pairs are compared element by element (cheaper than all pairs of elements)


MAX_REDUCER = 1  # elements of a clause whose negation is used to weaken the others (pairs cost their product)


def _complemented(clauses: set) -> set | None:
    """Weaken each clause by the others' negations: `c | (e & r)` is `c | r` where the negation of
    `c` implies `e` (each of `c`'s elements' negation does), so `F a | (G !a & b)` is `F a | b`,
    and `x | !x` is true (None). Progression of xor and <-> keeps both polarities of a temporal
    element in a state; without this and `Canon`, obligations that always hold were kept apart
    (1,279 of the 1,989 states of a random formula of 9 atoms, whose minimal automaton has 234;
    this alone left 610 of 1,127). Each clause
    is weakened by the others as they were, which is sound: weakening a clause only strengthens
    its negation. Repeated while a clause changes, and subsumed clauses then dropped."""
    while True:
        reducers = [(c, [_negation(x) for x in c]) for c in clauses if len(c) <= MAX_REDUCER]
        if not reducers:
            return clauses
        out, changed = set(), False
        for c in clauses:
            kept = frozenset(e for e in c if not any(
                r is not c and all(implies(n, e) for n in negs) for r, negs in reducers))
            if not kept:
                return None
            changed |= len(kept) < len(c)
            out.add(kept)
        if not changed:
            return clauses
        clauses = set(_minimal(out))


# States by their boolean function. Two obligations whose clauses differ but that hold on the same
# assignments of truth to their elements (an element and its negation one variable: `F a` and
# `G !a`, `X p` and `X[!] !p`) accept the same traces: xor and <-> leave both polarities of their
# operands in every state, and the DNFs they progress to name one function many ways
# (`(p & q) | (p & !q) | (!p & q) | (!p & !q)` is true). A monitor keeps one state per function:
# the first obligation seen with it (`true` and `false` fixed), keyed by its reduced ordered BDD.

def _in_order(clause: frozenset) -> list:
    """A clause's elements in an order that is the formula's alone. A frozenset of formulas is
    walked in the order of their hashes, their addresses, so of what the process made before:
    where the canon's or the diagrams' nodes are made in that order, how many there are when the
    canon's BDD fills up and is rebuilt, so which obligation a state's function is first met
    with, depended on it (23,839 to 23,841 states and 285,880 to 286,321 moves for one formula)."""
    return sorted(clause, key=_text)


@lru_cache(maxsize=1 << 16)
def _clauses_in_order(obligation: DNF) -> list:
    return sorted(obligation, key=lambda c: sorted(map(_text, c)))


class _Full(Exception):
    """The BDD passed its node bound."""


class Canon:
    """One monitor's map from an obligation to the first obligation seen with its boolean
    function. Its BDD is rebuilt from the states alone when it passes `max_nodes` nodes (which
    nodes are made depends on the order clauses are met in, so on the hash seed; which state an
    obligation maps to does not); past them with the states alone, the formula is refused."""

    def __init__(self, max_nodes: int = 1 << 18):
        self.max_nodes = max_nodes
        self._reset()
        self._first: dict = {0: DNF_FALSE, 1: DNF_TRUE}  # a function -> its state

    def _reset(self) -> None:
        self.generation = getattr(self, "generation", -1) + 1  # functions are renumbered at each reset
        self._var: dict = {}  # element -> (variable, positive)
        self._unique: dict = {}  # (variable, low, high) -> node
        self._nodes: list = [None, None]  # node -> (variable, low, high); 0 false, 1 true
        self._or: dict = {}
        self._key: dict = {}  # obligation -> its node
        self._raw_first: dict = {}  # the function of a disjunction of clause progressions -> its state

    def _rebuilt(self) -> None:
        states = list(self._first.values())
        self._reset()
        try:
            self._first = {self._function(s): s for s in states}
        except _Full:
            raise self._refused() from None

    def _refused(self) -> FormulaError:
        return FormulaError(f"the boolean functions of its states pass {self.max_nodes:,} BDD nodes (the limit)")

    def __call__(self, obligation: DNF) -> DNF:
        key = self._key.get(obligation)
        if key is None:
            try:
                key = self._function(obligation)
            except _Full:
                self._rebuilt()
                try:
                    key = self._function(obligation)
                except _Full:
                    raise self._refused() from None
            self._key[obligation] = key
        return self._first.setdefault(key, obligation)

    def function(self, obligation: DNF) -> int:
        """The obligation's boolean function (a node of the BDD); raises `_Full` past its bound
        (then `rebuild`, which renumbers every function)."""
        key = self._key.get(obligation)
        if key is None:
            key = self._key[obligation] = self._function(obligation)
        return key

    def or_(self, a: int, b: int) -> int:
        return self._or_(a, b)

    def state_of(self, function: int, generation: int, obligation: DNF, letter: frozenset) -> DNF:
        """The state for the disjunction of clause progressions with this function (numbered in
        `generation`) that `letter` leads `obligation` to (`move`'s successor, the state of its
        function): made by `move` only for a function not seen before (join and `simplify` were
        two thirds of the time), or where the functions were renumbered since."""
        if generation == self.generation:
            got = self._raw_first.get(function)
            if got is not None:
                return got
        got = self(move(obligation, letter)[0])
        if generation == self.generation:  # not renumbered before or on the way
            self._raw_first[function] = got
        return got

    def rebuild(self) -> None:
        self._rebuilt()

    def refused(self) -> FormulaError:
        return self._refused()

    def _function(self, obligation: DNF) -> int:
        new = {e for c in obligation for e in c if e not in self._var}
        for e in sorted(new, key=_text):  # variables numbered by their text first met, whatever the hash seed
            self._literal(e)
        key = 0
        for lits in sorted(self._literals(c) for c in obligation):  # nodes made in one order (`_in_order`)
            key = self._or_(key, self._cube(lits))
        return key

    def _literal(self, e: Formula) -> tuple:
        got = self._var.get(e)
        if got is None:
            neg = self._var.get(_negation(e))
            got = self._var[e] = (neg[0], not neg[1]) if neg is not None else (len(self._var), True)
        return got

    def _mk(self, v: int, low: int, high: int) -> int:
        if low == high:
            return low
        key = (v, low, high)
        got = self._unique.get(key)
        if got is None:
            if len(self._nodes) >= self.max_nodes:
                raise _Full
            got = self._unique[key] = len(self._nodes)
            self._nodes.append(key)
        return got

    def _literals(self, clause: frozenset) -> list:
        return sorted((self._literal(e) for e in clause), reverse=True)  # the cube built from the bottom variable up

    def _cube(self, lits: list) -> int:
        node = 1
        for i, (v, positive) in enumerate(lits):
            if i and lits[i - 1][0] == v:  # an element and its negation
                if lits[i - 1][1] != positive:
                    return 0
                continue
            node = self._mk(v, 0, node) if positive else self._mk(v, node, 0)
        return node

    def _or_(self, a: int, b: int) -> int:
        if a == 1 or b == 1:
            return 1
        if a == 0 or a == b:
            return b
        if b == 0:
            return a
        key = (a, b) if a < b else (b, a)
        got = self._or.get(key)
        if got is None:
            va, la, ha = self._nodes[a]
            vb, lb, hb = self._nodes[b]
            if va == vb:
                got = self._mk(va, self._or_(la, lb), self._or_(ha, hb))
            elif va < vb:
                got = self._mk(va, self._or_(la, b), self._or_(ha, b))
            else:
                got = self._mk(vb, self._or_(a, lb), self._or_(a, hb))
            if len(self._or) >= 1 << 18:
                self._or.clear()
            self._or[key] = got
        return got
