"""Read a pickle as data only: an Unpickler that refuses every global.

A pickle can name any importable callable (``os.system``, ``builtins.eval``) and have it called while loading;
that lookup always goes through ``Unpickler.find_class``. Refusing it there, for every module and name, means
nothing in the file can run code. Lists, dicts, tuples, str, bytes, int, float, bool and None need no
globals (bytes only from protocol 3 on), which is all the Bias-in-Bios record pickles hold. A file that needs one (a numpy scalar, a class
instance) is refused with the global it asked for, rather than loaded with a partial allow-list.

Loading a dict or a set hashes its keys, and hashing a tuple that holds the same sub-tuple twice at every level
takes time exponential in its depth (a pickle of a few hundred bytes would hang the build for hours). So dict
keys and set members must be scalars (str, bytes, int, float, bool, None); anything else is refused before it
is hashed. That check needs the pure-Python unpickler, whose opcode table can be extended: loading is about
four times slower than the C one (8 s instead of 2 s for 100,000 Bios-like records).
"""

from __future__ import annotations

import io
import pickle
import struct
from pathlib import Path
from typing import Any


class UnsafePickleError(pickle.UnpicklingError):
    """The pickle asked for a global (code or a class); the message names the file and the global."""


_SCALARS = (str, bytes, int, float, bool, type(None))


class _DataOnlyUnpickler(pickle._Unpickler):  # the Python implementation: the C one cannot check keys
    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, handle: io.BufferedIOBase, path: Path) -> None:
        super().__init__(handle)
        self._path = path

    def _check_keys(self, keys: Any, what: str) -> None:
        for key in keys:
            if not isinstance(key, _SCALARS):
                raise UnsafePickleError(
                    f"{self._path}: refused a {type(key).__name__} as {what}; a data-only pickle's dict keys and "
                    "set members are strings or numbers (hashing a nested tuple can take exponential time)"
                )

    # Each opcode that hashes items is checked first. Stack layouts are those of pickle._Unpickler:
    # SETITEM [.., dict, key, value]; after a MARK, self.stack holds just the marked items.
    def _load_setitem(self) -> None:
        self._check_keys(self.stack[-2:-1], "a dict key")
        pickle._Unpickler.load_setitem(self)

    def _load_marked_dict_items(self, load: Any) -> None:
        self._check_keys(self.stack[0::2], "a dict key")
        load(self)

    def _load_marked_set_items(self, load: Any) -> None:
        self._check_keys(self.stack, "a set member")
        load(self)

    dispatch[pickle.SETITEM[0]] = _load_setitem
    dispatch[pickle.SETITEMS[0]] = lambda self: self._load_marked_dict_items(pickle._Unpickler.load_setitems)
    dispatch[pickle.DICT[0]] = lambda self: self._load_marked_dict_items(pickle._Unpickler.load_dict)
    dispatch[pickle.ADDITEMS[0]] = lambda self: self._load_marked_set_items(pickle._Unpickler.load_additems)
    dispatch[pickle.FROZENSET[0]] = lambda self: self._load_marked_set_items(pickle._Unpickler.load_frozenset)

    def find_class(self, module: str, name: str) -> Any:
        raise UnsafePickleError(
            f"{self._path}: refused to load global '{module}.{name}'; this pickle is read as plain data "
            "(lists, dicts, strings, numbers) and may not import or call anything"
        )

    def persistent_load(self, pid: Any) -> Any:
        # Persistent ids hand the loader an object reference; plain data never uses them.
        # Its type only: the id is untrusted, and the repr of a self-sharing tuple is exponential in size.
        raise UnsafePickleError(f"{self._path}: refused a persistent id (a {type(pid).__name__}); plain-data "
                                "pickles have none")


def load_data_pickle(path: str | Path) -> Any:
    """Unpickle ``path`` without ever resolving a global; raise :class:`UnsafePickleError` naming the file
    and the global if the pickle needs one, or ``pickle.UnpicklingError`` naming the file if it is corrupt."""
    path = Path(path)
    with path.open("rb") as handle:
        try:
            return _DataOnlyUnpickler(handle, path).load()
        except UnsafePickleError:
            raise
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError, struct.error,
                OverflowError) as error:
            raise pickle.UnpicklingError(f"{path}: not a readable pickle ({type(error).__name__}: {error})") from error
