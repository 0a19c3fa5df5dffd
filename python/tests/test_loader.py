"""ffyolo.Loader on coco128 packed by yolo-pack: its batches against the C++ loader's (the digests
`yolo-ffr batches` prints), exact resume, ranks, held batches, bad inputs and fork."""

import os
import re
import subprocess
import sys
import threading
import time
import zlib

import numpy as np
import pytest

import ffyolo
from conftest import pack, tool

IMG, BATCH, SEED = 128, 8, 3
DIGEST = re.compile(r"batch (\d+): (\d+) images (\d+)x(\d+), (\d+) targets, images crc32 ([0-9a-f]{8}), "
                    r"targets crc32 ([0-9a-f]{8})")


def yolo_ffr_digests(data, *args) -> list[tuple]:
    """What the C++ loader gives: `yolo-ffr batches` per batch (index, size, w, h, targets, crcs)."""
    out = subprocess.run([str(tool("yolo-ffr")), "batches", str(data), "--img", str(IMG), "--batch", str(BATCH),
                          "--seed", str(SEED), *args], check=True, capture_output=True, text=True).stdout
    return [tuple(int(v) if k < 5 else int(v, 16) for k, v in enumerate(m.groups()))
            for m in map(DIGEST.fullmatch, out.splitlines())]


def digest(index: int, imgs: np.ndarray, targets: np.ndarray) -> tuple:
    b, c, h, w = imgs.shape
    assert c == 3 and imgs.dtype == np.uint8 and imgs.flags.c_contiguous
    assert targets.dtype == np.float32 and targets.shape[1:] == (6,)
    return (index, b, w, h, len(targets), zlib.crc32(imgs), zlib.crc32(targets.astype("<f4").tobytes()))


def loader_digests(loader: ffyolo.Loader) -> list[tuple]:
    first = loader.batch_index
    return [digest(first + i, imgs, targets) for i, (imgs, targets, _, _) in enumerate(loader)]


def make(data, **options) -> ffyolo.Loader:
    return ffyolo.Loader(data, img=IMG, batch=BATCH, seed=SEED, **options)


@pytest.mark.parametrize("workers", [1, 3])
def test_training_batches_are_the_cpp_loaders(coco128, workers):
    loader = make(coco128, workers=workers)
    assert len(loader) == 16 and loader.samples == 128 and loader.split == "train2017"
    assert loader_digests(loader) == yolo_ffr_digests(coco128)


def test_validation_batches_are_the_cpp_loaders_with_yolov5s_shapes(coco128):
    loader = make(coco128, augment=False, workers=2)
    expected = yolo_ffr_digests(coco128, "--val")
    got = []
    for i, (imgs, targets, paths, shapes) in enumerate(loader):
        got.append(digest(i, imgs, targets))
        assert len(paths) == len(shapes) == len(imgs)
        for path, ((h0, w0), ((rh, rw), (padw, padh))) in zip(paths, shapes):
            assert os.path.basename(path).endswith(".jpg") and os.path.dirname(path).endswith("train2017")
            assert h0 > 0 and w0 > 0 and 0 < rh <= 1 and 0 < rw <= 1 and padw >= 0 and padh >= 0
    assert got == expected


def test_pixel_cache_batches_are_the_cpp_loaders(coco128):
    loader = make(coco128, cache="ram", workers=2)
    assert loader_digests(loader) == yolo_ffr_digests(coco128, "--cache", "ram")


def test_epochs_continue_and_set_epoch_restarts(coco128):
    loader = make(coco128, workers=2)
    epoch0 = loader_digests(loader)
    assert loader.epoch == 1 and loader.batch_index == 0
    epoch1 = loader_digests(loader)
    assert epoch1 == yolo_ffr_digests(coco128, "--epoch", "1") != epoch0
    loader.set_epoch(0)
    assert loader_digests(loader) == epoch0


