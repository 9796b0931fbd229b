"""What a frame is doing at its current instruction, read from its code's bytecode (CPython
3.11): which instruction it is, whether the call it makes went straight into a Python frame,
and by which name the call's code loaded what it calls.

The monitor asks this of library frames only, when a walk up the stack meets a library module
body (NOTE [What a judged body calls] in ``monitor.py``). It never evaluates anything: the
name is the one the caller's own code spells (``torch.autograd.grad(...)`` loads ``grad``).

CPython 3.11 facts this relies on:

* a Python function called by a ``CALL`` instruction runs in the same evaluation loop (the
  call is "inlined"), and the caller's ``f_lasti`` then points past the instruction, into
  its inline cache; a call that went through C (a builtin, ``type.__call__``, a
  ``functools.partial``, ``map``) leaves ``f_lasti`` on the instruction itself;
* ``co_code`` is the bytecode without specialization: base opcodes, caches zeroed;
* before ``PRECALL n; CALL n`` the stack holds, from the top, the ``n`` arguments, then the
  callable (or ``self``), pushed by the instruction found by counting back (:func:`_producer`).

Anything this cannot read for certain (a jump inside the call's arguments, an instruction
not in the table) reads as "unknown": the monitor then walks on (failing closed).
"""
from __future__ import annotations

import dis
import opcode

_OPNAME = tuple(dis.opname)
_CACHES = tuple(getattr(opcode, "_inline_cache_entries", ()))
_EXTENDED_ARG = dis.opmap.get("EXTENDED_ARG", -1)
_CACHE = dis.opmap.get("CACHE", 0)
_JUMPS = frozenset(_OPNAME[op] for op in (*dis.hasjrel, *dis.hasjabs))
_ABSOLUTE = frozenset(dis.hasjabs)   # taken now: nothing here reads a module attribute later

# (pushes, pops) of the instructions an argument list is made of, as functions of the
# instruction's argument; anything else ends the count ("unknown").
_ONE = frozenset(("LOAD_CONST", "LOAD_FAST", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE",
                  "LOAD_CLASSDEREF", "LOAD_ASSERTION_ERROR", "LOAD_BUILD_CLASS", "PUSH_NULL",
                  "COPY", "GET_LEN"))
_REPLACE = frozenset(("LOAD_ATTR", "UNARY_POSITIVE", "UNARY_NEGATIVE", "UNARY_NOT",
                      "UNARY_INVERT", "GET_ITER", "LIST_TO_TUPLE"))
_BINARY = frozenset(("BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP", "IS_OP", "CONTAINS_OP"))
_BUILD = frozenset(("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE"))
_INTO = frozenset(("LIST_EXTEND", "LIST_APPEND", "SET_UPDATE", "SET_ADD", "DICT_UPDATE",
                   "DICT_MERGE"))
_NOTHING = frozenset(("PRECALL", "KW_NAMES", "NOP"))
# Instructions that load what they push by a name: (how the name is found).
_BY_NAME = frozenset(("LOAD_NAME", "LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR"))
_BY_LOCAL = frozenset(("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_CLASSDEREF"))
_LOADS = _BY_NAME | _BY_LOCAL | frozenset(("LOAD_GLOBAL", "LOAD_BUILD_CLASS"))


def _effect(name: str, arg: int):
    """``(pushes, pops)`` of an instruction, or None when it is not in the table."""
    if name in _ONE:
        return 1, 0
    if name == "LOAD_GLOBAL":
        return 1 + (arg & 1), 0
    if name == "LOAD_METHOD":
        return 2, 1
    if name in _REPLACE:
        return 1, 1
    if name in _BINARY:
        return 1, 2
    if name in _BUILD:
        return 1, arg
    if name == "BUILD_MAP":
        return 1, 2 * arg
    if name == "BUILD_CONST_KEY_MAP":
        return 1, arg + 1
    if name in _INTO:
        return 0, 1
    if name == "MAP_ADD":
        return 0, 2
    if name == "FORMAT_VALUE":
        return 1, 1 + bool(arg & 0x04)
    if name == "MAKE_FUNCTION":
        return 1, 1 + bin(arg & 0x0F).count("1")
    if name == "CALL":
        return 1, arg + 2
    if name == "CALL_FUNCTION_EX":
        return 1, 3 + (arg & 1)
    if name in _NOTHING:
        return 0, 0
    return None


