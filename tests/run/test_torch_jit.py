#!/usr/bin/env python3
"""Differential test on real code: TorchScript over instrumented torchvision
and over torch's own instrumented nn, optim, utils.data and nn.functional.

    test_torch_jit.py vision NCREWRITE NCRUN_DIR     (differential/torch-jit)
    test_torch_jit.py own    NCREWRITE NCRUN_DIR     (differential/torch-own)

vision: Debian's torchvision package is copied into TMP/src/torchvision (a
copy: ncrewrite names ranges by the path under SRC, so they read
torchvision.models.resnet..., and it does not follow symbolic links) and
instrumented with `ncrewrite --full-trace -q TMP/src TMP/shadow`. ncrewrite
copies the package's non-Python files (_C.so, image.so, video_reader.so)
itself; any it leaves out is symlinked from the original and reported.

own: TMP/src/torch/{nn,optim,utils/data} (copies; nn holds nn/functional.py)
are instrumented into TMP/shadow/torch; every other entry of Debian's torch
package (the compiled _C, lib/, jit/, the rest of utils/, ...) is then
symlinked into TMP/shadow/torch beside them, so `import torch` with
TMP/shadow first on sys.path is the original torch except that nn, optim,
utils.data and nn.functional are the instrumented files.

Each driver (tests/run/torchjit/vision_cases.py, torch_cases.py) runs
three times in a subprocess of /usr/bin/python3:
  1. the original packages;
  2. TMP/shadow first on PYTHONPATH, no ncrt importable (markers are no-ops);
  3. the same under ncrun --shadow TMP/shadow (ncrt importable, ranges recorded).
Checked: in 2 and 3 the modules come from TMP/shadow (the originals were
not imported) and every case (eager outputs; torch.jit.script of the model or
function and its outputs, on fixed inputs, seeded, eval mode; optimizer
steps; DataLoader batches) succeeds and gives the original's output exactly
(or within rtol 1e-5 / atol 1e-6, said so); in 3 a trace was written and
holds ranges of the instrumented package whose names the manifest lists.
Exit 0 passed, 1 failed, 77 skipped (torch or torchvision not importable by
/usr/bin/python3). NC_KEEP_TMP=1 keeps the temporary directory.
"""
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchjit"))
import common  # noqa: E402
from common import PY, check  # noqa: E402

DRIVERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchjit")

VISION_CASES = ["resnet18/eager", "resnet18/script", "mobilenet_v3_small/eager", "mobilenet_v3_small/script",
                "roi_align/eager", "roi_align/script", "RoIAlign/script", "batched_nms/eager",
                "batched_nms/script", "batched_nms/trace", "Normalize/eager", "Normalize/script",
                "transforms-Sequential/eager", "transforms-Sequential/script"]
OWN_CASES = ["Linear/eager", "Linear/script", "TransformerEncoderLayer/eager", "TransformerEncoderLayer/script",
             "TransformerEncoderLayer-batch_first/eager", "TransformerEncoderLayer-batch_first/script",
             "conv-bn-pool/eager", "conv-bn-pool/script", "functional/eager", "functional/script",
             "optim.SGD", "optim.Adam", "optim.lr_scheduler", "DataLoader", "DataLoader-2-workers"]

# Functions that TorchScript compiles from the instrumented source in these
# cases: they must carry a full-trace range (else the test shows nothing).
VISION_SCRIPTED = ["torchvision.models.resnet.ResNet.forward", "torchvision.models.resnet.ResNet._forward_impl",
                   "torchvision.models.resnet.BasicBlock.forward",
                   "torchvision.models.mobilenetv3.MobileNetV3.forward",
                   "torchvision.ops.roi_align.roi_align", "torchvision.ops.boxes.batched_nms",
                   "torchvision.transforms.transforms.Normalize.forward",
                   "torchvision.transforms.functional.normalize"]
