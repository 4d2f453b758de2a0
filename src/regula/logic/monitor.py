"""Finite-trace monitors: feed letters, get a verdict after each; two backends, one interface.

A letter is the set of atoms true at a step. The verdict after a prefix w is
`accepting` (w itself satisfies the formula), `pending` (it does not, but some extension
does) or `violated` (no extension does; final). "Some extension" ranges over an explicit
alphabet: by default every valuation of the formula's atoms; with `actions`, a state's
propositions with exactly one action, so that a law over 14 propositions is not checked
against 2^14 letters of impossible actions. Projected on the formula's atoms, that is one of
its actions, or none of them where some action lies outside the formula.
"""
from __future__ import annotations

import gc
import time
from enum import Enum
from functools import lru_cache
from itertools import combinations

from regula.errors import RegulaError, UnknownNameError

from . import ltlf
from .formula import MAX_DEPTH, MAX_MOVES, MAX_SECONDS, MAX_STATES, Formula, FormulaError, height

BACKENDS = ("auto", "native", "spot")
CLASS_ATOMS = 4  # a state reading this many atoms or more has its moves made by letter class
TABLE_ATOMS = 12  # up to this many, the moves are decision diagrams shared by all states (`ltlf.Diagrams`)


class Verdict(str, Enum):
    ACCEPTING = "accepting"
    PENDING = "pending"
    VIOLATED = "violated"


_PENDING, _ACCEPTING = Verdict.PENDING, Verdict.ACCEPTING
_VIOLATED = Verdict.VIOLATED  # as module globals: a member looked up on its Enum class takes ~50 ns a step


def spot_available() -> bool:
    try:
        import spot  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_backend(name: str) -> str:
    if name not in BACKENDS:
        raise UnknownNameError("logic backend", name, BACKENDS)
    if name == "auto":
        return "spot" if spot_available() else "native"
    if name == "spot" and not spot_available():
        raise RegulaError("logic backend 'spot' asked for, but `import spot` fails here "
                          "(the spottl wheel is for Linux x86_64, CPython 3.10-3.13); use 'native' or 'auto'")
    return name


def alphabet_size(atoms: frozenset, actions: frozenset | None = None) -> int:
    """len(letters_over(atoms, actions)), without building them."""
    if actions is None:
        return 2 ** len(atoms)
    return 2 ** len(atoms - actions) * (len(atoms & actions) + (not actions <= atoms))


def letters_over(atoms: frozenset, actions: frozenset | None = None) -> list[frozenset]:
    """The explicit alphabet projected on `atoms` (see the module doc)."""
    atoms = sorted(atoms)
    acts = sorted(a for a in atoms if actions is not None and a in actions)
    plain = [a for a in atoms if a not in acts]
    none = [frozenset()] if actions is not None and not actions <= set(atoms) else []
    choices = none + [frozenset([a]) for a in acts] if actions is not None else None
    out = []
    for k in range(len(plain) + 1):
        for combo in combinations(plain, k):
            base = frozenset(combo)
            if choices is None:
                for j in range(len(acts) + 1):
                    for extra in combinations(acts, j):
                        out.append(base | frozenset(extra))
            else:
                out.extend(base | c for c in choices)
    return out


class WholeAutomatonError(FormulaError):
    """The whole automaton passes MAX_STATES, MAX_MOVES or the MAX_SECONDS backstop while it is
    built; what one move costs (clauses, pairs, letters a state reads) is a plain FormulaError."""