def test_state_dict_resumes_mid_epoch(coco128):
    whole = loader_digests(make(coco128, workers=2))
    first = make(coco128, workers=2)
    it = iter(first)
    for _ in range(5):
        next(it)
    state = first.state_dict()
    assert state["epoch"] == 0 and state["batch"] == 5
    first.close()
    resumed = make(coco128, workers=3)
    resumed.load_state_dict(state)
    assert loader_digests(resumed) == whole[5:]
    with pytest.raises(ValueError, match="seed"):
        ffyolo.Loader(coco128, img=IMG, batch=BATCH, seed=SEED + 1).load_state_dict(state)


def test_two_ranks_read_disjoint_halves(coco128):
    paths = []
    for rank in range(2):
        loader = make(coco128, rank=rank, world_size=2, workers=2, shuffle=False, hyp={"mosaic": 0.0})
        assert loader.samples == 64
        paths.append([p for _, _, batch_paths, _ in loader for p in batch_paths])
    assert len(paths[0]) == len(paths[1]) == 64
    assert not set(paths[0]) & set(paths[1])
    assert len(set(paths[0]) | set(paths[1])) == 128


def test_validation_ranks_read_their_share_of_the_batches(coco128):
    """augment=False with world_size=3 read the whole split on every rank: each rank now reads every third batch
    of the one-rank loader (the C++ loader's, as `yolo-ffr batches --val --rank`), and together every sample
    once."""
    whole = loader_digests(make(coco128, augment=False, workers=2))
    paths = []
    for rank in range(3):
        loader = make(coco128, augment=False, rank=rank, world_size=3, workers=2)
        mine = []
        for i, (imgs, targets, batch_paths, _) in enumerate(loader):
            mine.append(digest(i, imgs, targets))
            paths += batch_paths
        assert [d[1:] for d in mine] == [d[1:] for d in whole[rank::3]]
        assert mine == yolo_ffr_digests(coco128, "--val", "--rank", str(rank), "--world-size", "3")
        assert loader.samples == sum(d[1] for d in mine)
    assert len(paths) == len(set(paths)) == 128


def test_held_batches_stay_intact(coco128):
    """Batches kept past the ring's depth keep their pixels while the loader runs on, and no wait hangs."""
    expected = yolo_ffr_digests(coco128)
    loader = make(coco128, workers=2, prefetch=2)
    kept = list(loader)  # all 16 batches held at once: the ring is 2 deep
    assert [digest(i, imgs, targets) for i, (imgs, targets, _, _) in enumerate(kept)] == expected
    loader.close()
    imgs = kept[3][0]
    assert digest(3, imgs, kept[3][1]) == expected[3]  # still readable after close


def test_a_dropped_batch_goes_back_to_the_ring(coco128):
    loader = make(coco128, workers=2, prefetch=2)
    for imgs, _, _, _ in loader:
        imgs[:] = 0  # the caller's to write while it holds them
    assert loader_digests(make(coco128, workers=2)) == yolo_ffr_digests(coco128)


def test_waiting_for_a_batch_releases_the_gil(coco128):
    """Another Python thread runs on while the loader is waited for: it counts as fast as while this thread
    sleeps (which releases the GIL). Were the GIL held in the wait, it would barely count at all."""
    ticks = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1

    def rate(work) -> float:
        start, t0 = ticks[0], time.perf_counter()
        work()
        return (ticks[0] - start) / (time.perf_counter() - t0)

    loader = ffyolo.Loader(coco128, img=640, batch=16, workers=1)
    thread = threading.Thread(target=count)
    thread.start()
    try:
        sleeping = rate(lambda: time.sleep(0.3))
        loading = rate(lambda: [None for _ in loader])
    finally:
        stop.set()
        thread.join()
    assert loading > 0.3 * sleeping, (loading, sleeping)


