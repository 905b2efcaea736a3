"""Parity driver for test/hrr/parity_test.cpp.

usage: parity.py INPUTS.pt OUT_DIR [VOCAB_FILE]

INPUTS.pt is written by the C++ test with torch::pickle_save (so this also checks that
torch.load opens LibTorch's pickles). Every output is written as OUT_DIR/<name>.bin (float64,
little endian, C order) and listed with its shape in OUT_DIR/manifest.json. If VOCAB_FILE (a
vocabulary saved by hrr::save_vocabulary) is given, its digest is recomputed here and the
result written to the manifest under "vocabulary".
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hrr_reference as ref  # noqa: E402


def main():
    # weights_only=False: torch >= 2.6 defaults to True, whose unpickler refuses the generic
    # dicts and lists of strings that LibTorch's pickle_save writes. Both files come from the
    # test that runs this script.
    inputs = torch.load(sys.argv[1], weights_only=False)
    out_dir = sys.argv[2]
    a, b = inputs["a"], inputs["b"]
    a_odd, b_odd = inputs["a_odd"], inputs["b_odd"]
    a64, b64 = inputs["a64"], inputs["b64"]
    perm = inputs["permutation"]
    items, weights = inputs["items"], inputs["weights"]
    codebook = inputs["codebook"]
    names = inputs["names"]
    seed = int(inputs["seed"])

    outputs = {
        "bind": ref.bind(a, b),
        "bind_odd": ref.bind(a_odd, b_odd),
        "bind64": ref.bind(a64, b64),
        "unbind": ref.unbind(a, b),
        "unbind_odd": ref.unbind(a_odd, b_odd),
        "involution": ref.involution(a),
        "exact_inverse": ref.exact_inverse(b),
        "make_unitary": ref.make_unitary(a),
        "make_unitary_positive": ref.make_unitary(a_odd, positive=True),
        "power_half": ref.power(ref.make_unitary(a64, positive=True), 0.5),
        "power_three": ref.power(a64, 3.0),
        "permute": ref.permute(a, 3),
        "permute_by": ref.permute_by(a, perm),
        "inverse_permute_by": ref.inverse_permute_by(a, perm),
        "bundle": ref.bundle(items, weights, normalize=False),
        "bundle_normalized": ref.bundle(items, weights, normalize=True),
        "cosine": ref.cosine(a, b),
    }
    scores, indices = ref.cleanup_topk(a.reshape(-1, a.shape[-1]), codebook, 5)
    outputs["cleanup_scores"] = scores
    outputs["cleanup_indices"] = indices
    outputs["named"] = torch.stack([ref.named_vector(seed, n, 512) for n in names])
    outputs["named_unitary"] = torch.stack(
        [ref.named_vector(seed, n, 255, unitary=True, dtype=torch.float64) for n in names])

    manifest = {"shapes": {}}
    for name, tensor in outputs.items():
        t = tensor.detach().to(torch.float64).contiguous()
        with open(os.path.join(out_dir, name + ".bin"), "wb") as f:
            f.write(t.numpy().tobytes())
        manifest["shapes"][name] = list(t.shape)
    if len(sys.argv) > 3:
        content = torch.load(sys.argv[3], weights_only=False)
        manifest["vocabulary"] = {
            "stored_digest": content["digest"],
            "recomputed_digest": ref.file_digest(content),
            "names": list(content["names"]),
        }
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main()
