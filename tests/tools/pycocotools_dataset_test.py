"""yolo-val --predictions on a packed COCO dataset gives pycocotools' 12 stats (1e-9).

coco128's instances JSON is made harsher first (annotations without width or height,
boxes sticking out of the image by less than the 1% the packer clips, crowd regions over
objects, areas a hair above the small/medium and medium/large limits), packed with yolo-pack,
and scored with generated detections that are hard on the matching: tied scores, exact
duplicates, boxes crossing the image border, sub-pixel boxes, images with more than 100
detections. pycocotools from PyPI (the reference environment, scripts/reference-venv.sh) is the
oracle; the test exits 77 (skipped) when it is not importable.

It also checks that the case is harsh enough to matter: pycocotools on the ground truth
rebuilt from the training boxes (float32, clipped, zero-size boxes dropped) must differ.

    python pycocotools_dataset_test.py TOOLS_DIR COCO128_DIR WORK_DIR
"""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval
except ImportError as e:
    print(f"SKIP: pycocotools is not importable here ({e}); run scripts/reference-venv.sh")
    sys.exit(77)

TOLERANCE = 1e-9


def harsh_ground_truth(gt, rng):
    """coco128's annotations plus the cases the packer's training boxes cannot represent."""
    images = {im["id"]: im for im in gt["images"]}
    anns = gt["annotations"]
    next_id = max(a["id"] for a in anns) + 1
    added = []
    for k, im in enumerate(gt["images"]):
        w, h = im["width"], im["height"]
        cat = gt["categories"][k % len(gt["categories"])]["id"]

        def add(bbox, area, iscrowd=0):
            nonlocal next_id
            added.append({"id": next_id, "image_id": im["id"], "category_id": cat, "bbox": bbox,
                          "area": area, "iscrowd": iscrowd, "segmentation": []})
            next_id += 1

        if k % 3 == 0:  # no width or no height: not trained on, but COCO counts them
            add([10.5, 20.25, 0.0, 15.0], 0.0)
            add([30.0, 40.0, 12.0, 0.0], 0.0)
        if k % 4 == 1:  # out of the image by less than 1%: clipped for training
            add([-0.004 * w, 5.0, 0.3 * w, 0.2 * h], 0.06 * w * h)
            add([0.7 * w, 0.6 * h, 0.3 * w + 0.005 * w, 0.4 * h + 0.003 * h], 0.12 * w * h)
        if k % 5 == 2:  # areas just above 32^2 and 96^2 (float32 would round them onto the limits)
            add([50.0, 60.0, 32.0, 32.0], 1024.0000000001)
            add([100.0, 80.0, 96.0, 96.0], 9216.000000001)
        if k % 7 == 3:  # a crowd region over the image's first object
            first = next((a for a in anns if a["image_id"] == im["id"]), None)
            if first is not None:
                x, y, bw, bh = first["bbox"]
                add([x - 2, y - 2, bw + 4, bh + 4], bw * bh, iscrowd=1)
    gt = dict(gt)
    gt["annotations"] = anns + added
    assert all(images[a["image_id"]] for a in added)
    return gt


def harsh_detections(gt, rng):
    images = {im["id"]: im for im in gt["images"]}
    cats = [c["id"] for c in gt["categories"]]
    dets = []

    def det(image_id, cat, bbox, score):
        dets.append({"image_id": image_id, "category_id": cat, "bbox": [float(v) for v in bbox],
                     "score": float(score)})

    for a in gt["annotations"]:
        x, y, w, h = a["bbox"]
        for _ in range(int(rng.integers(1, 4))):
            jitter = rng.normal(0, 0.08, 4) * [w + 1, h + 1, w + 1, h + 1]
            score = round(float(rng.uniform(0.05, 0.95)), 1)  # ties everywhere
            det(a["image_id"], a["category_id"], [x + jitter[0], y + jitter[1], max(w + jitter[2], 0.1),
                                                  max(h + jitter[3], 0.1)], score)
            if rng.uniform() < 0.2:
                dets.append(dict(dets[-1]))  # an exact duplicate
    for k, im in enumerate(gt["images"]):
        w, h = im["width"], im["height"]
        det(im["id"], cats[k % len(cats)], [-5.0, -3.0, 40.0, 30.0], 0.5)  # across the top-left corner
        det(im["id"], cats[(k + 1) % len(cats)], [w - 20.0, h - 10.0, 60.0, 40.0], 0.5)  # across the other
        det(im["id"], cats[k % len(cats)], [w / 2, h / 2, 0.4, 0.6], 0.9)  # sub-pixel
        if k % 8 == 0:  # beyond maxDets=100, with ties at the cut
            for _ in range(150):
                bw, bh = rng.uniform(1, w / 3), rng.uniform(1, h / 3)
                det(im["id"], int(rng.choice(cats)), [rng.uniform(-10, w - bw), rng.uniform(-10, h - bh), bw, bh],
                    round(float(rng.uniform(0, 1)), 2))
    return dets


