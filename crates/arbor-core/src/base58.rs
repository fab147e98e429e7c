//! Base58check as used by Tezos: Bitcoin alphabet, the data being a fixed
//! prefix (which makes the text start with a recognisable tag such as "Co")
//! followed by the payload, and a 4-byte double-SHA-256 checksum.

use alloc::string::String;
use alloc::vec::Vec;

use crate::error::HashParseError;

/// Encodes `prefix ‖ payload` as base58 with a trailing 4-byte checksum
/// (first bytes of SHA-256(SHA-256(prefix ‖ payload))).
pub fn base58check_encode(prefix: &[u8], payload: &[u8]) -> String {
    let mut data = Vec::with_capacity(prefix.len() + payload.len());
    data.extend_from_slice(prefix);
    data.extend_from_slice(payload);
    bs58::encode(data).with_check().into_string()
}

/// Decodes a base58check string, verifies its checksum and splits the data
/// into its first `prefix_len` bytes (the prefix) and the rest (the payload).
///
/// The caller is expected to compare the returned prefix with the one it
/// wants; this function only checks that there are enough bytes for it.
pub fn base58check_decode(s: &str, prefix_len: usize) -> Result<(Vec<u8>, Vec<u8>), HashParseError> {
    let mut data = bs58::decode(s).with_check(None).into_vec().map_err(map_bs58_error)?;
    if data.len() < prefix_len {
        return Err(HashParseError::WrongPrefix);
    }
    let payload = data.split_off(prefix_len);
    Ok((data, payload))
}

/// Translates the decoder's errors into ours so callers see one error type.
fn map_bs58_error(e: bs58::decode::Error) -> HashParseError {
    match e {
        bs58::decode::Error::InvalidCharacter { index, .. } | bs58::decode::Error::NonAsciiCharacter { index } => {
            HashParseError::Base58Char(index)
        }
        bs58::decode::Error::InvalidChecksum { .. } => HashParseError::BadChecksum,
        bs58::decode::Error::NoChecksum => HashParseError::Base58TooShort,
        // The remaining (non-exhaustive) cases cannot occur without a version
        // byte or a fixed buffer; report them as a checksum failure.
        _ => HashParseError::BadChecksum,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn round_trip_keeps_prefix_and_payload() {
        let s = base58check_encode(&[0x4f, 0xc7], &[7u8; 32]);
        assert!(s.starts_with("Co"), "{s}");
        let (p, d) = base58check_decode(&s, 2).unwrap();
        assert_eq!(p, vec![0x4f, 0xc7]);
        assert_eq!(d, vec![7u8; 32]);
    }

    #[test]
    fn known_bs58check_value() {
        // Reference value from the Bitcoin base58check examples in bs58's docs.
        let s = base58check_encode(&[], &[0x60, 0x65, 0xe7, 0x9b, 0xba, 0x2f, 0x78]);
        assert_eq!(s, "QuT57JNzzWTu7mW");
    }

    #[test]
    fn rejects_bad_checksum_and_characters() {
        let s = base58check_encode(&[0x4f, 0xc7], &[1u8; 32]);
        // Change the last character: the checksum no longer matches.
        let mut bad: Vec<u8> = s.clone().into_bytes();
        let last = bad.len() - 1;
        bad[last] = if bad[last] == b'2' { b'3' } else { b'2' };
        let bad = String::from_utf8(bad).unwrap();
        assert_eq!(base58check_decode(&bad, 2), Err(HashParseError::BadChecksum));
        assert_eq!(base58check_decode("Co0", 2), Err(HashParseError::Base58Char(2)));
        assert_eq!(base58check_decode("", 0), Err(HashParseError::Base58TooShort));
        assert_eq!(base58check_decode(&s, 40), Err(HashParseError::WrongPrefix));
    }
}
