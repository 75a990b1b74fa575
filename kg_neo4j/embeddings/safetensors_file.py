"""Read a ``.safetensors`` file into numpy arrays without torch or the safetensors package.

The format is an 8-byte little-endian header length, a JSON header mapping each tensor to its
dtype, shape and byte range, then the raw little-endian data
(https://huggingface.co/docs/safetensors).  The file is memory-mapped: a tensor's pages are
read only when used, so the word-embedding table (half of MiniLM's file) costs only the rows a
text touches.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy.typing as npt

#: safetensors dtype -> numpy dtype string (little-endian)
_DTYPES = {
    "F32": "<f4",
    "F16": "<f2",
    "F64": "<f8",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}

#: A header larger than this is not a model we read (the format's own limit is 100 MB).
_MAX_HEADER = 100 * 1024 * 1024


class SafetensorsError(ValueError):
    """The file is not a safetensors file this reader understands."""


def read_header(path: Path) -> dict[str, dict[str, Any]]:
    """Tensor name -> ``{"dtype", "shape", "data_offsets"}`` (the ``__metadata__`` entry left out)."""
    with path.open("rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise SafetensorsError(f"{path}: shorter than a safetensors header")
        (size,) = struct.unpack("<Q", raw)
        if size > _MAX_HEADER:
            raise SafetensorsError(f"{path}: header of {size} bytes is too large")
        header = json.loads(f.read(size))
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: header is not a JSON object")
    header.pop("__metadata__", None)
    return header


def load(path: Path, names: list[str] | None = None) -> dict[str, npt.NDArray[Any]]:
    """The tensors ``names`` (default: all) as read-only arrays over a memory map of the file."""
    import numpy as np  # here, so that reading a header (numpy_support) stays numpy-free

    header = read_header(path)
    with path.open("rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    out: dict[str, npt.NDArray[Any]] = {}
    for name in names if names is not None else list(header):
        entry = header.get(name)
        if entry is None:
            raise SafetensorsError(f"{path}: no tensor {name!r}")
        code = _DTYPES.get(entry.get("dtype", ""))
        if code is None:
            raise SafetensorsError(
                f"{path}: tensor {name!r} has dtype {entry.get('dtype')!r}, not one numpy reads"
            )
        dtype = np.dtype(code)
        start, end = (int(v) for v in entry["data_offsets"])
        shape = tuple(int(d) for d in entry["shape"])
        if end - start != dtype.itemsize * int(np.prod(shape, dtype=np.int64)) or end > data.shape[0]:
            raise SafetensorsError(f"{path}: tensor {name!r} has a byte range that does not fit its shape")
        out[name] = data[start:end].view(dtype).reshape(shape)
    return out