@pytest.mark.parametrize("options, error, words", [
    ({"img": 100}, ValueError, "multiple of 32"),
    ({"batch": 0}, ValueError, "positive"),
    ({"rank": 2, "world_size": 2}, ValueError, "rank=2"),
    ({"cache": "gpu"}, ValueError, "cache='gpu'"),
    ({"hyp": {"mosaic": 1.0, "no_such_key": 1}}, ValueError, "no_such_key"),
    ({"hyp": "no/such/hyp.yaml"}, FileNotFoundError, "no/such/hyp.yaml"),
    # These said "Resource temporarily unavailable", raised std::bad_alloc and took bytes as text ("b'...'").
    ({"workers": 100000}, ValueError, "workers 100000: more than 1024 loader threads"),
    ({"prefetch": 10**9}, ValueError, "prefetch 1000000000: a ring of 1000000000 batches of"),
    ({"hyp": b"no/such/hyp.yaml"}, FileNotFoundError, "no/such/hyp.yaml: "),
    ({"hyp": 3}, TypeError, "hyp=3: expected a dict of hyperparameters or a hyp YAML's path"),
    ({"augmentation": "v8"}, ValueError, "augmentation 'v8': expected yolov5 or ultralytics8"),
    ({"augmentation": "ultralytics8", "ultralytics_workers": 0}, ValueError, "positive"),
    ({"hyp": {"cutmix": 0.5}}, ValueError, "cutmix 0.5: Ultralytics 8's, built in the ultralytics8 augmentation only"),
    ({"augmentation": "ultralytics8", "hyp": {"bgr": 2}}, ValueError, "bgr 2: a probability, in [0, 1]"),
])
def test_bad_options_raise_naming_them(coco128, options, error, words):
    with pytest.raises(error, match=re.escape(words)):
        ffyolo.Loader(coco128, **options)


def test_ultralytics_8s_pixel_cache_is_its_own_and_ram_takes_tiles_from_the_whole_split(coco128):
    """In the ultralytics8 mode the pixel cache holds Ultralytics 8's load_image images, in its own folder (a
    YOLOv5 cache beside it is not read); cache='disk' gives the batches of the decoding loader where no image
    shrinks by 2 or more (the cache holds whole decodes, the loader decodes those at a smaller DCT scale), and
    cache='ram' other mosaics (tiles from the whole split, as Ultralytics' cache='ram'), the same each time."""
    def make(**options):
        return ffyolo.Loader(coco128, split="train2017", img=64, batch=BATCH, seed=SEED, workers=2, **options)

    options = dict(augmentation="ultralytics8")
    make(cache="ram").close()  # a YOLOv5 cache of the same split and size
    assert (coco128 / "cache" / "train2017-64" / "cache.yaml").read_text().count("resize: train") == 1
    disk = make(cache="disk", **options)
    assert disk.state_dict()["mosaic_buffer"] is True
    assert (coco128 / "cache" / "train2017-64-u8" / "cache.yaml").read_text().count("resize: ultralytics8") == 1
    # At 64 every coco128 image shrinks 8 times or more: the loader decodes it smaller, so compare the records.
    decoded = make(**options)
    for (a_imgs, a_targets, a_paths, a_shapes), (b_imgs, b_targets, b_paths, b_shapes) in zip(disk, decoded):
        assert a_paths == b_paths and a_shapes == b_shapes and a_imgs.shape == b_imgs.shape
        assert np.array_equal(a_targets, b_targets)
    ram = make(cache="ram", **options)
    assert ram.state_dict()["mosaic_buffer"] is False
    assert loader_digests(ram) != loader_digests(make(cache="disk", **options))
    assert loader_digests(make(cache="ram", **options)) == loader_digests(make(cache="ram", **options))


def test_yolo_ffr_builds_the_cache_ultralytics_8s_loader_reads(coco128):
    """`yolo-ffr cache --augmentation ultralytics8` builds the -u8 cache; the loader in that mode reads it as it
    is (the next build finds it complete), and other names are refused naming them."""
    def cache(*args):
        return subprocess.run([str(tool("yolo-ffr")), "cache", str(coco128), "--img", "96", *args],
                              capture_output=True, text=True)

    built = cache("--augmentation", "ultralytics8")
    assert built.returncode == 0 and "train2017-96-u8: 128 images" in built.stdout, built
    ffyolo.Loader(coco128, split="train2017", img=96, augmentation="ultralytics8", cache="disk").close()
    assert "already complete" in cache("--augmentation", "ultralytics8").stdout
    refused = cache("--augmentation", "v8")
    assert refused.returncode != 0 and "augmentation 'v8': expected yolov5 or ultralytics8" in refused.stderr


