"""The backend options that change which GPU kernels run (never their words), as settings the
schemes' CPU-vs-GPU tests run under in-process (ember.using_backend_options on the GPU only).
Each former environment switch appears on its non-default settings here; its default setting is
what every other test runs under. Small test sets never reach some default size rules, so the
"always" fusions are what exercises those kernels at all:

- fused_key_product="always": ModUp's forward NTT fused with the key product at every size (by
  default only rows taking most of the L2 cache are fused); "off": never.
- fused_tensor="always": BFV's forward NTT fused with the tensor product from N = 2^11 on
  whatever the schedule (by default only where the tuned schedule is the warp-shuffle one);
  "off": never.
- bconv_tensor=False: base conversions on the CUDA cores instead of the integer tensor cores
  (the batched and one-job kernels with their maps and subtrahends: BFV's scaled product,
  ModUp, ModDown).
- key_product_words=False: ModUp's transforms reduce their words before the key products.
- ntt_fp64=False: every NTT limb on the integer path; ntt_unreduced=False: forward integer-path
  transforms keep their butterfly reductions.
"""

from __future__ import annotations

import contextlib

import ember

SETTINGS = {
    "default": {},
    "fused_key_product_always": {"fused_key_product": "always"},
    "fused_key_product_off": {"fused_key_product": "off"},
    "fused_tensor_always": {"fused_tensor": "always"},
    "fused_tensor_off": {"fused_tensor": "off"},
    "bconv_cuda_cores": {"bconv_tensor": False},
    "key_product_reduced": {"key_product_words": False},
    "ntt_integer_only": {"ntt_fp64": False},
    "ntt_reduced": {"ntt_unreduced": False},
}
# The settings that touch key switching (CKKS has no BFV tensor product).
KEY_SWITCH_SETTINGS = {k: v for k, v in SETTINGS.items() if not k.startswith("fused_tensor")}


def on_gpu(gpu: str, setting: str):
    """The `with` block under SETTINGS[setting] on the GPU; the CPU keeps its options."""
    changes = SETTINGS[setting]
    return ember.using_backend_options(gpu, **changes) if changes else contextlib.nullcontext()
