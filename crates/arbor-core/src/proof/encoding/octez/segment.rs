//! The packed form of an extender's slot list: each slot in `bits` bits (5 for 32 slots, 1 for
//! 2), most significant bit first, then a single 1 bit and zero bits up to the byte's end. The
//! packed bytes are written with a one-byte length, so at most 255 bytes.

use alloc::vec::Vec;

/// Most bytes a packed segment list may take.
pub const MAX_PACKED: usize = 255;

/// Packs `segments` (each below `1 << bits`); `None` if the result would exceed
/// [`MAX_PACKED`] bytes.
pub fn pack(segments: &[u8], bits: u32) -> Option<Vec<u8>> {
    let total = segments.len() * bits as usize + 1;
    let len = total.div_ceil(8);
    if len > MAX_PACKED {
        return None;
    }
    let mut out = alloc::vec![0u8; len];
    let mut pos = 0usize;
    let mut put = |bit: bool, pos: &mut usize| {
        if bit {
            out[*pos / 8] |= 0x80 >> (*pos % 8);
        }
        *pos += 1;
    };
    for &s in segments {
        for b in (0..bits).rev() {
            put((s >> b) & 1 == 1, &mut pos);
        }
    }
    put(true, &mut pos);
    Some(out)
}

/// Unpacks a segment list; `None` if the bytes are empty, end with a zero byte, or hold a
/// number of data bits that is not a multiple of `bits`.
pub fn unpack(packed: &[u8], bits: u32) -> Option<Vec<u8>> {
    let last = *packed.last()?;
    if last == 0 {
        return None;
    }
    let data_bits = packed.len() * 8 - (last.trailing_zeros() as usize + 1);
    if !data_bits.is_multiple_of(bits as usize) {
        return None;
    }
    let bit = |i: usize| (packed[i / 8] >> (7 - i % 8)) & 1;
    let mut out = Vec::with_capacity(data_bits / bits as usize);
    for k in 0..data_bits / bits as usize {
        let mut v = 0u8;
        for b in 0..bits as usize {
            v = (v << 1) | bit(k * bits as usize + b);
        }
        out.push(v);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_bit_layout() {
        // 0b00001 0b00010 then the end bit: 00001 00010 1 00000 -> 0x08 0xA0
        assert_eq!(pack(&[1, 2], 5).unwrap(), [0x08, 0xA0]);
        assert_eq!(unpack(&[0x08, 0xA0], 5).unwrap(), [1, 2]);
        // An empty list is the end bit alone.
        assert_eq!(pack(&[], 5).unwrap(), [0x80]);
    }

    #[test]
    fn one_bit_layout() {
        // 1 0 1 then the end bit: 1011 0000 -> 0xB0
        assert_eq!(pack(&[1, 0, 1], 1).unwrap(), [0xB0]);
        assert_eq!(unpack(&[0xB0], 1).unwrap(), [1, 0, 1]);
        // Eight segments need a second byte for the end bit.
        assert_eq!(pack(&[0; 8], 1).unwrap(), [0x00, 0x80]);
    }

    #[test]
    fn malformed_rejected() {
        assert_eq!(unpack(&[], 5), None);
        assert_eq!(unpack(&[0x08, 0x00], 5), None);
        // 3 data bits are not a whole 5-bit segment.
        assert_eq!(unpack(&[0x10], 5), None);
    }

    #[test]
    fn round_trips() {
        for n in 0..60usize {
            let segs: Vec<u8> = (0..n).map(|i| (i * 7 % 32) as u8).collect();
            assert_eq!(unpack(&pack(&segs, 5).unwrap(), 5).unwrap(), segs);
            let bits: Vec<u8> = (0..n).map(|i| (i % 3 == 0) as u8).collect();
            assert_eq!(unpack(&pack(&bits, 1).unwrap(), 1).unwrap(), bits);
        }
    }
}
