"""Read a pickle as data only: an Unpickler that refuses every global.

A pickle can name any importable callable (``os.system``, ``builtins.eval``) and have it called while loading;
that lookup always goes through ``Unpickler.find_class``. Refusing it there, for every module and name, means
nothing in the file can run code. Lists, dicts, tuples, str, bytes, int, float, bool and None need no
globals (bytes only from protocol 3 on), which is all the Bias-in-Bios record pickles hold. A file that needs one (a numpy scalar, a class
instance) is refused with the global it asked for, rather than loaded with a partial allow-list.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any


class UnsafePickleError(pickle.UnpicklingError):
    """The pickle asked for a global (code or a class); the message names the file and the global."""


class _DataOnlyUnpickler(pickle.Unpickler):
    def __init__(self, handle: io.BufferedIOBase, path: Path) -> None:
        super().__init__(handle)
        self._path = path

    def find_class(self, module: str, name: str) -> Any:
        raise UnsafePickleError(
            f"{self._path}: refused to load global '{module}.{name}'; this pickle is read as plain data "
            "(lists, dicts, strings, numbers) and may not import or call anything"
        )

    def persistent_load(self, pid: Any) -> Any:
        # Persistent ids hand the loader an object reference; plain data never uses them.
        raise UnsafePickleError(f"{self._path}: refused persistent id {pid!r}; plain-data pickles have none")


def load_data_pickle(path: str | Path) -> Any:
    """Unpickle ``path`` without ever resolving a global; raise :class:`UnsafePickleError` naming the file
    and the global if the pickle needs one, or ``pickle.UnpicklingError`` naming the file if it is corrupt."""
    path = Path(path)
    with path.open("rb") as handle:
        try:
            return _DataOnlyUnpickler(handle, path).load()
        except UnsafePickleError:
            raise
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError) as error:
            raise pickle.UnpicklingError(f"{path}: not a readable pickle ({type(error).__name__}: {error})") from error
