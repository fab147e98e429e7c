//! OCaml's `Hashtbl.seeded_hash` restricted to strings, which irmin uses to
//! pick the inode slot of a step. It is MurmurHash3's 32-bit mixing applied
//! to little-endian words, followed by OCaml's final mix and a 30-bit mask
//! (OCaml ints on 32-bit platforms are 31 bits, so the result stays positive).

/// One MurmurHash3 round folding the word `w` into the state `h`.
#[inline(always)]
fn mix(h: u32, w: u32) -> u32 {
    let w = w.wrapping_mul(0xcc9e_2d51).rotate_left(15).wrapping_mul(0x1b87_3593);
    (h ^ w).rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64)
}

/// MurmurHash3's finalizer (OCaml's `FINAL_MIX`), spreading every input bit.
#[inline(always)]
fn final_mix(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// `Hashtbl.seeded_hash seed s` for an OCaml string `s`, i.e. the value
/// masked to 30 bits (`0x3FFF_FFFF`).
pub fn caml_hash(seed: u32, s: &[u8]) -> u32 {
    let mut h = seed;
    let mut words = s.chunks_exact(4);
    for w in &mut words {
        h = mix(h, u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    }
    // The 1-3 trailing bytes form one zero-padded little-endian word, gathered byte by byte:
    // a copy of their variable length into a padded word was a call to `memcpy` for each
    // inode slot a walk computed (most steps' lengths are not multiples of four).
    let tail = match *words.remainder() {
        [] => None,
        [a] => Some(u32::from(a)),
        [a, b] => Some(u32::from(a) | u32::from(b) << 8),
        [a, b, c, ..] => Some(u32::from(a) | u32::from(b) << 8 | u32::from(c) << 16),
    };
    if let Some(w) = tail {
        h = mix(h, w);
    }
    // OCaml mixes in the length as a 32-bit value (truncating on purpose).
    h ^= s.len() as u32;
    final_mix(h) & 0x3FFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::caml_hash;

    #[test]
    fn published_check_values() {
        assert_eq!(caml_hash(0, b"a"), 721_651_713);
        assert_eq!(caml_hash(0, b"abcdef"), 926_323_203);
    }

    /// The tail gathered byte by byte is the zero-padded little-endian word it was read as
    /// before, for every tail length and byte value that matters (high bits set included).
    #[test]
    fn tail_bytes_make_the_padded_word() {
        fn padded_word_hash(seed: u32, s: &[u8]) -> u32 {
            let mut h = seed;
            let mut words = s.chunks_exact(4);
            for w in &mut words {
                h = super::mix(h, u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
            }
            let tail = words.remainder();
            if !tail.is_empty() {
                let mut w = [0u8; 4];
                w[..tail.len()].copy_from_slice(tail);
                h = super::mix(h, u32::from_le_bytes(w));
            }
            h ^= s.len() as u32;
            super::final_mix(h) & 0x3FFF_FFFF
        }
        let bytes: alloc::vec::Vec<u8> = (0..16u32).map(|i| (i * 37 + 0x80) as u8).collect();
        for len in 0..=bytes.len() {
            for seed in [0, 1, 5] {
                let s = &bytes[..len];
                assert_eq!(caml_hash(seed, s), padded_word_hash(seed, s), "length {len}, seed {seed}");
            }
        }
    }

    #[test]
    fn result_is_masked_and_seed_matters() {
        for s in [&b""[..], b"x", b"xy", b"xyz", b"wxyz", b"vwxyz"] {
            assert!(caml_hash(0, s) <= 0x3FFF_FFFF);
            assert!(caml_hash(7, s) <= 0x3FFF_FFFF);
        }
        assert_ne!(caml_hash(0, b"abcdef"), caml_hash(1, b"abcdef"));
    }
}