class Monitor:
    """Common driver: subclasses give `_begin() -> start state`, `_move(state, letter) ->
    (state, accepted)` and `_reads(state) -> atoms`, the atoms a state's moves depend on; a
    state is only ever tried on the letters over those (2 or 4 for `G(a | X X b)`, however many
    atoms the alphabet has). The automaton is built when the monitor is made (`compiled`), within
    MAX_STATES states and MAX_MOVES moves, so that monitoring only looks moves up. `compiled=False`
    explores it only as far as a question needs (can these laws together still be satisfied?).

    Where the whole automaton passes those bounds, a monitor made with `lazy` (where the
    subclass allows it, `lazy_fallback`) is built lazily instead: each state and move is made
    the first time a run or a search reaches it and kept, so a formula whose automaton is large
    but whose runs visit few of its states is monitored (a random formula of 10 temporal
    operators over 12 atoms: 21,123 states in its minimal automaton, 20-60 visited by ten runs).
    The same bounds then hold over the monitor's life, counted on what its runs have made:
    past MAX_STATES states or MAX_MOVES moves it is refused, part way through a run, in one line,
    and each search for a live state is bounded as before. What needs the whole automaton
    (`transitions`: drawing it, equivalence, a DFA) is refused at once, naming the operation.
    A law file's laws are compiled whole (laws.py): they are drawn and compared, and a law past
    the bounds is refused when it is loaded, not part way through an episode."""

    backend = ""
    forgets = False  # True: moves are memoised up to MAX_MOVES, then forgotten, never refused
    lazy_fallback = False  # True: past the whole automaton's bounds, built lazily where `lazy` (see above)

    def __init__(self, formula: Formula, actions: frozenset | None = None, compiled: bool = True,
                 lazy: bool = True):
        # A parsed formula nests at most MAX_DEPTH, a balanced conjunction of MAX_LAWS laws 8 more;
        # one built in code may nest deeper than progression (~8 frames a level) can recurse.
        if height(formula) > MAX_DEPTH + 10:
            raise FormulaError(f"formula nests {height(formula)} operators deep; a monitor takes at most "
                               f"{MAX_DEPTH + 10}")
        self.formula = formula
        self.atoms = formula.atoms()
        self.actions = None if actions is None else frozenset(actions)
        self.whole_refused: FormulaError | None = None  # lazy: why the whole automaton was not built
        self._letters: list | None = None
        self._letters_by_reads: dict = {}
        self._fresh()
        if compiled:
            collecting = gc.isenabled()
            gc.disable()  # the build makes millions of small tuples and no cycles: collections took a fifth of it
            try:
                self._compile()
            except WholeAutomatonError as exc:
                if not (lazy and self.lazy_fallback):
                    raise
                self.whole_refused = exc
                self._fresh()  # what the build made is dropped: the lazy monitor counts only what its runs make
            finally:
                if collecting:
                    gc.enable()
        self.reset()

    def _fresh(self) -> None:
        """No state or move made yet but the start."""
        self._reads_of: dict = {}
        self._table: dict = {}  # (state, letter over the atoms the state reads) -> (state, accepted)
        self._trees: dict = {}  # state -> its moves by letter class (`_classes`), where it has them
        self._class_moves = 0  # their leaves: moves, counted with the table's
        self._seen: dict = {}  # (state, letter) -> the same
        self._live: dict = {}
        self._start = self._begin()
        self._states: set = {self._start}

    @property
    def lazy(self) -> bool:
        """Built lazily: its whole automaton passed the bounds (`whole_refused` says which)."""
        return self.whole_refused is not None

    def _too_large(self, what: str) -> FormulaError:
        """The one line for a bound passed: of the whole automaton while it is built, of what
        the runs have made once it is built lazily."""
        if self.lazy:
            return FormulaError(f"monitored lazily (its whole automaton is too large), its runs have made more "
                                f"than {what} (the limit)", str(self.formula))
        return WholeAutomatonError(f"its automaton passes {what} (the limit)", str(self.formula))

    def _over(self, atoms: frozenset) -> list[frozenset]:
        """The explicit alphabet projected on `atoms`; its size is checked before it is built."""
        got = self._letters_by_reads.get(atoms)
        if got is None:
            size = alphabet_size(atoms, self.actions)
            if size > MAX_MOVES:
                raise FormulaError(f"a state of its automaton reads {len(atoms)} atoms, {size:,} letters, more "
                                   f"than the {MAX_MOVES:,} automaton moves a monitor may compute (the limit)",
                                   str(self.formula))
            got = self._letters_by_reads[atoms] = letters_over(atoms, self.actions)
        return got

    @property
    def letters(self) -> list[frozenset]:
        """The explicit alphabet over all the formula's atoms (for drawing), built on first use."""
        if self._letters is None:
            self._letters = self._over(self.atoms)
        return self._letters

    def _letters_at(self, state) -> list[frozenset]:
        return self._over(self._reads_at(state))

    def _reads_at(self, state) -> frozenset:
        reads = self._reads_of.get(state)
        if reads is None:
            reads = self._reads_of[state] = frozenset(self._reads(state)) & self.atoms
        return reads

    def reset(self) -> None:
        self.state = self._start
        self.verdict = _PENDING if self.live(self._start) else _VIOLATED
        self.steps = 0
        self.first_violation: int | None = None if self.verdict is not _VIOLATED else 0

    def _step(self, state, letter: frozenset):
        got = self._seen.get((state, letter))  # the letter as given: no projection on the way
        if got is not None:
            return got
        got = self._projected_step(state, letter)
        if len(self._seen) >= MAX_MOVES:  # only a shortcut: forgotten, never refused
            self._seen.clear()
        self._seen[(state, letter)] = got
        return got

    def _projected_step(self, state, letter: frozenset):
        tree = self._trees.get(state)
        if tree is not None:
            return ltlf.class_of(tree, letter)
        reads = self._reads_at(state)
        if not letter <= reads:  # a letter of the state's own alphabet is kept as it is: no copy a move
            letter = letter & reads
        key = (state, letter)
        got = self._table.get(key)
        if got is None:  # every move computed is kept: the table is the cost to bound
            if len(self._table) >= MAX_MOVES:
                if not self.forgets:
                    raise self._too_large(f"{MAX_MOVES:,} moves")
                self._table.clear()
            got = self._table[key] = self._move(state, letter)
            if not self.forgets and got[0] not in self._states:
                self._states.add(got[0])
                if len(self._states) > MAX_STATES:
                    raise self._too_large(f"{MAX_STATES:,} states")
        return got

    @property
    def moves(self) -> int:
        """Moves computed: one a letter where they are made letter by letter, one a letter
        class where by class (`ltlf.move_classes`), and where by shared decision diagram
        (`ltlf.Diagrams`) one a tree node no state held before (a split or a leaf)."""
        return len(self._table) + self._class_moves

    def _count(self, moves: int, what: str) -> int:
        if moves > MAX_MOVES:
            raise FormulaError(f"{what} explores more than {MAX_MOVES:,} automaton moves (the limit)",
                               str(self.formula))
        return moves

    def _in_time(self, deadline: float, what: str, error=FormulaError) -> None:
        if time.thread_time() > deadline:
            raise error(f"{what} takes more than {MAX_SECONDS:g} s (the limit)", str(self.formula))

    def _classes(self, state, budget):
        """The state's moves as a decision tree over letter classes (`ltlf.move_classes`), or
        None: its moves are computed letter by letter."""
        return None

    def _compile(self) -> None:
        """Every state reachable, and which are live (an accepted move is reachable from them):
        backwards from the states with an accepted move."""
        todo, into, live = [self._start], {}, set()
        deadline = time.thread_time() + MAX_SECONDS

        def budget(moves: int) -> None:
            self._class_moves += moves
            if self.moves > MAX_MOVES:
                raise self._too_large(f"{MAX_MOVES:,} moves")
            self._in_time(deadline, "building its automaton", WholeAutomatonError)

        while todo:
            s = todo.pop()
            tree = self._classes(s, budget)
            if tree is not None:
                self._trees[s] = tree
                leaves, walked = [tree], set()  # a diagram: a node shared by two branches is walked once
                while leaves:
                    node = leaves.pop()
                    if len(node) == 3:
                        for child in node[1:]:
                            if id(child) not in walked:
                                walked.add(id(child))
                                leaves.append(child)
                        continue
                    t, accepted = node
                    if accepted:
                        live.add(s)
                    into.setdefault(t, set()).add(s)
                    if t not in self._states:
                        self._states.add(t)
                        if len(self._states) > MAX_STATES:
                            raise self._too_large(f"{MAX_STATES:,} states")
                        todo.append(t)
                continue
            letters = self._letters_at(s)
            if len(self._table) + len(letters) > MAX_MOVES:  # before they are computed, not part way
                raise self._too_large(f"{MAX_MOVES:,} moves")
            for letter in letters:
                self._in_time(deadline, "building its automaton", WholeAutomatonError)
                known = len(self._states)
                t, accepted = self._projected_step(s, letter)  # not memoised twice: letters are projected
                if accepted:
                    live.add(s)
                into.setdefault(t, set()).add(s)
                if len(self._states) > known:
                    todo.append(t)
        todo = list(live)
        while todo:
            for src in into.get(todo.pop(), ()):
                if src not in live:
                    live.add(src)
                    todo.append(src)
        self._live.update((s, s in live) for s in self._states)

    def live(self, state) -> bool:
        """Does some non-empty continuation from `state` end accepted? Depth-first, stopping at
        the first accepted move (states on the way are live); when none is reachable, every
        state seen is dead. Never more than MAX_MOVES moves."""
        known = self._live.get(state)
        if known is not None:
            return known
        seen, path, moves = {state}, [(state, iter(self._letters_at(state)))], 0
        deadline = time.thread_time() + MAX_SECONDS
        while path:
            s, letters = path[-1]
            for letter in letters:
                moves = self._count(moves + 1, "deciding whether it can still be satisfied")
                self._in_time(deadline, "deciding whether it can still be satisfied")
                t, accepted = self._step(s, letter)
                if accepted or self._live.get(t):
                    self._live.update((on_path, True) for on_path, _ in path)
                    return True
                if t not in seen and t not in self._live:
                    seen.add(t)
                    path.append((t, iter(self._letters_at(t))))
                    break
            else:
                path.pop()
        self._live.update(dict.fromkeys(seen, False))
        return False

    def _verdict(self, state, accepted: bool) -> Verdict:
        if accepted:
            return _ACCEPTING
        return _PENDING if self.live(state) else _VIOLATED

    def peek(self, letter) -> Verdict:
        """The verdict if `letter` came next; the monitor does not move."""
        if self.verdict is _VIOLATED:
            return _VIOLATED
        nxt, acc = self._step(self.state, frozenset(letter) & self.atoms)
        return self._verdict(nxt, acc)

    def step(self, letter) -> Verdict:
        self.steps += 1
        if self.verdict is _VIOLATED:
            return self.verdict
        self.state, acc = self._step(self.state, frozenset(letter) & self.atoms)
        self.verdict = self._verdict(self.state, acc)
        if self.verdict is _VIOLATED:
            self.first_violation = self.steps
        return self.verdict

    def run(self, trace) -> list[Verdict]:
        return [self.step(letter) for letter in trace]

    def can_still_be_satisfied(self) -> bool:
        return self.verdict is not _VIOLATED

    def transitions(self, what: str = "drawing its automaton"):
        """The automaton over the explicit alphabet: (states, start, edges, accepting, live),
        states keyed (state, accepted on entry); `live`: those from which an accepting one is
        reachable. `what` names the operation in the error where the monitor is lazy (the whole
        automaton passed the bounds when it was made): refused at once, nothing explored."""
        if self.whole_refused is not None:
            raise FormulaError(f"{what} needs its whole automaton, and {self.whole_refused.reason}",
                               str(self.formula))
        start = ("start", False)
        states, edges, todo, moves = {start: 0}, {}, [start], 0
        while todo:
            node = todo.pop()
            moves = self._count(moves + len(self.letters), what)
            for letter in self.letters:
                nxt, acc = self._step(node[0] if node != start else self._start, letter)
                dst = (nxt, acc)
                if dst not in states:
                    states[dst] = len(states)
                    todo.append(dst)
                edges.setdefault((states[node], states[dst]), []).append(letter)
        accepting = {i for (s, acc), i in states.items() if acc}
        into: dict = {}
        for src, dst in edges:
            into.setdefault(dst, set()).add(src)
        live, todo = set(), list(accepting)
        while todo:  # backwards from the accepting states
            for src in into.get(todo.pop(), ()):
                if src not in live:
                    live.add(src)
                    todo.append(src)
        return states, 0, edges, accepting, live