RANK_READING_CACHE = """
import sys
from pathlib import Path
import ffyolo
data, rank = sys.argv[1], int(sys.argv[2])
loader = ffyolo.Loader(data, split="train2017", img=320, batch=16, workers=1, rank=rank, world_size=2,
                       augmentation="ultralytics8", cache="ram")
for _ in loader:
    pass
rss = pss = 0
mapped = False
for line in Path("/proc/self/smaps").read_text().splitlines():
    key, _, rest = line.partition(" ")
    if not key.endswith(":"):  # a mapping's first line
        mapped = "/cache/train2017-320-u8/PART_" in rest
    elif mapped and key in ("Rss:", "Pss:"):
        rss, pss = (rss + int(rest.split()[0]), pss) if key == "Rss:" else (rss, pss + int(rest.split()[0]))
print(rss, pss, flush=True)
sys.stdin.read()  # held until both ranks have measured
"""


def test_two_ranks_share_one_copy_of_ultralytics_8s_pixel_cache(coco128):
    """Two ranks of the ultralytics8 mode with cache='ram' map the same cache shards: together they hold one copy
    (their PSS of the mappings adds up to at most the shards' size) while each maps most of it (RSS)."""
    ffyolo.Loader(coco128, split="train2017", img=320, augmentation="ultralytics8", cache="ram").close()  # built once
    shards = sum(f.stat().st_size for f in (coco128 / "cache" / "train2017-320-u8").glob("PART_*")) / 1024
    ranks = [subprocess.Popen([sys.executable, "-c", RANK_READING_CACHE, str(coco128), str(r)], text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE) for r in range(2)]
    try:
        measured = [tuple(map(int, p.stdout.readline().split())) for p in ranks]
    finally:
        for p in ranks:
            p.communicate("")
    assert all(p.returncode == 0 for p in ranks)
    rss, pss = (sum(m[k] for m in measured) for k in (0, 1))
    assert all(m[0] > 0.5 * shards for m in measured), (measured, shards)
    assert pss <= shards + 64 and rss > 1.5 * pss, (measured, shards)


def test_ultralytics_8s_augmentation_makes_other_batches_the_same_each_time(coco128):
    """The mode reaches the C++ loader (its batches are not YOLOv5's), and its batches depend on the buffers'
    worker count but not on the threads making them (docs/loader.md: the buffer plan)."""
    v8 = loader_digests(make(coco128, workers=1, augmentation="ultralytics8"))
    assert v8 == loader_digests(make(coco128, workers=3, augmentation="ultralytics8"))
    assert v8 != loader_digests(make(coco128, workers=1))
    assert v8 != loader_digests(make(coco128, workers=1, augmentation="ultralytics8", ultralytics_workers=2))


def test_ultralytics_8s_cutmix_and_bgr_reach_the_loader(coco128):
    """hyp's cutmix and bgr, Ultralytics 8's own keys, are the mode's: its state names them, and each changes the
    batches."""
    plain = make(coco128, workers=1, augmentation="ultralytics8")
    assert {k: plain.state_dict()["hyp"][k] for k in ("cutmix", "bgr")} == {"cutmix": 0.0, "bgr": 0.0}
    assert "cutmix" not in make(coco128, workers=1).state_dict()["hyp"]  # not YOLOv5's
    digests = loader_digests(plain)
    for key in ("cutmix", "bgr"):
        loader = make(coco128, workers=1, augmentation="ultralytics8", hyp={key: 0.5})
        assert loader.state_dict()["hyp"][key] == 0.5
        assert loader_digests(loader) != digests, key


