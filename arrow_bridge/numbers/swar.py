"""SWAR ("SIMD within a register"): eight CSV bytes per 64-bit word, and 64 per vector.

Numba has no spelling for an unaligned 8-byte load or store, for counting
leading or trailing zero bits, for a 64x64 -> 128-bit product, or for a
64-byte compare into a bit mask; one-instruction intrinsics provide them.
Loads and stores go through a raw address, not an array: Numba wraps every
array handed to a helper in atomic reference-count updates, which cost 18% of
the float kernel's time before (measured with perf). On top, branch-free
word tricks: how many leading bytes of a word are digits, and the value of up
to eight ASCII digits (the multiply-and-shift reduction fast_float and
simdjson use), so a short number costs no loop and no mispredicted loop exit.

Bytes are little-endian: the byte at the lowest address is the word's lowest.
"""
import numpy as np
from llvmlite import ir

from arrow_bridge.jit import cgutils, intrinsic, njit, numba_types as types

_HIGHS = np.uint64(0x8080808080808080)
_ZEROS = np.uint64(0x3030303030303030)  # b"00000000"
_SIX = np.uint64(0x7676767676767676)
_U8 = np.uint64(8)
_BYTES32 = ir.VectorType(ir.IntType(8), 32)
_I16X16 = ir.VectorType(ir.IntType(16), 16)
_I32X8 = ir.VectorType(ir.IntType(32), 8)


def _pointer(context, builder, signature, args, pointee: ir.Type):
    """``address + index`` (the first two arguments) as a pointer to ``pointee``."""
    at = builder.add(context.cast(builder, args[0], signature.args[0], types.intp),
                     context.cast(builder, args[1], signature.args[1], types.intp))
    return builder.inttoptr(at, pointee.as_pointer())


def _address_load(bits: int, doc: str):
    @intrinsic
    def load(typingctx, address, index):
        if not (isinstance(address, types.Integer) and isinstance(index, types.Integer)):
            return None
        result = types.uint64 if bits == 64 else types.uint8

        def codegen(context, builder, signature, args):
            return builder.load(_pointer(context, builder, signature, args, ir.IntType(bits)), align=1)

        return result(address, index), codegen

    load.__doc__ = doc
    return load


word_at = _address_load(64, "The 8 bytes at ``address + index`` as a little-endian uint64.")
byte_at = _address_load(8, "The byte at ``address + index``.")


def _address_store(bits: int, doc: str):
    @intrinsic
    def store(typingctx, address, index, value):
        if not all(isinstance(t, types.Integer) for t in (address, index, value)):
            return None

        def codegen(context, builder, signature, args):
            value = builder.trunc(args[2], ir.IntType(bits)) if signature.args[2].bitwidth > bits else args[2]
            builder.store(value, _pointer(context, builder, signature, args, ir.IntType(bits)), align=1)
            return context.get_dummy_value()

        return types.void(address, index, value), codegen

    store.__doc__ = doc
    return store


put_word_at = _address_store(64, "Writes a uint64 to the 8 bytes at ``address + index``.")
put_byte_at = _address_store(8, "Writes the low byte of an integer to ``address + index``.")


@intrinsic
def put_value_at(typingctx, address, index, value):
    """Writes ``value`` in its own type and width (8 bytes for an int64 or a
    float64, 4 for an int32) to ``address + index``."""
    if not (isinstance(address, types.Integer) and isinstance(index, types.Integer)
            and isinstance(value, (types.Integer, types.Float))):
        return None

    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, signature, args, context.get_value_type(signature.args[2]))
        builder.store(args[2], pointer, align=1)
        return context.get_dummy_value()

    return types.void(address, index, value), codegen


def _lane_indices(lanes):
    return ir.Constant(ir.VectorType(ir.IntType(32), len(lanes)), list(lanes))


def _splat(builder, value, lanes: ir.VectorType | None = None):
    """A byte vector (32 bytes unless ``lanes`` says) of the low byte of
    ``value``, an LLVM integer."""
    lanes = lanes or _BYTES32
    one = builder.insert_element(ir.Constant(lanes, ir.Undefined), builder.trunc(value, ir.IntType(8)),
                                 ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, ir.Constant(lanes, ir.Undefined), _lane_indices([0] * lanes.count))