class _Node(dict):
    """A state of the automaton as a monitor is in it: the state, the verdict there, and as a
    dict the node each letter leads to, keyed by the letter as given (one dict lookup a step)."""

    __slots__ = ("state", "verdict", "just_violated")


class NativeMonitor(Monitor):
    """The native engine's monitor. Each step is one lookup of the letter in the current node's
    row, filled from the compiled automaton the first time a letter is seen there: nothing is
    projected, allocated or searched. The hash of a frozenset is kept in it, so a letter built
    once per step (as the shield and `regula bench logic` do) is hashed once for all the laws.

    A node is a state entered with or without an accepted move (`accepting` is a property of
    the move), or, for the start and once violated, with none. A violated node entered by a
    move keeps an empty row: the step out of it, once a run, is where the step that violated
    is counted (`first_violation`), so that no step pays for that check; after it, the monitor
    stays in the state's node without a move, whose row leads back to itself."""

    backend = "native"
    row_letters = MAX_MOVES  # letters all rows hold together, then they start again
    lazy_fallback = True

    def __init__(self, formula: Formula, actions: frozenset | None = None, compiled: bool = True,
                 lazy: bool = True):
        self._violated_at: int | None = None
        super().__init__(formula, actions, compiled, lazy)

    def _fresh(self) -> None:
        self._nodes: dict = {}  # (state, accepted or None) -> _Node
        self._row_entries = 0
        super()._fresh()

    def reset(self) -> None:
        self._node = self._node_at(self._start, None)
        self.steps = 0
        self._violated_at = 0 if self._node.verdict is _VIOLATED else None

    @property
    def state(self):
        return self._node.state

    @property
    def verdict(self) -> Verdict:
        return self._node.verdict

    @property
    def first_violation(self) -> int | None:
        node = self._node
        if node.verdict is not _VIOLATED:
            return None
        return self.steps if node.just_violated else self._violated_at

    def _node_at(self, state, accepted: bool | None) -> _Node:
        node = self._nodes.get((state, accepted))
        if node is None:
            node = self._nodes[(state, accepted)] = _Node()
            node.state = state
            node.verdict = self._verdict(state, bool(accepted))
            node.just_violated = node.verdict is _VIOLATED and accepted is not None
        return node

    def _next(self, node: _Node, letter) -> _Node:
        """The node `letter` leads to from `node`, from the compiled moves, kept in its row."""
        if node.verdict is _VIOLATED:
            nxt = self._node_at(node.state, None)
            if node.just_violated:
                return nxt
        else:
            nxt = self._node_at(*self._step(node.state, frozenset(letter) & self.atoms))
        try:
            hash(letter)
        except TypeError:  # a set or a list: not kept (a frozenset of it would never be looked up)
            return nxt
        if self._row_entries >= self.row_letters:
            for row in self._nodes.values():
                row.clear()
            self._row_entries = 0
        node[letter] = nxt
        self._row_entries += 1
        return nxt

    def step(self, letter) -> Verdict:
        self.steps += 1
        try:
            node = self._node[letter]
        except (KeyError, TypeError):
            if self._node.just_violated:
                self._violated_at = self.steps - 1
            node = self._next(self._node, letter)
        self._node = node
        return node.verdict

    def peek(self, letter) -> Verdict:
        try:
            return self._node[letter].verdict
        except (KeyError, TypeError):
            return self._next(self._node, letter).verdict

    def _begin(self):
        self._canon = ltlf.Canon()  # one state for obligations with one boolean function over their elements
        self._diagrams = None  # the moves of states that read 4 to 12 atoms (`ltlf.Diagrams`), made on first use
        return self._canon(ltlf.simplify(ltlf.initial(self.formula)))

    def _classes(self, state, budget):
        # Letters with one action each: no class stands for them. Below 4 atoms read, the
        # letters (at most 8) are tried one by one.
        reads = self._reads_at(state)
        if self.actions is not None or len(reads) < CLASS_ATOMS:
            return None
        if len(reads) <= TABLE_ATOMS:
            if self._diagrams is None:
                self._diagrams = ltlf.Diagrams(self.atoms, self._canon)
            return self._diagrams.moves(state, budget)
        try:
            return ltlf.move_classes(state, budget, self._canon)
        except ltlf.Unfolded:
            return None

    def _move(self, state, letter):
        nxt, accepted = ltlf.move(state, letter)
        return self._canon(nxt), accepted

    def _reads(self, state):
        return ltlf.reads(state)