def test_ultralytics_8s_augmentation_decodes_about_one_image_a_sample(coco128):
    """Its mosaic tiles come from the decoded image store, as Ultralytics' from its buffers (docs/loader.md);
    YOLOv5's mode decodes each tile the warp samples."""
    v8, v5 = make(coco128, workers=2, augmentation="ultralytics8"), make(coco128, workers=2)
    loader_digests(v8), loader_digests(v5)
    assert v8.decode_stats["decodes"] <= 1.25 * v8.samples and v8.decode_stats["store_hits"] > v8.samples
    assert 0 < v8.decode_stats["peak_bytes"] <= 2 << 30
    assert v5.decode_stats["decodes"] > 2 * v5.samples and v5.decode_stats["store_hits"] == 0


def test_load_image_size_follows_each_modes_rule():
    """581 x 400 at 640: YOLOv5 v7.0 truncates (639.99... gives 639), Ultralytics 8 rounds up and caps."""
    assert ffyolo._ffyolo.load_image_size(581, 400, 640) == (639, 440)
    assert ffyolo._ffyolo.load_image_size(581, 400, 640, "ultralytics8") == (640, 441)
    with pytest.raises(ValueError, match="augmentation 'v8'"):
        ffyolo._ffyolo.load_image_size(581, 400, 640, "v8")


def test_no_hyp_keys_are_hyp_scratch_lows(coco128):
    """hyp={} (create_dataloader's hyp=None with augment) said "expected a mapping"."""
    assert loader_digests(make(coco128, workers=2, hyp={})) == yolo_ffr_digests(coco128)


def test_a_state_dict_of_other_types_is_refused_naming_the_entry(coco128):
    """batch=2.0 or epoch='1' raised RuntimeError: std::bad_cast."""
    loader = make(coco128, workers=1)
    for key, value in (("batch", 2.0), ("epoch", "1")):
        state = dict(loader.state_dict(), **{key: value})
        with pytest.raises(ValueError, match=re.escape(f"state_dict's {key} is {value!r}: not an integer")):
            loader.load_state_dict(state)


def test_a_state_with_a_bool_an_epoch_past_the_bound_or_an_unknown_entry_is_refused(coco128):
    """batch=True was taken as 1, epoch 2**63-1 wrapped to a negative epoch after it, and keys this version does
    not know (at the top or in hyp) were ignored (#45's hostile pass)."""
    loader = make(coco128, workers=1)
    state = loader.state_dict()
    with pytest.raises(ValueError, match=re.escape("state_dict's batch is True: not an integer")):
        loader.load_state_dict(dict(state, batch=True))
    for epoch in (2**63 - 1, 2**31):
        with pytest.raises(ValueError, match=re.escape(f"state_dict's epoch {epoch} is out of range [0, 2147483647]")):
            loader.load_state_dict(dict(state, epoch=epoch))
    with pytest.raises(ValueError, match=re.escape("epoch 2147483648 is out of range")):
        loader.set_epoch(2**31)
    with pytest.raises(ValueError, match=re.escape("state_dict has 'mosaic_buffers', which this loader does not")):
        loader.load_state_dict(dict(state, mosaic_buffers=64))
    with pytest.raises(ValueError, match=re.escape("state_dict's hyp has 'cutmix', which this loader does not")):
        loader.load_state_dict(dict(state, hyp=dict(state["hyp"], cutmix=0.0)))
    loader.load_state_dict(dict(state, epoch=2**31 - 1))  # the bound itself is an epoch


@pytest.mark.parametrize("option, value, entry", [
    ("shuffle", False, "shuffle"),
    ("rect", True, "rect"),
    ("img", IMG + 32, "img"),
    ("hyp", {"degrees": 5.0}, "hyp['degrees']"),
    ("single_cls", True, "single_cls"),
    ("drop_last", True, "drop_last"),
    ("augmentation", "ultralytics8", "augmentation"),
    ("ultralytics_workers", 2, "ultralytics_workers"),
])
def test_the_state_of_a_loader_made_otherwise_is_refused_naming_what_differs(coco128, option, value, entry):
    """load_state_dict took the state of a loader with another shuffle, rect, img or hyp, then gave batches the
    uninterrupted run would not have given."""
    options = dict(img=IMG, batch=BATCH, seed=SEED, workers=1)
    state = ffyolo.Loader(coco128, **dict(options, **{option: value})).state_dict()
    with pytest.raises(ValueError, match=re.escape(f"state_dict is of another loader: its {entry} is ")):
        ffyolo.Loader(coco128, **options).load_state_dict(state)