def _equal_mask(width: int, values: int):
    """An intrinsic: bit ``i`` set where the byte at ``address + index + i``
    (``i`` < ``width``) equals the low byte of one of ``values`` arguments."""

    def codegen(context, builder, signature, args):
        lanes = ir.VectorType(ir.IntType(8), width)
        data = builder.load(_pointer(context, builder, signature, args, lanes), align=1)
        found = None
        for arg in args[2:]:
            equal = builder.icmp_unsigned("==", data, _splat(builder, arg, lanes))
            found = equal if found is None else builder.or_(found, equal)
        return builder.zext(builder.bitcast(found, ir.IntType(width)), ir.IntType(64))

    def typer(typingctx, address, index, *bytes_):
        if len(bytes_) != values or not all(isinstance(t, types.Integer) for t in (address, index, *bytes_)):
            return None
        return types.uint64(address, index, *bytes_), codegen

    return typer


@intrinsic
def equal_mask64(typingctx, address, index, a, b, c):
    """Bit ``i`` set where the byte at ``address + index + i`` (``i`` < 64)
    equals the low byte of ``a``, ``b`` or ``c``.

    One 64-byte vector load and three compares: LLVM lowers the ``<64 x i1>``
    result to a mask register (AVX-512) or byte-mask moves (AVX2, SSE2), so
    field ends are found without a loop per byte. All 64 bytes must be readable.
    """
    return _equal_mask(64, 3)(typingctx, address, index, a, b, c)


@intrinsic
def equal_mask32(typingctx, address, index, a, b):
    """:func:`equal_mask64` for 32 bytes and two byte values (bits 0-31)."""
    return _equal_mask(32, 2)(typingctx, address, index, a, b)


def _bits32(builder, lanes):
    """A ``<32 x i1>`` as the low 32 bits of a uint64."""
    return builder.zext(builder.bitcast(lanes, ir.IntType(32)), ir.IntType(64))


@intrinsic
def number_masks32(typingctx, address, index, decimal):
    """``(non-digits, decimal points, exponent letters)``: bit ``i`` of each is
    set where the byte at ``address + index + i`` (``i`` < 32) is not an ASCII
    digit, is the low byte of ``decimal``, is ``e`` or ``E``.

    One 32-byte vector load and three compares: the shape of a number (where
    its point and exponent are) without a loop. All 32 bytes must be readable.
    """
    if not all(isinstance(t, types.Integer) for t in (address, index, decimal)):
        return None
    result = types.UniTuple(types.uint64, 3)

    def codegen(context, builder, signature, args):
        data = builder.load(_pointer(context, builder, signature, args, _BYTES32), align=1)
        non_digit = builder.icmp_unsigned(">", builder.sub(data, ir.Constant(_BYTES32, [48] * 32)),
                                          ir.Constant(_BYTES32, [9] * 32))
        point = builder.icmp_unsigned("==", data, _splat(builder, args[2]))
        letter = builder.icmp_unsigned("==", builder.or_(data, ir.Constant(_BYTES32, [32] * 32)),
                                       ir.Constant(_BYTES32, [101] * 32))
        return context.make_tuple(builder, result, [_bits32(builder, m) for m in (non_digit, point, letter)])

    return result(address, index, decimal), codegen


def _has_avx2(context) -> bool:
    # Numba compiles for the host CPU (or NUMBA_CPU_NAME/FEATURES); its target
    # features say whether AVX2's multiply-add instructions may be emitted.
    return "+avx2" in getattr(context.codegen(), "_tm_features", "").split(",")


def _multiply_add_pairs(builder, values, weights, wide: ir.VectorType, avx2: str | None):
    """``values[2i] * weights[2i] + values[2i + 1] * weights[2i + 1]`` per lane
    of ``wide`` (half as many lanes, twice as wide): one AVX2 instruction where
    there is one, else LLVM's generic vector ops."""
    if avx2 is not None:
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(wide, [values.type, values.type]), avx2)
        return builder.call(fn, [values, weights])
    lanes = wide.count
    wide_values = builder.zext(values, ir.VectorType(wide.element, 2 * lanes))
    products = builder.mul(wide_values, builder.zext(weights, wide_values.type))
    return builder.add(builder.shuffle_vector(products, products, _lane_indices(range(0, 2 * lanes, 2))),
                       builder.shuffle_vector(products, products, _lane_indices(range(1, 2 * lanes, 2))))


