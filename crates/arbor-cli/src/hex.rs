//! Hex spelling of values, the default way values cross the command line: the workspace's
//! hex helpers, with an optional `0x` prefix on input.

pub use arbor_core::toolbox::hex::encode;
use arbor_core::toolbox::hex::HexError;

/// Decodes hex digits (either case), with an optional `0x` prefix so that an empty value
/// can still be written as a visible token (`0x`).
pub fn decode(text: &str) -> Result<Vec<u8>, HexError> {
    arbor_core::toolbox::hex::decode(text.strip_prefix("0x").unwrap_or(text).as_bytes())
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
        assert!(decode("abc").unwrap_err().to_string().contains("odd"));
        assert!(decode("zz").unwrap_err().to_string().contains("offset 0"));
        assert!(decode("0g").unwrap_err().to_string().contains("offset 1"));
    }
}