def test_the_state_of_another_pack_or_an_older_ffyolo_is_refused(two_splits_source, tmp_path):
    """A state of another dataset (here the same images packed otherwise: another manifest), and one without
    the entries this ffyolo records, which cannot be checked: both refused, saying why."""
    first, second = tmp_path / "first.ffr", tmp_path / "second.ffr"
    pack(two_splits_source, first)
    pack(two_splits_source, second, "--shards", "2")
    state = make(first, workers=1).state_dict()
    make(first, workers=1).load_state_dict(state)
    with pytest.raises(ValueError, match="state_dict is of another loader: its dataset is '[0-9a-f]{8}'"):
        make(second, workers=1).load_state_dict(state)
    old = {key: state[key] for key in ("epoch", "batch", "split", "seed", "batch_size", "rank", "world_size",
                                        "augment")}
    with pytest.raises(ValueError, match=re.escape("state_dict has no 'dataset': a state of an older ffyolo")):
        make(first, workers=1).load_state_dict(old)


def test_a_set_of_splits_is_read_as_the_tools_read_it(two_splits):
    """Loader(data) read the set a+b the data YAML's train: lists, but Loader(data, "a+b") raised KeyError:
    a split given goes through the tools' resolver too (Dataset::ResolveSplit)."""
    default = make(two_splits, workers=1)
    assert default.split == "a+b" and default.samples == 8
    expected = loader_digests(default)
    assert expected == yolo_ffr_digests(two_splits, "--split", "a,b")
    for name in ("a+b", "a,b", "b+a"):
        loader = make(two_splits, split=name, workers=1)
        assert loader.split == "a+b"
        assert loader_digests(loader) == expected
    with pytest.raises(ValueError, match=re.escape("'a+a' names a split twice")):
        make(two_splits, split="a+a")
    with pytest.raises(KeyError, match="no split 'c'"):
        make(two_splits, split="a+c")


