//! UTC rendering and RFC 3339 parsing of commit dates, kept here to avoid a date-time
//! dependency for one format.

/// Renders seconds since the Unix epoch as RFC 3339 UTC (`2018-06-30T16:07:32Z`), the form
/// Tezos uses for block timestamps.
pub fn format_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Clap value parser for `--date`: seconds since the Unix epoch, or an RFC 3339 date-time with
/// `Z` or a `±HH:MM` offset (`T` or a space between date and time). Commit dates are whole
/// seconds, so a fraction is refused unless it is zero.
pub fn parse_date(text: &str) -> Result<i64, String> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<i64>() {
        return Ok(secs);
    }
    parse_rfc3339(t).ok_or_else(|| {
        format!("not a date: {text:?} (seconds since the epoch, or RFC 3339 such as 2018-06-30T16:07:32Z)")
    })
}

fn parse_rfc3339(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok())?
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d, h, mi, s) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &t[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let end = frac.find(|c: char| !c.is_ascii_digit()).unwrap_or(frac.len());
        if end == 0 || frac[..end].bytes().any(|c| c != b'0') {
            return None;
        }
        rest = &frac[end..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let r = &rest[1..];
            if r.len() != 5 || r.as_bytes()[2] != b':' {
                return None;
            }
            let (oh, om): (i64, i64) = (r[..2].parse().ok()?, r[3..].parse().ok()?);
            if oh > 23 || om > 59 {
                return None;
            }
            sign * (oh * 3600 + om * 60)
        }
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&mo) || d < 1 || d > month_days[(mo - 1) as usize] || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset)
}

/// Days from 1970-01-01 of a proleptic Gregorian date (the inverse of `civil_from_days`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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

    #[test]
    fn parses_seconds_and_rfc3339() {
        assert_eq!(parse_date("-5"), Ok(-5));
        assert_eq!(parse_date("1530374852"), Ok(1_530_374_852));
        for secs in [0, -1, 951_782_400, 1_530_374_852, 4_102_444_800] {
            assert_eq!(parse_date(&format_utc(secs)), Ok(secs), "{secs}");
        }
        assert_eq!(parse_date("2018-06-30T18:07:32+02:00"), Ok(1_530_374_852));
        assert_eq!(parse_date("2018-06-30 16:07:32.000z"), Ok(1_530_374_852));
        assert_eq!(parse_date("2018-06-30T15:07:32-01:00"), Ok(1_530_374_852));
        for bad in [
            "2018-06-30",
            "2018-02-30T00:00:00Z",
            "2018-06-30T24:00:00Z",
            "2018-06-30T16:07:32",
            "2018-06-30T16:07:32.5Z",
            "yesterday",
            "2018-06-30T16:07:32+2:00",
        ] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
    }
}