def parse(code) -> tuple:
    """``(instructions, starts, targets)`` of ``code``: ``(offset, name, arg)`` of each
    instruction (``EXTENDED_ARG`` folded into the next, caches left out), the offset of each
    instruction's start mapped to its index, and the offsets that a jump lands on."""
    raw = code.co_code
    instructions, starts, targets = [], {}, set()
    arg = 0
    offset = 0
    first = 0
    while offset < len(raw):
        op, value = raw[offset], raw[offset + 1]
        if op == _EXTENDED_ARG:
            arg = (arg | value) << 8
            offset += 2
            continue
        arg |= value
        name = _OPNAME[op]
        after = offset + 2 + 2 * (_CACHES[op] if op < len(_CACHES) else 0)
        if name in _JUMPS:
            if op in _ABSOLUTE:
                targets.add(2 * arg)
            else:
                targets.add(after - 2 * arg if "BACKWARD" in name else after + 2 * arg)
        starts[first] = len(instructions)
        instructions.append((first, name, arg))
        arg = 0
        offset = after
        first = offset
    return tuple(instructions), starts, frozenset(targets)


def site(code, lasti: int, parsed) -> tuple:
    """``(instruction, inlined, load)`` of a frame of ``code`` stopped at ``lasti``:

    * ``instruction``: the name of the instruction it runs ("" when unknown);
    * ``inlined``: whether it is a call whose Python callee runs in the same loop (``lasti``
      in the instruction's cache: see the module docstring);
    * ``load``: ``(instruction, name)`` that loaded what a ``CALL``/``CALL_FUNCTION_EX``
      calls (``("LOAD_METHOD", "grad")``), the attribute a ``LOAD_ATTR``/``LOAD_METHOD``/
      ``STORE_ATTR`` reads or writes, or None.

    ``parsed`` is :func:`parse`'s answer for ``code``."""
    instructions, starts, targets = parsed
    index = starts.get(lasti)
    inlined = index is None
    if inlined:   # inside an instruction's cache: the last instruction that starts before it
        index = max((i for o, i in starts.items() if o < lasti), default=None)
        if index is None:
            return "", False, None
    offset, name, arg = instructions[index]
    if inlined and name != "CALL":
        return "", False, None
    if name in _BY_NAME:
        return name, inlined, (name, code.co_names[arg])
    if name == "CALL_FUNCTION_EX":
        return name, inlined, _load(code, instructions, index, 1 + (arg & 1), targets)
    if name != "CALL":
        return name, inlined, None
    if index >= 1 and instructions[index - 1][1] == "PRECALL":
        index -= 1
    # Under the arguments: the callable and NULL, or a method and its ``self`` (a
    # comprehension is called so, with its iterator as ``self``): the load of a name, or the
    # function a MAKE_FUNCTION made.
    found = _load(code, instructions, index, arg, targets)
    if found is not None and found[0] not in _LOADS:
        below = _load(code, instructions, index, arg + 1, targets)
        if below is not None and below[0] == "MAKE_FUNCTION":
            return name, inlined, below
    return name, inlined, found


def _load(code, instructions, index, depth, targets):
    """The instruction before ``index`` that pushed the stack item ``depth`` down (0: the
    top) as it stands before ``index``, as ``(instruction, name)``; None when unknown."""
    while index > 0:
        index -= 1
        offset, name, arg = instructions[index]
        if name in _JUMPS:
            return None
        effect = _effect(name, arg)
        if effect is None:
            return None
        pushes, pops = effect
        if depth < pushes:
            if name in _BY_NAME:
                return name, code.co_names[arg]
            if name == "LOAD_GLOBAL":
                return name, code.co_names[arg >> 1]
            if name in _BY_LOCAL:
                return name, code._varname_from_oparg(arg)
            return name, ""
        if offset in targets:   # another path could reach what lies above: not certain
            return None
        depth += pops - pushes
    return None
