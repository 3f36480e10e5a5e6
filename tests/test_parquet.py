"""Parquet columns through Arrow's buffers: the same values as pandas reads, errors that name the file and
column, and no pandas import."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from privtext.standins.parquet import read_columns, write_columns


def test_columns_round_trip_with_their_values_and_dtypes(tmp_path) -> None:
    columns = {
        "id": np.array(["a:1", "", "ünï:çødé", "z" * 300], dtype=object),
        "y": np.array([0, 3, -2**40, 2**62], dtype=np.int64),
        "z": np.array([1, 0, 1, 1], dtype=np.int32),
        "score": np.array([0.5, -1e-300, np.inf, 3.0], dtype=np.float64),
    }
    write_columns(tmp_path / "t.parquet", columns)
    back = read_columns(tmp_path / "t.parquet", ["score", "id", "y", "z"])
    assert list(back) == ["score", "id", "y", "z"]
    for name, values in columns.items():
        assert back[name].dtype == values.dtype and np.array_equal(back[name], values)
    assert back["y"].flags.writeable  # the caller owns its arrays
    assert pq.read_schema(tmp_path / "t.parquet").field("id").type == pa.large_string()


def test_a_pandas_written_file_in_several_row_groups_reads_as_pandas_reads_it(tmp_path) -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": [f"ex:{i}" for i in range(1000)], "y": rng.integers(0, 5, 1000),
                          "x": rng.normal(size=1000).astype(np.float32)})
    frame.to_parquet(tmp_path / "t.parquet", index=False, row_group_size=64)  # 16 chunks per column
    back = read_columns(tmp_path / "t.parquet", ["id", "y", "x"])
    assert back["id"].tolist() == frame["id"].tolist()
    assert np.array_equal(back["y"], frame["y"].to_numpy()) and back["y"].dtype == np.int64
    assert np.array_equal(back["x"], frame["x"].to_numpy()) and back["x"].dtype == np.float32


def test_empty_columns_read_and_write(tmp_path) -> None:
    write_columns(tmp_path / "t.parquet", {"id": np.array([], dtype=object), "y": np.array([], dtype=np.int64)})
    back = read_columns(tmp_path / "t.parquet", ["id", "y"])
    assert len(back["id"]) == 0 and back["y"].dtype == np.int64 and len(back["y"]) == 0


def test_a_missing_value_or_column_is_an_error_naming_the_file_and_column(tmp_path) -> None:
    path = tmp_path / "labels.parquet"
    pq.write_table(pa.table({"y": pa.array([1, None, 0], type=pa.int64()), "flag": pa.array([True, False, True])}), path)
    with pytest.raises(ValueError, match=r"labels\.parquet: column 'y' has 1 missing value"):
        read_columns(path, ["y"])
    with pytest.raises(ValueError, match=r"labels\.parquet: no column\(s\) \['z_sex'\]"):
        read_columns(path, ["z_sex"])
    with pytest.raises(ValueError, match=r"labels\.parquet: column 'flag' has type bool"):
        read_columns(path, ["flag"])


def test_writing_refuses_columns_it_cannot_store_faithfully(tmp_path) -> None:
    with pytest.raises(ValueError, match="different lengths"):
        write_columns(tmp_path / "t.parquet", {"a": np.zeros(2), "b": np.zeros(3)})
    with pytest.raises(ValueError, match="column 'mixed' has dtype object"):
        write_columns(tmp_path / "t.parquet", {"mixed": np.array(["a", 1], dtype=object)})
    assert not (tmp_path / "t.parquet").exists()


def test_reading_and_writing_import_no_pandas(tmp_path) -> None:
    """What the module is for: a grid point's jobs skip pandas' 0.5 s import."""
    code = f"""
import sys
import numpy as np
from privtext.standins.parquet import read_columns, write_columns
path = {str(tmp_path / 't.parquet')!r}
write_columns(path, {{"id": np.array(["a", "b"], dtype=object), "y": np.array([1, 0])}})
assert read_columns(path, ["id", "y"])["id"].tolist() == ["a", "b"]
print("pandas" in sys.modules)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "False"
