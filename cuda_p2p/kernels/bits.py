"""Bitmaps on the GPU: Arrow validity and boolean bitmaps placed at any bit offset
(and string offsets rebased, the other buffer a chunk cannot be copied into place as it is).

Chunks of a column seldom start on a byte boundary of the whole column, so
their bits are ORed into place one bit per thread; the destination is a
zeroed bitmap viewed as ``uint32`` words (the width CUDA's atomics take).
"""
import numpy as np
from numba import cuda

@cuda.jit
def or_bits(src, count, dst_words, dst_bit):
    """Sets bit ``dst_bit + i`` of ``dst_words`` where bit ``i`` of ``src`` is set, ``i < count``."""
    i = cuda.grid(1)
    if i < count:
        if (src[i >> 3] >> (i & 7)) & 1:
            d = dst_bit + i
            cuda.atomic.or_(dst_words, d >> 5, np.uint32(1 << (d & 31)))


@cuda.jit
def set_bits(dst_words, dst_bit, count):
    """Sets bits ``[dst_bit, dst_bit + count)`` of ``dst_words``."""
    i = cuda.grid(1)
    if i < count:
        d = dst_bit + i
        cuda.atomic.or_(dst_words, d >> 5, np.uint32(1 << (d & 31)))


@cuda.jit
def pack_bits(flags, out):
    """``out[k]``: bit ``b`` is ``flags[8k + b] != 0`` (one thread per output byte)."""
    k = cuda.grid(1)
    if k < out.shape[0]:
        byte = 0
        for b in range(8):
            i = 8 * k + b
            if i < flags.shape[0] and flags[i] != 0:
                byte |= 1 << b
        out[k] = byte


@cuda.jit
def shift_offsets(src, shift, dst):
    """``dst[i] = src[i] + shift``: a chunk's string offsets rebased to where its bytes go."""
    i = cuda.grid(1)
    if i < src.shape[0]:
        dst[i] = src[i] + shift


@cuda.jit
def zero_words(words):
    """Zeroes ``words`` (a fresh allocation the bit kernels OR into)."""
    i = cuda.grid(1)
    if i < words.shape[0]:
        words[i] = 0