def test_missing_data_and_unknown_split(coco128, tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.ffr"):
        ffyolo.Loader(tmp_path / "nowhere.ffr")
    with pytest.raises(KeyError, match="val2017"):
        ffyolo.Loader(coco128, "val2017")


def test_closed_loader_and_context_manager(coco128):
    with make(coco128, workers=1) as loader:
        next(iter(loader))
    assert loader.closed
    with pytest.raises(ValueError, match="closed"):
        next(loader)
    assert "closed" in repr(loader)


def test_a_forked_child_is_refused(coco128):
    loader = make(coco128, workers=1)
    pid = os.fork()
    if pid == 0:  # the child: must raise, never use the parent's threads
        try:
            next(loader)
            code = 1
        except RuntimeError as e:
            code = 0 if "fork" in str(e) else 2
        except BaseException:
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert digest(0, *next(loader)[:2]) == yolo_ffr_digests(coco128)[0]  # the parent's loader runs on


def test_a_corrupt_sample_is_reported_by_training_and_raised_by_validation(coco128, tmp_path):
    """A flipped byte in sample 5's image: validation raises naming the shard and the sample; training
    replaces it (drawn from its seed), counts it and says what was wrong."""
    import shutil
    import struct

    data = tmp_path / "corrupt.ffr"
    shutil.copytree(coco128, data)
    shard = sorted((data / "train2017").glob("*.ffr"))[0]
    raw = bytearray(shard.read_bytes())
    (n,) = struct.unpack_from("<q", raw, 4)
    offsets = struct.unpack_from(f"<{n}q", raw, 12 + 4 * n)
    raw[offsets[5] + 500] ^= 0xFF  # inside the record's JPEG, the sample's CRC unchanged
    shard.write_bytes(bytes(raw))
    error = rf"{re.escape(shard.name)} sample 5 \(index 5\): checksum"
    validation = make(data, augment=False, workers=1, prefetch=1)
    with pytest.raises(ffyolo.CorruptionError, match=error):
        for _ in validation:
            pass
    # Advanced again, more often than its ring has batches, it raises again: the error ends the epoch until
    # set_epoch. In a thread, so that a loader waiting for a batch that never comes fails here, not hangs.
    again = []

    def advance():
        for _ in range(3):
            try:
                next(validation)
            except ffyolo.CorruptionError as e:
                again.append(str(e))

    thread = threading.Thread(target=advance, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "next() after the error waits instead of raising"
    assert len(again) == 3 and all(re.search(error, e) for e in again)
    training = make(data, workers=2)
    batches = sum(1 for _ in training)
    assert batches == 16 and training.bad_samples >= 1
    assert len(training.bad_sample_reports) == 1 and "sample 5" in training.bad_sample_reports[0]


def test_memory_hooks_see_every_batch_buffer_made_and_freed(coco128):
    """ffyolo.torch pins the ring's buffers through these hooks: each buffer is registered once when made
    and unregistered once before it is freed, the ring's at close, a handed-over one when its array goes."""
    registered, unregistered = {}, []
    hooks = (lambda address, size: registered.__setitem__(address, size), unregistered.append)
    loader = make(coco128, workers=2, prefetch=2, memory_hooks=hooks)
    assert len(registered) == 2 and all(size >= BATCH * 3 * IMG * IMG for size in registered.values())
    kept = list(loader)  # 16 batches held: 14 buffers handed over, each replaced by a new one
    assert len(registered) == 16 and not unregistered
    assert [digest(i, imgs, targets) for i, (imgs, targets, _, _) in enumerate(kept)] == yolo_ffr_digests(coco128)
    loader.close()  # the ring's two buffers
    assert len(unregistered) == 2
    del kept  # the handed-over ones
    assert sorted(unregistered) == sorted(registered)


def test_a_loop_over_epochs_reuses_the_buffer_it_held(coco128):
    """A `for` loop holds its last batch while the next epoch starts: that buffer is handed over once,
    and at each later epoch's start the ring takes back the one Python has let go of meanwhile, so no
    epoch allocates (nor, on CUDA, pins) a new buffer."""
    registered, unregistered = [], []
    loader = make(coco128, workers=2, prefetch=2, memory_hooks=(lambda address, size: registered.append(address),
                                                                unregistered.append))
    epochs = []
    for _ in range(4):
        epochs.append([])
        for i, (imgs, targets, _, _) in enumerate(loader):  # noqa: B007 (the last batch stays held)
            epochs[-1].append(digest(i, imgs, targets))
    assert len(registered) == 3 and not unregistered  # the ring's two, and one at the second epoch's start
    assert epochs[0] == yolo_ffr_digests(coco128) and epochs[3] == yolo_ffr_digests(coco128, "--epoch", "3")
    loader.close()
    assert len(unregistered) == 2  # the ring's two
    del imgs, targets
    assert sorted(unregistered) == sorted(registered)


def test_a_raising_memory_hook_is_reported_and_the_loader_goes_on(coco128, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: reported.append(str(unraisable.exc_value)))

    def register(address, size):
        raise RuntimeError("no pinning here")

    loader = make(coco128, workers=1, memory_hooks=(register, lambda address: None))
    assert reported and set(reported) == {"no pinning here"}
    assert loader_digests(loader)[:2] == yolo_ffr_digests(coco128)[:2]
    loader.close()


def test_a_loader_whose_hooks_refer_to_it_is_collected(coco128):
    """A cycle through the hooks the loader holds (a hook that refers to its loader) is garbage: the
    collector sees the hooks, so the loader and its hooks go."""
    import gc
    import weakref

    def cycle() -> weakref.ref:
        box = {}

        def register(address, size):
            box.get("loader")

        box["loader"] = make(coco128, workers=1, memory_hooks=(register, lambda address: None))
        return weakref.ref(register)

    hook = cycle()
    gc.collect()
    assert hook() is None
