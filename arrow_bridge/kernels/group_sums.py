"""The aggregate stage's hot loops (:mod:`arrow_bridge.aggregates`): group keys
numbered (short strings read as words, then rows by first appearance), and
exact sums per group.

An exact float sum keeps, per group and binary exponent, the sum of the
mantissas that have that exponent, in two int64 halves (26 and 27 bits), so no
addition rounds and none overflows before 2**36 values; the caller turns the
bins into one integer per group. The sum is then the same whatever the order
of the rows, the spans or the threads. Int sums keep two 32-bit halves.
"""
import numpy as np

from arrow_bridge.jit import njit

_MANTISSA_BITS = 52
_EXPONENTS = 2048
#: Bits of a mantissa summed in a bin's low half.
LOW_BITS = 26
#: A finite double is its 53-bit mantissa times 2**(biased exponent - EXPONENT_BIAS).
EXPONENT_BIAS = 1075


@njit(nogil=True, cache=True)
def first_appearance_ids(codes, size):
    """``(group of each row, first row of each group)``: the distinct values of
    ``codes`` (each in ``[0, size)``) numbered in the order they first appear.

    >>> ids, firsts = first_appearance_ids(np.array([7, 3, 7, 0]), 8)
    >>> ids.tolist(), firsts.tolist()
    ([0, 1, 0, 2], [0, 1, 3])
    """
    number = np.full(size, -1, dtype=np.int64)
    ids = np.empty(codes.shape[0], dtype=np.int64)
    firsts = np.empty(min(size, codes.shape[0]), dtype=np.int64)
    groups = 0
    for i in range(codes.shape[0]):
        code = codes[i]
        if number[code] < 0:
            number[code] = groups
            firsts[groups] = i
            groups += 1
        ids[i] = number[code]
    return ids, firsts[:groups]


@njit(nogil=True, cache=True)
def _biased_exponent(word):
    """A double's biased exponent, subnormals at 1 (they share its unit); 0x7FF for NaN and inf."""
    exponent = np.int64(word >> np.uint64(_MANTISSA_BITS)) & 0x7FF
    return exponent if exponent else np.int64(1)


@njit(nogil=True, cache=True)
def exponent_range(values):
    """``(lowest, highest)`` biased exponent of the finite ``values`` (``(1, 1)`` when none):
    the bins :func:`float_sum_bins` needs, a few dozen on real data instead of 2047.

    >>> exponent_range(np.array([1.5, -0.25, np.nan, 0.0]))
    (1021, 1023)
    """
    lowest, highest = np.int64(_EXPONENTS), np.int64(0)
    bits = values.view(np.uint64)
    for i in range(values.shape[0]):
        if not bits[i] << np.uint64(1):
            continue  # a zero adds nothing; at exponent 1 it would widen the range to ~1000 bins
        exponent = _biased_exponent(bits[i])
        if exponent != 0x7FF:
            lowest, highest = min(lowest, exponent), max(highest, exponent)
    return (lowest, highest) if highest else (np.int64(1), np.int64(1))


@njit(nogil=True, cache=True)
def float_sum_bins(values, groups, first, ngroups, lowest, width):
    """``(bins, specials)`` of groups ``first .. first + ngroups - 1`` (rows of
    other groups are passed over, so a caller can bound memory by taking the
    groups a slice at a time): per group and biased exponent ``lowest + k``,
    ``bins[g - first, k] = (low, high)`` sums of the 26 low and 27 high bits of
    the signed 53-bit mantissas of the group's finite ``values`` (a value is
    ``mantissa * 2**(exponent - EXPONENT_BIAS)``, subnormals at exponent 1);
    ``specials[g - first]`` counts NaN, +inf and -inf.

    >>> bins, specials = float_sum_bins(np.array([1.5, -0.5, np.inf]), np.array([0, 0, 0]), 0, 1, 1022, 2)
    >>> bins[0, 1].tolist(), bins[0, 0].tolist(), specials.tolist()
    ([0, 100663296], [0, -67108864], [[0, 1, 0]])
    """
    bins = np.zeros((ngroups, width, 2), dtype=np.int64)
    specials = np.zeros((ngroups, 3), dtype=np.int64)
    bits = values.view(np.uint64)
    for i in range(values.shape[0]):
        g = groups[i] - first
        if g < 0 or g >= ngroups:
            continue
        word = bits[i]
        if not word << np.uint64(1):
            continue  # zeros add nothing and have no bin (see exponent_range)
        exponent = _biased_exponent(word)
        mantissa = np.int64(word & np.uint64((1 << _MANTISSA_BITS) - 1))
        if exponent == 0x7FF:
            specials[g, 0 if mantissa else (2 if word >> np.uint64(63) else 1)] += 1
            continue
        if word & np.uint64(0x7FF << _MANTISSA_BITS):  # normal: the implicit leading 1
            mantissa |= np.int64(1) << _MANTISSA_BITS
        low, high = mantissa & ((1 << LOW_BITS) - 1), mantissa >> LOW_BITS  # all int64: no mixed-type branches
        if word >> np.uint64(63):
            low, high = -low, -high
        bins[g, exponent - lowest, 0] += low
        bins[g, exponent - lowest, 1] += high
    return bins, specials


