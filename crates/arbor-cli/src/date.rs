//! UTC rendering of commit dates, kept here to avoid a date-time dependency for one format.

/// Renders seconds since the Unix epoch as RFC 3339 UTC (`2018-06-30T16:07:32Z`), the form
/// Tezos uses for block timestamps.
pub fn format_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Proleptic Gregorian (year, month, day) of a day count from 1970-01-01
/// (Howard Hinnant's `civil_from_days`). Days are at most ~1.1e14 for an i64 of
/// seconds, so no step can overflow.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // shift the epoch to 0000-03-01, so leap days end a year
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(-1), "1969-12-31T23:59:59Z");
        assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_utc(1_530_374_852), "2018-06-30T16:07:32Z");
        assert_eq!(format_utc(4_102_444_800), "2100-01-01T00:00:00Z");
        // The extremes must not overflow.
        let _ = format_utc(i64::MIN);
        let _ = format_utc(i64::MAX);
    }
}
