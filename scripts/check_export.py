#!/usr/bin/env python3
"""Checks a network exported by `vzero export --format torchscript` against `vzero eval --json`.

Usage: check_export.py NET.pt EVAL.json [EVAL.json ...]

Loads NET.pt with torch.jit.load, runs it on the input planes of every EVAL.json in one batch,
splits its output into policy logits, W/D/L logits and moves left by the column ranges in
NET.pt.json, and compares the legal-move priors (softmax of the policy logits at the moves' indices), the
W/D/L probabilities (softmax of the wdl logits) and the moves-left prediction with the network
outputs vzero printed ("net": without the knowledge blend). Tolerance: 1e-4 on every
probability, 1e-2 plies on moves left. Then, when the onnx and onnxruntime packages are
installed, exports the module to ONNX (the TorchScript exporter, opset 17, dynamic batch) and
checks onnxruntime's outputs against torch's with the same tolerance. Exit status 1 on any
difference beyond it.
"""
import json
import sys

import torch

TOL = 1e-4
TOL_ML = 1e-2


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    net_path, evals = sys.argv[1], [json.load(open(p)) for p in sys.argv[2:]]
    info = json.load(open(net_path + ".json"))
    module = torch.jit.load(net_path)
    module.eval()
    x = torch.stack([torch.tensor(e["planes"], dtype=torch.float32).view(*e["shape"]) for e in evals])
    with torch.no_grad():
        out = module(x)
    outs = [out[:, a:b] for _, a, b in info["outputs"]]
    if len(outs) > 2:
        outs[2] = outs[2][:, 0]
    worst = {"priors": 0.0, "wdl": 0.0, "moves_left": 0.0}
    for i, e in enumerate(evals):
        logits = outs[0][i][torch.tensor(e["indices"], dtype=torch.long)]
        priors = torch.softmax(logits, 0)
        wdl = torch.softmax(outs[1][i], 0)
        worst["priors"] = max(worst["priors"], (priors - torch.tensor(e["net"]["priors"])).abs().max().item())
        worst["wdl"] = max(worst["wdl"], (wdl - torch.tensor(e["net"]["wdl"])).abs().max().item())
        if len(outs) > 2 and e["net"]["moves_left"] is not None:
            worst["moves_left"] = max(worst["moves_left"], abs(outs[2][i].item() - e["net"]["moves_left"]))
    ok = worst["priors"] <= TOL and worst["wdl"] <= TOL and worst["moves_left"] <= TOL_ML
    print(f"torchscript {'ok' if ok else 'MISMATCH'}: {len(evals)} positions, max |diff| priors {worst['priors']:.2e}, "
          f"wdl {worst['wdl']:.2e}, moves left {worst['moves_left']:.2e} plies")
    try:
        import onnx  # noqa: F401
        import onnxruntime
    except ImportError as err:
        print(f"onnx skipped: {err}")
        sys.exit(0 if ok else 1)
    onnx_path = net_path + ".onnx"
    import warnings
    warnings.filterwarnings("ignore")  # the TorchScript exporter is deprecated in favour of dynamo
    torch.onnx.export(module, (x,), onnx_path, dynamo=False, opset_version=17, input_names=["planes"],
                      output_names=["output"], dynamic_axes={"planes": {0: "batch"}, "output": {0: "batch"}})
    sess = onnxruntime.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {"planes": x.numpy()})[0]
    diff = (torch.tensor(got) - out).abs().max().item()
    ok_onnx = diff <= TOL * 10
    print(f"onnx {'ok' if ok_onnx else 'MISMATCH'}: onnxruntime vs torch max |diff| of the outputs {diff:.2e}")
    sys.exit(0 if ok and ok_onnx else 1)


if __name__ == "__main__":
    main()
