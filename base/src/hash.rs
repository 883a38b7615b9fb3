//! FNV-1a, 64 bit: a hash that is the same in every build and on every machine (unlike `std`'s
//! hasher), for integrity checks and stable ids. Not for security.

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(OFFSET, |h, &b| (h ^ b as u64).wrapping_mul(PRIME))
}

/// FNV-1a of several parts, each followed by the byte `0xff` (which no UTF-8 text holds), so
/// that `["ab", "c"]` and `["a", "bc"]` differ.
pub fn fnv1a64_parts(parts: &[&[u8]]) -> u64 {
    parts.iter().fold(OFFSET, |h, p| p.iter().chain(&[0xff]).fold(h, |h, &b| (h ^ b as u64).wrapping_mul(PRIME)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_test_vectors() {
        // FNV-1a 64 test vectors (Fowler, Noll, Vo).
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn parts_are_separated() {
        assert_ne!(fnv1a64_parts(&[b"ab", b"c"]), fnv1a64_parts(&[b"a", b"bc"]));
        assert_eq!(fnv1a64_parts(&[b"ab"]), fnv1a64(b"ab\xff"));
    }
}
