"""ffyolo's C++ reader and datasets; use them through the package ffyolo."""

from collections.abc import Sequence
import os

from ffyolo import CorruptionError as CorruptionError


class Reader:
    """
    The samples of FFRecord shards, read by index.

    Reader(path, *, backend="auto", direct_io=False, verify_checksums=True)

    path is one shard (.ffr file) or a folder whose *.ffr files, in name order, are read as one
    sequence. backend is "auto" (io_uring when the kernel allows it, else pread), "io_uring", "pread"
    or "mmap"; all give the same bytes. direct_io reads with O_DIRECT (not with mmap);
    verify_checksums checks each sample's CRC-32 and raises CorruptionError on a mismatch.

    Reads release the GIL, so several threads may read at once. A Reader pickles by its path and
    options and reopens when unpickled; after os.fork() it raises RuntimeError in the child.
    """

    def __init__(self, path: str | os.PathLike, *, backend: str = 'auto', direct_io: bool = False, verify_checksums: bool = True) -> None: ...

    def __len__(self) -> int:
        """The number of samples."""

    def read(self, index: int) -> bytes:
        """Sample `index` (negative counts from the end)."""

    def read_batch(self, indices: Sequence[int]) -> list[bytes]:
        """
        The samples at `indices`, in order (repeats allowed), read with one submission.
        """

    def __getitem__(self, index: int) -> bytes: ...

    @property
    def backend(self) -> str:
        """The backend in use: 'io_uring', 'pread' or 'mmap'."""

    @property
    def path(self) -> str:
        """
        What the reader was opened on: a shard, a folder of shards, or a packed dataset.
        """

    @property
    def split(self) -> str | None:
        """The split of the packed dataset `path` read, or None."""

    @property
    def closed(self) -> bool:
        """Whether close() was called."""

    def close(self) -> None:
        """Closes the shards; reads under way finish first."""

    def __enter__(self) -> object: ...

    def __exit__(self, *args) -> None: ...

    def __getstate__(self) -> tuple[str, str, str, bool, bool]: ...

    def __setstate__(self, arg: tuple[str, str, str, bool, bool], /) -> None: ...

    def __repr__(self) -> str: ...

class Split:
    """
    One split of a packed Dataset (or several joined by '+').

    Its metadata comes from the split's label index, read once when the Split is made; the image
    bytes stay in the shards, which reader() opens. Sample i of every property is sample i of the
    reader.
    """

    @property
    def name(self) -> str:
        """The split's name, e.g. 'train2017'."""

    def __len__(self) -> int:
        """The number of samples."""

    @property
    def labels(self) -> list:
        """
        Per sample an (n, 5) float32 array of class, x, y, w, h (box centre and size normalized to the image), crowd regions left out: Ultralytics' dataset.labels.
        """

    @property
    def image_ids(self) -> object:
        """
        The samples' image ids, int64 (COCO's, or numbered from the file names).
        """

    @property
    def shapes(self) -> object:
        """
        An (n, 2) int64 array of each stored image's width, height (Ultralytics' order).
        """

    @property
    def files(self) -> list:
        """The samples' file names as packed, e.g. '000000000009.jpg'."""

    def reader(self, *, backend: str = 'auto', direct_io: bool = False, verify_checksums: bool = True) -> Reader:
        """
        A Reader over the split's shards, each checked against the manifest; options as Reader's.
        """

    def __repr__(self) -> str: ...

class Dataset:
    """
    A packed dataset folder (NAME.ffr, made by yolo-pack).

    Dataset(path)

    Opening reads the manifest (dataset.yaml) and holds the dataset's lock shared until the Dataset
    is garbage collected, so that `yolo-pack --force` into it waits. dataset[name] or
    dataset.split(name) gives a Split.
    """

    def __init__(self, path: str | os.PathLike) -> None: ...

    @property
    def path(self) -> str:
        """The dataset folder."""

    @property
    def splits(self) -> list[str]:
        """The names of the splits, in the manifest's order."""

    @property
    def names(self) -> list[str]:
        """Class index -> class name."""

    @property
    def nc(self) -> int:
        """The number of classes."""

    def split(self, name: str) -> Split:
        """
        The split `name` (several joined by '+' read as one); KeyError when there is none.
        """

    def __getitem__(self, name: str) -> Split: ...

    def __contains__(self, name: str) -> bool: ...

    def __repr__(self) -> str: ...