@intrinsic
def digits_value32(typingctx, address, end, count, skip):
    """The value of the ``count`` (0-24, at most 19 after leading zeros) ASCII
    digits that end at ``address + end``, leaving out one byte (a decimal
    point) at lane ``skip`` of the 32 bytes before ``end`` (``skip`` < 0:
    none). The caller has checked that they are digits; the 32 bytes before
    ``end`` must be readable.

    One vector load: bytes before the point move up one lane to close the
    gap, lanes before the digits are zeroed, then pairs, quads and octets are
    combined by multiply-add (fast_float's and simdjson's reduction, 32 lanes
    at once), and three octets by two scalar multiplies.
    """
    if not all(isinstance(t, types.Integer) for t in (address, end, count, skip)):
        return None

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        at, end, count, skip = (context.cast(builder, a, t, types.int64) for a, t in zip(args, signature.args))
        pointer = builder.inttoptr(builder.add(at, builder.sub(end, ir.Constant(i64, 32))), _BYTES32.as_pointer())
        data = builder.load(pointer, align=1)
        lane = ir.Constant(_BYTES32, list(range(32)))
        before_point = builder.icmp_signed("<=", lane, _splat(builder, builder.select(
            builder.icmp_signed("<", skip, ir.Constant(i64, 0)), ir.Constant(i64, -1), skip)))
        closed = builder.select(before_point, builder.shuffle_vector(data, data, _lane_indices([0, *range(31)])), data)
        in_number = builder.icmp_signed(">=", lane, _splat(builder, builder.sub(ir.Constant(i64, 32), count)))
        digits = builder.select(in_number, builder.sub(closed, ir.Constant(_BYTES32, [48] * 32)),
                                ir.Constant(_BYTES32, [0] * 32))
        avx2 = _has_avx2(context)
        pairs = _multiply_add_pairs(builder, digits, ir.Constant(_BYTES32, [10, 1] * 16), _I16X16,
                                    "llvm.x86.avx2.pmadd.ub.sw" if avx2 else None)
        quads = _multiply_add_pairs(builder, pairs, ir.Constant(_I16X16, [100, 1] * 8), _I32X8,
                                    "llvm.x86.avx2.pmadd.wd" if avx2 else None)
        quad_pairs = ir.VectorType(ir.IntType(32), 4)
        octets = builder.add(
            builder.mul(builder.shuffle_vector(quads, quads, _lane_indices([0, 2, 4, 6])),
                        ir.Constant(quad_pairs, [10_000] * 4)),
            builder.shuffle_vector(quads, quads, _lane_indices([1, 3, 5, 7])))

        def octet(i):
            return builder.zext(builder.extract_element(octets, ir.Constant(ir.IntType(32), i)), i64)

        # At most 24 digits fill lanes 8-31 (octet 0 is zero), at most 19 of them significant: the
        # sum fits in 64 bits
        return builder.add(builder.add(builder.mul(octet(1), ir.Constant(i64, 10**16)),
                                       builder.mul(octet(2), ir.Constant(i64, 10**8))), octet(3))

    return types.uint64(address, end, count, skip), codegen


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


@intrinsic
def mul128(typingctx, a, b):
    """The full 128-bit product of two uint64s as ``(high, low)`` (one ``mul`` on x86-64)."""
    if a != types.uint64 or b != types.uint64:
        return None
    result = types.UniTuple(types.uint64, 2)

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        low = builder.trunc(product, ir.IntType(64))
        high = builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))
        return context.make_tuple(builder, result, [high, low])

    return result(types.uint64, types.uint64), codegen


@njit(nogil=True, cache=True, inline="always")
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


@njit(nogil=True, cache=True, inline="always")
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