OWN_SCRIPTED = ["torch.nn.modules.linear.Linear.forward", "torch.nn.modules.transformer.TransformerEncoderLayer.forward",
                "torch.nn.modules.activation.MultiheadAttention.forward",
                "torch.nn.functional.multi_head_attention_forward", "torch.nn.functional.layer_norm",
                "torch.nn.functional.dropout",
                "torch.nn.functional.interpolate", "torch.nn.functional.cross_entropy",
                "torch.optim.sgd.SGD.step", "torch.utils.data.dataloader.DataLoader.__init__"]

# Ranges the eager cases must leave in the trace under ncrun (at least this
# many: one eager resnet18 forward runs 8 BasicBlocks), and nestings.
VISION_EXPECT = {"torchvision.models.resnet.resnet18": 2, "torchvision.models.resnet.ResNet.forward": 1,
                 "torchvision.models.resnet.BasicBlock.forward": 8,
                 "torchvision.models.mobilenetv3.InvertedResidual.forward": 11,
                 "torchvision.ops.misc.SqueezeExcitation.forward": 9,
                 "torchvision.ops.roi_align.roi_align": 1, "torchvision.ops.boxes.batched_nms": 1,
                 "torchvision.transforms.transforms.Normalize.forward": 2,
                 "torchvision.transforms.transforms.Resize.forward": 1}
VISION_NEST = [("torchvision.models.resnet.BasicBlock.forward", "torchvision.models.resnet.ResNet._forward_impl"),
               ("torchvision.models.resnet.ResNet._forward_impl", "torchvision.models.resnet.ResNet.forward"),
               ("torchvision.ops.misc.SqueezeExcitation.forward",
                "torchvision.models.mobilenetv3.InvertedResidual.forward")]
OWN_EXPECT = {"torch.nn.modules.linear.Linear.forward": 1,
              "torch.nn.modules.transformer.TransformerEncoderLayer.forward": 1,
              "torch.nn.functional.multi_head_attention_forward": 1, "torch.nn.functional.layer_norm": 1,
              "torch.nn.functional.mse_loss": 8, "torch.optim.sgd.SGD.step": 9, "torch.optim.adam.Adam.step": 4,
              "torch.utils.data.dataloader._SingleProcessDataLoaderIter._next_data": 8,
              # in the DataLoader's two worker processes (their own traces)
              "torch.utils.data._utils.worker._worker_loop": 2}
OWN_NEST = [("torch.nn.functional.multi_head_attention_forward",
             "torch.nn.modules.transformer.TransformerEncoderLayer._sa_block"),
            ("torch.optim.sgd.sgd", "torch.optim.sgd.SGD.step")]


def site_dir(pkg):
    p = common.subprocess.run([PY, "-s", "-c", "import os, %s; print(os.path.dirname(%s.__file__))" % (pkg, pkg)],
                              capture_output=True, text=True, env=common.clean_env())
    return p.stdout.strip()


def prepare_vision(ncrewrite, tmp):
    orig = site_dir("torchvision")
    print("original torchvision:", orig)
    src, shadow = os.path.join(tmp, "src"), os.path.join(tmp, "shadow")
    common.copy_tree(orig, os.path.join(src, "torchvision"))
    if not common.ncrewrite_full(ncrewrite, src, shadow):
        return None
    # the package's non-Python files: does ncrewrite carry them over?
    linked = []
    for base, dirs, files in os.walk(orig):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            if f.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(base, f), orig)
            dst = os.path.join(shadow, "torchvision", rel)
            if not os.path.exists(dst):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                os.symlink(os.path.join(base, f), dst)
                linked.append(rel)
    so = [f for f in os.listdir(orig) if f.endswith(".so")]
    if linked:
        print("  note: ncrewrite did not copy %d non-Python file(s); symlinked from the original: %s" %
              (len(linked), linked[:10]))
    else:
        print("  ok: ncrewrite copied every non-Python file of the package (%s)" % ", ".join(sorted(so)))
    return {"orig": orig, "shadow": shadow, "pkg_dirs": [os.path.join(shadow, "torchvision")],
            "modules": ["torchvision", "torchvision.models.resnet", "torchvision.ops.roi_align",
                        "torchvision.ops.boxes", "torchvision.transforms.transforms"],
            "driver": os.path.join(DRIVERS, "vision_cases.py"), "cases": VISION_CASES,
            "scripted": VISION_SCRIPTED, "prefixes": ["torchvision."], "expect": VISION_EXPECT,
            "nest": VISION_NEST}


