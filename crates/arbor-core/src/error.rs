//! Errors shared by the parsing helpers of this crate.

use core::fmt;

/// Why a textual hash (hex or base58check) could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HashParseError {
    /// The hex string does not have exactly 64 characters.
    HexLength(usize),
    /// A character outside `[0-9a-fA-F]` was found at this byte offset.
    HexChar(usize),
    /// A character outside the Bitcoin base58 alphabet was found at this offset.
    Base58Char(usize),
    /// The base58 string decodes to fewer than 4 checksum bytes.
    Base58TooShort,
    /// The 4 trailing checksum bytes do not match the double SHA-256 of the data.
    BadChecksum,
    /// The decoded data does not start with the expected prefix bytes.
    WrongPrefix,
    /// The decoded payload does not have the expected length (the actual length).
    PayloadLength(usize),
}

impl fmt::Display for HashParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HexLength(n) => write!(f, "hex hash must have 64 characters, got {n}"),
            Self::HexChar(i) => write!(f, "invalid hex character at offset {i}"),
            Self::Base58Char(i) => write!(f, "invalid base58 character at offset {i}"),
            Self::Base58TooShort => f.write_str("base58check string too short for a checksum"),
            Self::BadChecksum => f.write_str("base58check checksum mismatch"),
            Self::WrongPrefix => f.write_str("unexpected base58check prefix"),
            Self::PayloadLength(n) => write!(f, "unexpected payload length {n}"),
        }
    }
}

impl core::error::Error for HashParseError {}
