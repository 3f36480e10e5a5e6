"""Columns of a Parquet table as numpy arrays, read and written with pyarrow alone.

Why not pandas or pyarrow's own numpy conversions: a grid point's train, attack and fairness jobs read a few
label columns and write one small table, and importing pandas cost each of them 0.5 s here.
pyarrow imports pandas too whenever it converts between Arrow and numpy (``to_numpy``, ``pa.array``, reading
a file's pandas metadata; there is no switch), so this module moves the data through Arrow's buffers
(``Array.buffers``, ``Array.from_buffers``), which pyarrow documents and which import nothing. It handles the
column types the pipeline's tables hold: integers and floats without missing values, and strings.
Stands in for ``pandas.read_parquet``/``DataFrame.to_parquet``; ``tests/test_parquet.py`` holds it to pandas' values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def column_names(path: str | Path) -> list[str]:
    """The names of the columns of the Parquet file ``path``, in order (read from its footer alone)."""
    return list(pq.ParquetFile(path).schema_arrow.names)


def read_columns(path: str | Path, names: Sequence[str]) -> dict[str, np.ndarray]:
    """The columns ``names`` of the Parquet file ``path``: numbers as numpy arrays of their own dtype, strings
    as object arrays of ``str``. A missing column or value is an error naming the file and the column."""
    parquet = pq.ParquetFile(path)
    missing = sorted(set(names) - set(parquet.schema_arrow.names))
    if missing:
        raise ValueError(f"{path}: no column(s) {missing}; it has {parquet.schema_arrow.names}")
    table = parquet.read(columns=list(names), use_pandas_metadata=False)
    return {name: _to_numpy(table.column(name).combine_chunks(), path, name) for name in names}


def _to_numpy(array: pa.Array, path: str | Path, name: str) -> np.ndarray:
    if array.null_count:
        raise ValueError(f"{path}: column {name!r} has {array.null_count} missing value(s)")
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return np.array(array.to_pylist(), dtype=object)
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        raise ValueError(f"{path}: column {name!r} has type {kind}; expected integers, floats or strings")
    dtype = np.dtype(kind.to_pandas_dtype())  # a numpy type for these types; imports nothing
    values = array.buffers()[1]
    if len(array) == 0 or values is None:
        return np.empty(0, dtype=dtype)
    # A view of Arrow's memory from the array's first row, copied so the caller owns a writable array.
    return np.frombuffer(values, dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize).copy()


def write_columns(path: str | Path, columns: Mapping[str, np.ndarray]) -> None:
    """Write equally long 1-d arrays as the columns of a Parquet file: integers and floats as they are, strings
    (``str`` or object arrays of ``str``) as Arrow large strings."""
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{path}: columns of different lengths {lengths}")
    arrays = [_to_arrow(np.asarray(values), name) for name, values in columns.items()]
    pq.write_table(pa.Table.from_arrays(arrays, names=list(columns)), path)


def _to_arrow(values: np.ndarray, name: str) -> pa.Array:
    if values.ndim != 1:
        raise ValueError(f"column {name!r} must be 1-d, got shape {values.shape}")
    if values.dtype.kind in "iuf":
        data = np.ascontiguousarray(values)
        return pa.Array.from_buffers(pa.from_numpy_dtype(data.dtype), len(data), [None, pa.py_buffer(data)])
    if values.dtype.kind in "UO" and all(isinstance(v, str) for v in values):
        encoded = [v.encode("utf-8") for v in values]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        array = pa.Array.from_buffers(pa.large_string(), len(encoded),
                                      [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])
        array.validate(full=True)
        return array
    raise ValueError(f"column {name!r} has dtype {values.dtype}; expected integers, floats or strings")