def training_ground_truth(gt):
    """The ground truth as the packed training boxes give it: what evaluation used before EvalBox."""
    images = {im["id"]: im for im in gt["images"]}
    anns = []
    for a in gt["annotations"]:
        W, H = images[a["image_id"]]["width"], images[a["image_id"]]["height"]
        x, y, w, h = a["bbox"]
        if w <= 0 or h <= 0:
            continue
        lo = np.array([x / W, y / H]).clip(0, 1)
        hi = np.array([(x + w) / W, (y + h) / H]).clip(0, 1)
        c, s = np.float32((lo + hi) / 2), np.float32(hi - lo)
        b = dict(a)
        b["bbox"] = [float((c[0] - s[0] / 2) * W), float((c[1] - s[1] / 2) * H), float(s[0] * W), float(s[1] * H)]
        b["area"] = float(np.float32(a["area"]))
        anns.append(b)
    gt = dict(gt)
    gt["annotations"] = anns
    return gt


def pycocotools_stats(gt_path, dets_path):
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(gt_path)
        e = COCOeval(coco, coco.loadRes(dets_path), "bbox")
        e.evaluate()
        e.accumulate()
        e.summarize()
    return [float(v) for v in e.stats]


def main():
    tools, coco128, work = sys.argv[1:4]
    if not os.path.isdir(coco128):
        print(f"SKIP: {coco128} is absent")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    src = os.path.join(work, "src")
    os.makedirs(os.path.join(src, "images"))
    os.makedirs(os.path.join(src, "annotations"))
    os.symlink(os.path.abspath(os.path.join(coco128, "images", "train2017")),
               os.path.join(src, "images", "train2017"))
    rng = np.random.default_rng(20261124)
    with open(os.path.join(coco128, "annotations", "instances_train2017.json")) as f:
        gt = harsh_ground_truth(json.load(f), rng)
    gt_path = os.path.join(src, "annotations", "instances_train2017.json")
    with open(gt_path, "w") as f:
        json.dump(gt, f)
    dets_path = os.path.join(work, "dets.json")
    dets = harsh_detections(gt, rng)
    with open(dets_path, "w") as f:
        json.dump(dets, f)
    old_gt_path = os.path.join(work, "training_boxes.json")
    with open(old_gt_path, "w") as f:
        json.dump(training_ground_truth(gt), f)

    packed = os.path.join(work, "c.ffr")
    subprocess.run([os.path.join(tools, "yolo-pack"), src, "-o", packed], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    subprocess.run([os.path.join(tools, "yolo-val"), "--data", packed, "--predictions", dets_path, "--project",
                    work, "--name", "val"], check=True)
    with open(os.path.join(work, "val", "stats.json")) as f:
        ours = json.load(f)["coco"]

    expected = pycocotools_stats(gt_path, dets_path)
    old = pycocotools_stats(old_gt_path, dets_path)
    print(f"{len(dets)} detections, {len(gt['annotations'])} annotations")
    failed = False
    for k, (name, want) in enumerate(zip(ours, expected)):
        got = ours[name]
        print(f"{name:>6}: yolo-val {got:.12f}  pycocotools {want:.12f}  (training boxes {old[k]:.12f})")
        if abs(got - want) > TOLERANCE:
            print(f"FAIL: {name} differs from pycocotools by {abs(got - want):.3g}")
            failed = True
    if max(abs(a - b) for a, b in zip(old, expected)) < 1e-6:
        print("FAIL: the training boxes give pycocotools' numbers too; the case is not harsh enough")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