class SpotMonitor(Monitor):
    """Spot's automaton for the LTLf formula (`from_ltlf`, translated, read on finite traces), run as a
    subset construction so a non-deterministic result is still a monitor. Simulation-based
    reductions are off: they took minutes on an xor of five F's, and the subset construction
    does not need the smallest automaton.

    Its cost is bounded without determinising it ahead (the subsets reachable can number 90
    times the native automaton's states: 4,309 against 56 for a random formula of 4 atoms):
    a set of its states is live when one of them is, so which are live is known from the
    automaton itself (`_compile`), each step costs one pass over the set's edges, and the moves
    memoised are forgotten past MAX_MOVES. Spot's translation cannot be stopped part way from
    Python (its `output_aborter` does not reach `ltl_to_tgba_fm` through the bindings), so a
    formula is translated only once the native engine has built its automaton within the
    bounds: the 18-nested-X law took Spot 7 s to translate (2^18 states)."""

    backend = "spot"
    forgets = True

    def _begin(self):
        _within_native_bounds(self.formula, self.actions)
        import spot  # first: it puts its `buddy` module on the path
        import buddy
        self._buddy = buddy
        self.aut = spot.translate(spot.from_ltlf(spot.formula(str(self.formula))), "small", "sbacc",
                                  xargs="simul=0")
        self._finite()
        self._letter_bdd: dict = {}
        self._coreach: set | None = None
        return frozenset([self.aut.get_init_state_number()])

    def _finite(self) -> None:
        """The automaton read on finite traces, as `spot.to_finite` documents it: a state is
        accepting where it has a `!alive` edge, and the `alive` edges are kept with `alive`
        taken out. Not `to_finite` itself: it then drops the states that lead to no accepting
        cycle, which without simulation includes some with only `!alive` edges (so it rejected
        the trace {p1} of `(p0 xor G p1 -> F X p2 M p3) U ((!p2 -> p2) <-> !F((p2 R p0) R X false))`,
        which Spot's automaton accepts)."""
        b, aut = self._buddy, self.aut
        alive = aut.register_ap("alive")
        self._aps = {str(a): aut.register_ap(str(a)) for a in aut.ap() if str(a) != "alive"}
        self._names = {var: name for name, var in self._aps.items()}
        self._out, self._final = [], set()
        for s in range(aut.num_states()):
            out = []
            for e in aut.out(s):
                if (e.cond & b.bdd_nithvar(alive)) != b.bddfalse:
                    self._final.add(s)
                cond = b.bdd_restrict(e.cond, b.bdd_ithvar(alive))
                if cond != b.bddfalse:
                    out.append((cond, e.dst))
            self._out.append(out)

    def _compile(self) -> None:
        """The states from which an edge path that letters of the alphabet can take leads to an
        accepting state: backwards from the accepting states."""
        states, edges = len(self._out), sum(map(len, self._out))
        if states > MAX_STATES or edges > MAX_MOVES:
            raise FormulaError(f"Spot's automaton has {states:,} states and {edges:,} edges, more than "
                               f"{MAX_STATES:,} and {MAX_MOVES:,} (the limit)", str(self.formula))
        into: dict = {}
        tried, usable = 0, {}
        for s, out in enumerate(self._out):
            for cond, dst in out:
                key = cond.id()
                if key not in usable and self.actions is None:
                    # Every valuation of the atoms is a letter, so one takes any condition `_finite`
                    # kept (none is false): no letters tried (2^11 for an edge of a 12-atom formula).
                    usable[key] = True
                elif key not in usable:
                    letters = self._over(frozenset(self._support(cond)) & self.atoms)
                    tried = self._count(tried + len(letters), "checking which letters take its edges")
                    usable[key] = any(self._buddy.bdd_implies(self._bdd(x), cond) for x in letters)
                if usable[key]:
                    into.setdefault(dst, set()).add(s)
        live = set()
        todo = list(self._final)
        while todo:
            for src in into.get(todo.pop(), ()):
                if src not in live:
                    live.add(src)
                    todo.append(src)
        self._coreach = live

    def live(self, state) -> bool:
        if self._coreach is None:
            return super().live(state)
        return any(s in self._coreach for s in state)

    def _support(self, cond) -> set:
        out = set()
        support = self._buddy.bdd_support(cond)
        while support != self._buddy.bddtrue:
            out.add(self._names[self._buddy.bdd_var(support)])
            support = self._buddy.bdd_high(support)
        return out

    def _bdd(self, letter: frozenset):
        b = self._letter_bdd.get(letter)
        if b is None:
            b = self._buddy.bddtrue
            for name, var in self._aps.items():
                b &= self._buddy.bdd_ithvar(var) if name in letter else self._buddy.bdd_nithvar(var)
            self._letter_bdd[letter] = b
        return b

    def _reads(self, state):
        out = set()
        for s in state:
            for cond, _ in self._out[s]:
                out |= self._support(cond)
        return out

    def _move(self, state, letter):
        cube = self._bdd(letter)
        nxt = frozenset(dst for s in state for cond, dst in self._out[s] if self._buddy.bdd_implies(cube, cond))
        return nxt, any(s in self._final for s in nxt)


@lru_cache(maxsize=1024)
def _native_cost(formula: Formula, actions: frozenset | None) -> tuple[str, str] | None:
    try:
        NativeMonitor(formula, actions, lazy=False)  # Spot's translation is whole: no lazy fallback
    except FormulaError as exc:
        return exc.reason, exc.text
    return None


def _within_native_bounds(formula: Formula, actions: frozenset | None) -> None:
    """The native automaton within MAX_STATES and MAX_MOVES, or the FormulaError saying which bound it passed."""
    refused = _native_cost(formula, actions)
    if refused is not None:
        raise FormulaError(*refused)


def monitor(formula: Formula, backend: str = "auto", actions: frozenset | None = None,
            lazy: bool = True) -> Monitor:
    """A monitor of `formula`; `lazy=False`: refused where the whole automaton passes the bounds
    (Spot's always is: its translation cannot be stopped part way)."""
    cls = NativeMonitor if resolve_backend(backend) == "native" else SpotMonitor
    return cls(formula, actions, lazy=lazy)