@njit(nogil=True, cache=True)
def int_sum_halves(values, groups, ngroups):
    """``(low, high)``: per group, the sums of the low 32 bits (unsigned) and
    the high 32 bits (signed) of the int64 ``values``; each group's exact sum
    is ``low + (high << 32)``, and neither half overflows before 2**31 values.

    >>> low, high = int_sum_halves(np.array([2**62, 2**62, -3]), np.array([0, 0, 1]), 2)
    >>> [int(lo) + (int(hi) << 32) for lo, hi in zip(low, high)]
    [9223372036854775808, -3]
    """
    low = np.zeros(ngroups, dtype=np.int64)
    high = np.zeros(ngroups, dtype=np.int64)
    for i in range(values.shape[0]):
        g = groups[i]
        low[g] += values[i] & 0xFFFFFFFF
        high[g] += values[i] >> 32
    return low, high


_FIBONACCI = 0x9E3779B97F4A7C15  # 2**64 / golden ratio: multiplicative hashing spreads nearby words


@njit(nogil=True, cache=True, inline="always")
def _slot_of(word, slots, words, bits):
    """The slot holding ``word``, or the free one where it goes (linear probing)."""
    slot = (word * np.uint64(_FIBONACCI)) >> np.uint64(64 - bits)
    while slots[slot] >= 0 and words[slots[slot]] != word:
        slot = (slot + np.uint64(1)) & np.uint64((1 << bits) - 1)
    return slot


@njit(nogil=True, cache=True)
def _doubled(array):
    grown = np.empty(2 * array.shape[0], dtype=array.dtype)
    grown[:array.shape[0]] = array
    return grown


@njit(nogil=True, cache=True)
def short_string_codes(offsets, data):
    """``(codes, distinct)``: the strings ``data[offsets[i]:offsets[i + 1]]``
    numbered by first appearance, each read as one word (its bytes and its
    length), for group keys such as TPC-H's flags; ``distinct`` is -1 when a
    string is longer than 7 bytes (the caller then hashes them otherwise).

    >>> codes, distinct = short_string_codes(np.array([0, 1, 2, 3, 3], np.int32), np.frombuffer(b"ABA", np.uint8))
    >>> codes.tolist(), distinct
    ([0, 1, 0, 2], 3)
    """
    n = offsets.shape[0] - 1
    codes = np.empty(n, dtype=np.int64)
    single = np.full(257, -1, dtype=np.int64)  # strings of one byte (256: the empty one) skip the hashing
    bits = 6
    slots = np.full(1 << bits, -1, dtype=np.int64)  # an entry of words/numbers, or -1: free
    words = np.empty(1 << (bits - 1), dtype=np.uint64)  # kept at most half full
    numbers = np.empty(1 << (bits - 1), dtype=np.int64)
    hashed = distinct = 0
    for i in range(n):
        start, length = offsets[i], offsets[i + 1] - offsets[i]
        if length <= 1:
            byte = data[start] if length else 256
            if single[byte] < 0:
                single[byte] = distinct
                distinct += 1
            codes[i] = single[byte]
            continue
        if length > 7:
            return codes, -1
        word = np.uint64(length) << np.uint64(56)
        for k in range(length):
            word |= np.uint64(data[start + k]) << np.uint64(8 * k)
        slot = _slot_of(word, slots, words, bits)
        if slots[slot] < 0:
            if hashed == words.shape[0]:  # twice the room, every word placed again
                bits += 1
                words, numbers = _doubled(words), _doubled(numbers)
                slots = np.full(1 << bits, -1, dtype=np.int64)
                for h in range(hashed):
                    slots[_slot_of(words[h], slots, words, bits)] = h
                slot = _slot_of(word, slots, words, bits)
            slots[slot], words[hashed], numbers[hashed] = hashed, word, distinct
            hashed += 1
            distinct += 1
        codes[i] = numbers[slots[slot]]
    return codes, distinct
