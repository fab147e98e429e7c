//! Hex spelling of values, the default way values cross the command line.

/// Lower-case hex of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

/// Decodes hex digits (either case), with an optional `0x` prefix so that an empty value
/// can still be written as a visible token (`0x`).
pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    let digits = text.strip_prefix("0x").unwrap_or(text).as_bytes();
    if digits.len() % 2 == 1 {
        return Err(format!("odd number of hex digits ({})", digits.len()));
    }
    digits
        .chunks_exact(2)
        .enumerate()
        .map(|(i, pair)| {
            let digit = |k: usize| {
                char::from(pair[k]).to_digit(16).ok_or_else(|| format!("invalid hex digit at offset {}", 2 * i + k))
            };
            Ok((digit(0)? << 4 | digit(1)?) as u8)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects() {
        assert_eq!(decode("00ff7A").unwrap(), vec![0, 255, 0x7a]);
        assert_eq!(encode(&[0, 255, 0x7a]), "00ff7a");
        assert_eq!(decode("0x").unwrap(), Vec::<u8>::new());
        assert_eq!(decode("0x3030").unwrap(), b"00");
        assert!(decode("abc").unwrap_err().contains("odd"));
        assert!(decode("zz").unwrap_err().contains("offset 0"));
        assert!(decode("0g").unwrap_err().contains("offset 1"));
    }
}
