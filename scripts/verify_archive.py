#!/usr/bin/python3
"""Opens a fieldbrain archive with torch.load and verifies its SHA-256 the way
brain/persistence.cpp computes it. Usage: /usr/bin/python3 scripts/verify_archive.py FILE...
Exit status 0 when every file verifies, 1 otherwise (the reason is printed)."""
import hashlib
import struct
import sys

import torch

# c10::toString(ScalarType) names, as hashed by the C++ side.
DTYPE_NAMES = {
    torch.float32: "Float", torch.float64: "Double", torch.float16: "Half",
    torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char",
    torch.uint8: "Byte", torch.bool: "Bool",
}


def digest(tensors, meta_dump):
    sha = hashlib.sha256()
    put = lambda s: sha.update(s.encode() + b"\0")
    put("fieldbrain-archive-v1")
    put(meta_dump)
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        put(name)
        put(DTYPE_NAMES[t.dtype])
        sha.update(struct.pack("<q", t.dim()))
        for d in t.shape:
            sha.update(struct.pack("<q", d))
        sha.update(t.numpy().tobytes() if t.dtype != torch.bool else t.to(torch.uint8).numpy().tobytes())
    return sha.hexdigest()


def verify(path):
    archive = torch.load(path)
    if archive.get("format") != "fieldbrain-archive":
        return "not a fieldbrain archive"
    actual = digest(archive["tensors"], archive["meta"])
    if actual != archive["sha256"]:
        return f"checksum mismatch (stored {archive['sha256'][:16]}..., computed {actual[:16]}...)"
    return None


if __name__ == "__main__":
    bad = 0
    for path in sys.argv[1:]:
        try:
            problem = verify(path)
        except Exception as e:  # a truncated zip, a missing file: report, keep going
            problem = f"unreadable: {e}"
        print(f"{path}: {'OK' if problem is None else problem}")
        bad += problem is not None
    sys.exit(1 if bad else 0)