def prepare_own(ncrewrite, tmp):
    orig = site_dir("torch")
    print("original torch:", orig)
    src, shadow = os.path.join(tmp, "src"), os.path.join(tmp, "shadow")
    for sub in ("nn", "optim", os.path.join("utils", "data")):
        common.copy_tree(os.path.join(orig, sub), os.path.join(src, "torch", sub))
    if not common.ncrewrite_full(ncrewrite, src, shadow):
        return None
    # the rest of torch, as symbolic links beside the instrumented parts
    n = 0
    for d in ("", "utils"):
        for name in os.listdir(os.path.join(orig, d)):
            dst = os.path.join(shadow, "torch", d, name)
            if not os.path.lexists(dst):
                os.symlink(os.path.join(orig, d, name), dst)
                n += 1
    print("  overlay: %d entries of torch symlinked beside the instrumented nn, optim, utils/data" % n)
    for sub in ("nn", "optim", "utils/data", "nn/functional.py"):
        p = os.path.join(shadow, "torch", sub)
        check(os.path.exists(p) and not os.path.islink(p), "overlay: torch/%s is ncrewrite's output, not a link" % sub)
    return {"orig": orig, "shadow": shadow,
            "pkg_dirs": [os.path.join(shadow, "torch", s) for s in ("nn", "optim", os.path.join("utils", "data"))],
            "modules": ["torch.nn.functional", "torch.nn.modules.linear", "torch.nn.modules.transformer",
                        "torch.optim.sgd", "torch.utils.data.dataloader"],
            "driver": os.path.join(DRIVERS, "torch_cases.py"), "cases": OWN_CASES,
            "scripted": OWN_SCRIPTED, "prefixes": ["torch.nn.", "torch.nn.functional.", "torch.optim.",
                                                   "torch.utils.data."], "expect": OWN_EXPECT, "nest": OWN_NEST}


def inside(path, dirs):
    if not path:
        return False
    real = os.path.realpath(path)
    return any(real.startswith(os.path.realpath(d) + os.sep) for d in dirs)


def check_origin(label, res, setup, instrumented):
    if res is None:
        return
    info = res["info"]
    for mod in setup["modules"]:
        mi = info.get(mod)
        f = mi and mi["file"]
        if instrumented:
            check(inside(f, setup["pkg_dirs"]), "%s: %s imported from the instrumented tree (%s)" % (label, mod, f))
        else:
            check(inside(f, [setup["orig"]]), "%s: %s imported from the original (%s)" % (label, mod, f))


