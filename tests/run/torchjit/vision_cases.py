"""torchvision under TorchScript: the cases of tests/run/test_torch_jit.py.

    vision_cases.py RESULT.pickle

Runs each case on fixed inputs (torch.manual_seed, eval mode) with whatever
torchvision is first on sys.path, prints one line per case and pickles the
outputs (driver_util). Each case: build, eager output, torch.jit.script and
the scripted output (called twice: the profiling executor optimises on a
later call).
"""
import sys
import warnings

import torch

from driver_util import Runner

warnings.filterwarnings("ignore")
torch.set_num_threads(1)

import torchvision  # noqa: E402
import torchvision.ops  # noqa: E402
import torchvision.transforms as T  # noqa: E402

R = Runner(sys.argv[1])


def model_case(name, build, shape):
    def eager():
        torch.manual_seed(0)
        m = build().eval()
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            return m(x)

    def script():
        torch.manual_seed(0)
        m = build().eval()
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
        s = torch.jit.script(m)
        R.graph_note(s)
        with torch.no_grad():
            return [s(x), s(x)]
    R.case(name + "/eager", eager)
    R.case(name + "/script", script)


model_case("resnet18", lambda: torchvision.models.resnet18(), (1, 3, 64, 64))
model_case("mobilenet_v3_small", lambda: torchvision.models.mobilenet_v3_small(), (1, 3, 64, 64))


def roi_inputs():
    g = torch.Generator().manual_seed(2)
    feats = torch.randn(2, 4, 16, 16, generator=g)
    xy = torch.rand(6, 2, generator=g) * 8
    wh = torch.rand(6, 2, generator=g) * 6 + 1
    boxes = torch.cat([torch.tensor([0, 0, 1, 1, 0, 1.]).unsqueeze(1), xy, xy + wh], dim=1)
    return feats, boxes


def roi_eager():
    feats, boxes = roi_inputs()
    return torchvision.ops.roi_align(feats, boxes, [3, 3], 0.5, 2, True)


def roi_script():
    feats, boxes = roi_inputs()
    f = torch.jit.script(torchvision.ops.roi_align)
    R.graph_note(f)
    return [f(feats, boxes, [3, 3], 0.5, 2, True), f(feats, boxes, [3, 3], 0.5, 2, True)]


def roi_module_script():
    feats, boxes = roi_inputs()
    m = torch.jit.script(torchvision.ops.RoIAlign((2, 2), spatial_scale=1.0, sampling_ratio=2))
    return m(feats, boxes)


R.case("roi_align/eager", roi_eager)
R.case("roi_align/script", roi_script)
R.case("RoIAlign/script", roi_module_script)


def nms_inputs():
    g = torch.Generator().manual_seed(3)
    xy = torch.rand(40, 2, generator=g) * 20
    wh = torch.rand(40, 2, generator=g) * 10 + 1
    boxes = torch.cat([xy, xy + wh], dim=1)
    scores = torch.rand(40, generator=g)
    idxs = torch.randint(0, 3, (40,), generator=g)
    return boxes, scores, idxs


def nms_eager():
    b, s, i = nms_inputs()
    return torchvision.ops.batched_nms(b, s, i, 0.3)


def nms_script():
    b, s, i = nms_inputs()
    f = torch.jit.script(torchvision.ops.batched_nms)
    R.graph_note(f)
    return [f(b, s, i, 0.3), f(b, s, i, 0.3)]


def nms_for_trace(b, s, i):
    return torchvision.ops.batched_nms(b, s, i, 0.3)


def nms_trace():
    # torch.jit.trace: batched_nms's helpers are @torch.jit._script_if_tracing
    b, s, i = nms_inputs()
    f = torch.jit.trace(nms_for_trace, (b, s, i), check_trace=False)
    return f(b, s, i)


R.case("batched_nms/eager", nms_eager)
R.case("batched_nms/script", nms_script)
R.case("batched_nms/trace", nms_trace)


def image():
    return torch.randint(0, 256, (3, 48, 40), dtype=torch.uint8, generator=torch.Generator().manual_seed(4))


MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def normalize_script():
    x = image().float() / 255
    t = torch.jit.script(T.Normalize(MEAN, STD))
    R.graph_note(t)
    return t(x)


def pipeline():
    # Resize([36]): scripted Resize takes no plain int size
    return torch.nn.Sequential(T.Resize([36]), T.CenterCrop(32), T.ConvertImageDtype(torch.float),
                               T.Normalize(MEAN, STD))


def pipeline_eager():
    return pipeline()(image())


def pipeline_script():
    return torch.jit.script(pipeline())(image())


def normalize_eager():
    return T.Normalize(MEAN, STD)(image().float() / 255)


R.case("Normalize/eager", normalize_eager)
R.case("Normalize/script", normalize_script)
R.case("transforms-Sequential/eager", pipeline_eager)
R.case("transforms-Sequential/script", pipeline_script)

for mod in ("torchvision", "torchvision.models.resnet", "torchvision.ops.roi_align", "torchvision.ops.boxes",
            "torchvision.transforms.transforms", "torchvision.transforms.functional_tensor"):
    R.info[mod] = R.module_info(mod)
R.save()
