"""Reads the rollout tensors `sandfleet rollout --tensors FILE.npz` writes.

Needs the standard library and numpy only. The layout (verl's batch keys) is documented in
packages/trainer/README.md; `load_rollout_tensors` returns the arrays by key after checking
their shapes, dtypes and masks agree, so a trainer can hand them on, e.g. to torch:

    batch = {k: torch.from_numpy(v) for k, v in load_rollout_tensors("rollouts.npz").items()}

On the command line it prints the batch's sizes, or every array as JSON with --dump.
"""
import json
import sys

import numpy as np

#: key -> (dtype, dimensions): "B" rollouts, "P" prompt length, "R" response length.
LAYOUT = {
    "prompts": ("int32", "BP"),
    "responses": ("int32", "BR"),
    "input_ids": ("int32", "BT"),
    "attention_mask": ("int8", "BT"),
    "position_ids": ("int32", "BT"),
    "response_mask": ("int8", "BR"),
    "rollout_log_probs": ("float32", "BR"),
    "advantages": ("float32", "BR"),
    "token_level_scores": ("float32", "BR"),
    "scores": ("float32", "B"),
    "uid": ("int32", "B"),
    "sample": ("int32", "B"),
}


class RolloutTensorsError(ValueError):
    """The file is not a batch of rollout tensors as sandfleet writes them."""


def load_rollout_tensors(path):
    """Returns {key: numpy array} from the .npz at `path`, checked against LAYOUT."""
    with np.load(path, allow_pickle=False) as archive:
        arrays = {key: archive[key] for key in archive.files}
    missing = sorted(set(LAYOUT) - set(arrays))
    if missing:
        raise RolloutTensorsError(f"{path}: missing {', '.join(missing)}")
    size = {}
    for key, (dtype, dims) in LAYOUT.items():
        a = arrays[key]
        if a.dtype != np.dtype(dtype):
            raise RolloutTensorsError(f"{path}: {key} is {a.dtype}, expected {dtype}")
        if a.ndim != len(dims):
            raise RolloutTensorsError(f"{path}: {key} has {a.ndim} dimensions, expected {len(dims)}")
        for name, n in zip(dims, a.shape):
            if size.setdefault(name, n) != n:
                raise RolloutTensorsError(f"{path}: {key} has {name} = {n}, elsewhere {size[name]}")
    if size.get("T", 0) != size.get("P", 0) + size.get("R", 0):
        raise RolloutTensorsError(f"{path}: input_ids is not prompts followed by responses")
    for key in ("attention_mask", "response_mask"):
        if not np.isin(arrays[key], (0, 1)).all():
            raise RolloutTensorsError(f"{path}: {key} holds values other than 0 and 1")
    response_attention = arrays["attention_mask"][:, size["P"] :]
    if (arrays["response_mask"] > response_attention).any():
        raise RolloutTensorsError(f"{path}: response_mask is 1 on padding")
    return arrays


def main(argv):
    if len(argv) < 1 or argv[0] in ("-h", "--help"):
        print("usage: sandfleet_tensors.py FILE.npz [--dump]", file=sys.stderr)
        return 2
    arrays = load_rollout_tensors(argv[0])
    if "--dump" in argv[1:]:
        print(json.dumps({key: a.tolist() for key, a in arrays.items()}))
        return 0
    b, t = arrays["input_ids"].shape
    r = arrays["responses"].shape[1]
    tokens = int(arrays["response_mask"].sum())
    print(
        f"{b} rollouts, prompts padded to {t - r}, responses to {r}; {tokens} policy tokens; "
        f"mean score {float(arrays['scores'].mean()) if b else 0:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