def main():
    mode, ncrewrite, ncrun_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    ncrun = os.path.join(ncrun_dir, "ncrun")
    need = ["torch", "torchvision"] if mode == "vision" else ["torch"]
    why = common.have(need)
    if why:
        print("skipped: %s cannot import %s: %s" % (PY, ", ".join(need), why))
        return 77
    t0 = time.time()
    tmp = common.mkdtemp("torchjit-" + mode)
    try:
        setup = (prepare_vision if mode == "vision" else prepare_own)(ncrewrite, tmp)
        if setup is None:
            return common.finish()
        names, per_file = common.manifest_names(setup["shadow"])
        missing = [n for n in setup["scripted"] if n not in names]
        check(not missing, "the functions TorchScript compiles here are instrumented (full-trace ranges in the "
                           "manifest)%s" % (": missing %s" % missing if missing else ""))
        env = common.clean_env()
        driver = setup["driver"]

        res = {}
        r = common.run_variant("original", [PY, "-s", driver, os.path.join(tmp, "orig.pickle")], env,
                               os.path.join(tmp, "orig.pickle"))
        want = r[3]
        if not check(want is not None and all(want["cases"].get(c, {}).get("ok") for c in setup["cases"]),
                     "original: every case runs (a failure here is a problem of the test, not of ncrewrite)"):
            return common.finish()
        check_origin("original", want, setup, False)
        check(not want["info"]["ncrt_spec"], "original: ncrt is not importable")

        out = os.path.join(tmp, "plain.pickle")
        r = common.run_variant("shadow tree, no ncrt", [PY, "-s", driver, out],
                               dict(env, PYTHONPATH=setup["shadow"]), out)
        res["plain"] = r[3]
        check(r[0] == 0, "shadow tree, no ncrt: the driver exits 0 (exit %d)" % r[0])
        check_origin("shadow tree, no ncrt", r[3], setup, True)
        if r[3]:
            check(not r[3]["info"]["ncrt_spec"], "shadow tree, no ncrt: ncrt is not importable (markers are no-ops)")
        common.compare_cases(want, r[3], "shadow tree, no ncrt", setup["cases"])

        out = os.path.join(tmp, "ncrun.pickle")
        run_dir = os.path.join(tmp, "run")
        r, evs = common.under_ncrun(ncrun, run_dir, "torchjit", setup["shadow"], [PY, "-s", driver, out], env, out)
        check(r[0] == 0, "under ncrun: the driver exits 0 (exit %d)" % r[0])
        check_origin("under ncrun", r[3], setup, True)
        if r[3]:
            check(r[3]["info"]["ncrt_spec"] and r[3]["info"]["ncrt_loaded"],
                  "under ncrun: ncrt is importable and was imported (%s)" % r[3]["info"]["ncrt_file"])
        common.compare_cases(want, r[3], "under ncrun", setup["cases"])
        counts = common.range_counts(evs)
        for pre in setup["prefixes"]:
            ours = {n: c for n, c in counts.items() if n.startswith(pre)}
            top = sorted(ours.items(), key=lambda kv: -kv[1])[:4]
            check(ours, "under ncrun: the trace holds ranges named %s* (%d names, %d ranges; e.g. %s)" %
                  (pre, len(ours), sum(ours.values()), top))
        low = {n: (counts.get(n, 0), k) for n, k in setup["expect"].items() if counts.get(n, 0) < k}
        check(not low, "under ncrun: the eager cases' ranges are there, as often as they ran (%d names)%s" %
              (len(setup["expect"]), ": too few (seen, want at least): %s" % low if low else ""))
        for inner, outer in setup["nest"]:
            ins = [e for e in evs if e["name"] == inner]
            outs = [e for e in evs if e["name"] == outer]
            bad = [e for e in ins if not any(o["pid"] == e["pid"] and o["tid"] == e["tid"] and o["ts"] <= e["ts"] and
                                             e["ts"] + e["dur"] <= o["ts"] + o["dur"] for o in outs)]
            check(ins and not bad, "under ncrun: every %s range (%d) lies inside a %s range%s" %
                  (inner, len(ins), outer, " (%d do not)" % len(bad) if bad else ""))
        pkg = {n for n in counts if any(n.startswith(p) for p in setup["prefixes"])}
        unknown = sorted(pkg - names)
        check(not unknown, "under ncrun: every such range is one the manifest lists%s" %
              (": not listed: %s" % unknown[:5] if unknown else ""))
    finally:
        common.rmtree(tmp)
    print("total %.0fs" % (time.time() - t0))
    return common.finish()


if __name__ == "__main__":
    sys.exit(main())
