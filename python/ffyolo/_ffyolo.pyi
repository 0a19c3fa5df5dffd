"""
ffyolo's C++ reader, datasets and loader; use them through the package ffyolo.
"""

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
    options and reopens when unpickled (a split's Reader refuses a dataset packed again since: ValueError);
    after os.fork() it raises RuntimeError in the child.
    """

    def __init__(self, path: str | bytes | os.PathLike, *, backend: str = 'auto', direct_io: bool = False, verify_checksums: bool = True) -> None: ...

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
    def path(self) -> str | bytes:
        """
        What the reader was opened on: a shard, a folder of shards, or a packed dataset; bytes when given as bytes, else a str (os.fsdecode's, for a name that is not UTF-8).
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

    def __getstate__(self) -> tuple[str | bytes, str, str, bool, bool, str]: ...

    def __setstate__(self, arg: tuple[str | bytes | os.PathLike, str, str, bool, bool, str], /) -> None: ...

    def __repr__(self) -> str: ...

class Split:
    """
    One split of a packed Dataset (or several joined by '+').

    Its metadata comes from the split's label index, read once when the Split is made; the image
    bytes stay in the shards, which reader() opens. Sample i of every property is sample i of the
    reader. A Split, and each Reader it opens, holds the dataset's lock as the Dataset does, so that
    `yolo-pack --force` into it waits while they live.
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
        """
        The samples' file names as packed, e.g. '000000000009.jpg' (bytes if the dataset's path was).
        """

    def reader(self, *, backend: str = 'auto', direct_io: bool = False, verify_checksums: bool = True) -> Reader:
        """
        A Reader over the split's shards, each checked against the manifest; options as Reader's.
        """

    def __repr__(self) -> str: ...

class Dataset:
    """
    A packed dataset folder (NAME.ffr, made by yolo-pack).

    Dataset(path)

    Opening reads the manifest (dataset.yaml) and holds the dataset's lock shared until the Dataset,
    and every Split and split Reader made from it, is garbage collected, so that `yolo-pack --force`
    into it waits. dataset[name] or dataset.split(name) gives a Split.
    """

    def __init__(self, path: str | bytes | os.PathLike) -> None: ...

    @property
    def path(self) -> str | bytes:
        """
        The dataset folder: bytes when given as bytes, else a str (os.fsdecode's for a name that is not UTF-8).
        """

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
        The split `name` (several joined by '+' or ',' read as one, named 'a+b'); KeyError when there is none, ValueError when it names a split twice.
        """

    def __getitem__(self, name: str) -> Split: ...

    def __contains__(self, name: str) -> bool: ...

    def __repr__(self) -> str: ...

class Loader:
    """
    Batches of a packed dataset's split for YOLOv5, made by ffyolo's C++ loader.

    Loader(data, split=None, *, img=640, batch=16, workers=8, rank=0, world_size=1, augment=True,
           rect=False, hyp=None, cache=None, seed=0, shuffle=True, drop_last=False, prefetch=4,
           single_cls=False, augmentation='yolov5', ultralytics_workers=8, memory_hooks=None)

    Iterating gives (imgs, targets, paths, shapes) per batch, YOLOv5 v7.0's collate format as numpy:
    imgs uint8 (B, 3, H, W) RGB, viewing the loader's memory (no copy; torch.from_numpy shares it);
    targets float32 (n, 6): image index in the batch, class, x, y, w, h normalized; paths, one per
    image; shapes, None for a mosaic, else ((h0, w0), ((h / h0, w / w0), (padw, padh))).

    augment=True trains (mosaic, random perspective, HSV, flips, mixup by `hyp`); augment=False
    gives validation's letterboxed rectangular batches. rect=True trains on rectangular batches
    without mosaic (one rank; in the ultralytics8 mode any number, and batches all of one shape
    shuffled, as Ultralytics 8 does). split is one split or several joined by '+' or ',' (read as one, as
    the tools' --split); it defaults to the data YAML's train: (augment) or val: recorded at pack time,
    else train* or val*. hyp is a hyp YAML path or a dict of its keys (keys left out, or hyp=None: those
    of hyp.scratch-low). cache='ram' or 'disk' reads the split's pixel cache, built first when missing,
    instead of decoding JPEGs. augmentation='ultralytics8' makes the batches as the `ultralytics`
    package 8.4 (YOLOv8/YOLO11) makes them (docs/loader.md, "Ultralytics 8's augmentation"): mosaic
    tiles from the buffers of `ultralytics_workers` DataLoader workers (its `workers`), load_image's
    sizes, validation boxes and (padw, padh) at the letterbox's rounded left and top; its pixel cache
    holds load_image's images as Ultralytics 8 makes them, and cache='ram' takes mosaic tiles from the
    whole split, as Ultralytics' cache='ram' does (no buffer); a hyp dict may add its cutmix (CutMix's
    probability) and bgr (that of a training image's planes B, G, R instead of R, G, B), which the
    state's hyp then names.
    rank and world_size give this
    process its share of each epoch, as torch's DistributedSampler (validation: every world_size-th
    batch, so that the ranks read every sample once; in the ultralytics8 mode validation and rect
    training read runs of consecutive batches, as its ContiguousDistributedSampler). Every sample's randomness comes from (seed,
    epoch, rank, position): the batches do not depend on `workers`.

    A batch stays intact while Python holds it: the loader takes new memory rather than reuse it.
    Iteration stops at the epoch's end and the next iteration runs the next epoch; set_epoch(e)
    starts epoch e, and state_dict()/load_state_dict() resume exactly mid-epoch. Waiting for a
    batch releases the GIL. After os.fork() a Loader raises RuntimeError in the child.

    memory_hooks, a pair (register, unregister), is called as register(address, size) for each batch
    buffer the loader allocates and unregister(address) before it frees one (ffyolo.torch pins them so
    for CUDA copies).
    """

    def __init__(self, data: str | bytes | os.PathLike, split: str | None = None, *, img: int = 640, batch: int = 16, workers: int = 8, rank: int = 0, world_size: int = 1, augment: bool = True, rect: bool = False, hyp: object | None = None, cache: str | None = None, seed: int = 0, shuffle: bool = True, drop_last: bool = False, prefetch: int = 4, single_cls: bool = False, augmentation: str = 'yolov5', ultralytics_workers: int = 8, memory_hooks: tuple[object, object] | None = None) -> None: ...

    def __len__(self) -> int:
        """The batches of an epoch (this rank's)."""

    def __iter__(self) -> object: ...

    def __next__(self) -> tuple: ...

    def set_epoch(self, epoch: int) -> None:
        """
        The next iteration runs `epoch` from its first batch (torch's DistributedSampler.set_epoch).
        """

    def state_dict(self) -> dict:
        """
        Where the loader stands (the epoch and the next batch) and what its batches are made from: the dataset's identity and the options a resume must share.
        """

    def load_state_dict(self, state: dict) -> None:
        """
        The next iteration continues where `state` (from state_dict) stood: the batches an uninterrupted run would have given. ValueError, naming what differs, for the state of a loader made from another dataset or with other options, or of an older ffyolo, which recorded less.
        """

    @property
    def epoch(self) -> int:
        """The epoch the next batch belongs to."""

    @property
    def batch_index(self) -> int:
        """The number of the next batch in its epoch."""

    @property
    def split(self) -> str:
        """The split read, e.g. 'train2017'."""

    @property
    def batch_size(self) -> int:
        """Images per batch (the last one may have fewer)."""

    @property
    def samples(self) -> int:
        """The samples of an epoch (this rank's)."""

    @property
    def shuffled(self) -> bool:
        """
        Whether each epoch shuffles its samples: shuffle in training, but not over rect batches of several shapes.
        """

    @property
    def bad_samples(self) -> int:
        """
        Corrupt samples met so far (training replaces each by another; validation raises).
        """

    @property
    def bad_sample_reports(self) -> list[str]:
        """
        What was wrong with each corrupt sample: the split, the sample, its file and why.
        """

    @property
    def decode_stats(self) -> dict:
        """
        Since the loader was made: images decoded ('decodes'), and the decoded image store's reads served ('store_hits'), reads it was too full to hold ('store_full'), and most images and bytes it held ('peak_images', 'peak_bytes'); the store is Ultralytics 8's mosaic training's.
        """

    @property
    def closed(self) -> bool:
        """Whether close() was called."""

    def close(self) -> None:
        """
        Stops the worker threads; batches Python still holds keep their memory.
        """

    def __enter__(self) -> object: ...

    def __exit__(self, *args) -> None: ...

    def __repr__(self) -> str: ...

def load_image_size(w0: int, h0: int, img: int, augmentation: str = 'yolov5') -> tuple[int, int]:
    """
    The (w, h) load_image resizes a w0 x h0 image to at `img` pixels, by `augmentation`'s rule (before a letterbox or a mosaic).
    """
