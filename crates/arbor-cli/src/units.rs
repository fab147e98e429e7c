//! Byte figures in human output: a size in the largest binary unit that keeps it at 1 or more,
//! so that a small store reads `16.0 KiB` rather than `0.0 MiB`.

/// `bytes` with its unit: `B` below 1 KiB (exact), else KiB, MiB, GiB or TiB with one decimal.
pub fn bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn each_figure_in_a_unit_that_shows_it() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(16 << 10), "16.0 KiB");
        assert_eq!(bytes(3 << 29), "1.5 GiB");
        assert_eq!(bytes(u64::MAX), "16777216.0 TiB");
    }
}
