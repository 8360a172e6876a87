"""SWAR ("SIMD within a register"): eight CSV bytes per 64-bit word.

Numba has no spelling for an unaligned 8-byte load or store, nor for
counting leading or trailing zero bits; one-instruction intrinsics provide them. On top,
branch-free word tricks: where the first non-digit or the first field-ending
byte lies in a word, and the value of up to eight ASCII digits (the
multiply-and-shift reduction fast_float and simdjson use), so a short number
costs no loop and no mispredicted loop exit.

Bytes are little-endian: the byte at the lowest address is the word's lowest.
"""
import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_ZEROS = np.uint64(0x3030303030303030)  # b"00000000"
_SIX = np.uint64(0x7676767676767676)
_U8 = np.uint64(8)
_U64 = np.uint64(64)


def _element_pointer(context, builder, array_type, array, index):
    ary = context.make_array(array_type)(context, builder, array)
    ptr = builder.gep(ary.data, [index])
    return builder.bitcast(ptr, ir.IntType(64).as_pointer())


@intrinsic
def load_u64(typingctx, array, index):
    """The 8 bytes at ``array[index:index + 8]`` as one little-endian word (no bounds check)."""
    if not (isinstance(array, types.Array) and array.dtype == types.uint8 and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        return builder.load(_element_pointer(context, builder, signature.args[0], args[0], index), align=1)

    return types.uint64(array, index), codegen


@intrinsic
def store_u64(typingctx, array, index, word):
    """Writes ``word`` to ``array[index:index + 8]`` (no bounds check)."""
    if not (isinstance(array, types.Array) and array.dtype == types.uint8 and isinstance(index, types.Integer)
            and word == types.uint64):
        return None

    def codegen(context, builder, signature, args):
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        builder.store(args[2], _element_pointer(context, builder, signature.args[0], args[0], index), align=1)
        return context.get_dummy_value()

    return types.void(array, index, word), codegen


def _bit_count_intrinsic(llvm_op: str, doc: str):
    @intrinsic
    def count(typingctx, word):
        if word != types.uint64:
            return None

        def codegen(context, builder, signature, args):
            return getattr(builder, llvm_op)(args[0], ir.Constant(ir.IntType(1), 0))

        return types.uint64(types.uint64), codegen

    count.__doc__ = doc
    return count


ctz64 = _bit_count_intrinsic("cttz", "Count of trailing zero bits of a uint64 (64 for zero).")
clz64 = _bit_count_intrinsic("ctlz", "Count of leading zero bits of a uint64 (64 for zero).")


@nb.njit(nogil=True, cache=True, inline="always")
def leading_digits(word):
    """How many of the word's bytes, from the first, are ASCII digits (0-8).

    ``word ^ "00000000"`` maps digits to 0-9; a byte is then a non-digit when
    it is above 9 (adding 0x76 sets its top bit) or has its top bit already.
    Carries only run from a non-digit into later bytes, so the first flagged
    byte is exact.
    """
    t = word ^ _ZEROS
    flagged = ((t + _SIX) | t) & _HIGHS
    return np.int64(ctz64(flagged) >> np.uint64(3))


@nb.njit(nogil=True, cache=True, inline="always")
def digits_value(word, n):
    """The value of the first ``n`` (1-8) bytes of ``word``, all ASCII digits.

    The digits are shifted to the top of the word (zeros below act as leading
    zeros), then pairs, quads and octets are combined by multiply-and-shift.
    """
    t = (word ^ _ZEROS) << (np.uint64(8 - n) << np.uint64(3))
    t = (t * np.uint64(10)) + (t >> _U8)  # pairs in the low byte of each 16 bits
    t = (((t & np.uint64(0x000000FF000000FF)) * np.uint64(0x000F424000000064))
         + (((t >> np.uint64(16)) & np.uint64(0x000000FF000000FF)) * np.uint64(0x0000271000000001)))
    return np.int64(t >> np.uint64(32))


@nb.njit(nogil=True, cache=True, inline="always")
def first_of_three(word, a, b, c):
    """Index (0-8) of the first byte of ``word`` equal to ``a``, ``b`` or ``c``
    (each a byte value broadcast to all 8 bytes by multiplying with 0x0101...)."""
    x, y, z = word ^ a, word ^ b, word ^ c
    found = ((x - _ONES) & ~x) | ((y - _ONES) & ~y) | ((z - _ONES) & ~z)
    return np.int64(ctz64(found & _HIGHS) >> np.uint64(3))


@nb.njit(nogil=True, cache=True)
def broadcast(byte):
    """``byte`` (its low 8 bits) in all eight bytes of a word.

    >>> hex(int(broadcast(ord(","))))
    '0x2c2c2c2c2c2c2c2c'
    """
    return _ONES * np.uint64(byte & 0xFF)
