//! Wall-clock time as Unix seconds and milliseconds (0 when the clock is before 1970), and
//! calendar dates from it.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn now_unix() -> u64 {
    since_epoch().as_secs()
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn unix_ms() -> u128 {
    since_epoch().as_millis()
}

/// Nanoseconds since the Unix epoch (0 if the clock is before it): for tokens and seeds that
/// must differ between calls.
pub fn unix_ns() -> u128 {
    since_epoch().as_nanos()
}

/// Seconds since the Unix epoch with their fraction (TensorBoard's wall times).
pub fn unix_secs_f64() -> f64 {
    since_epoch().as_secs_f64()
}

fn since_epoch() -> std::time::Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// Seconds since the epoch -> (year, month, day), proleptic Gregorian, UTC
/// (Howard Hinnant's civil_from_days).
pub fn civil_date(secs: u64) -> (i64, i64, i64) {
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_of_known_days() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(951_782_400), (2000, 2, 29));
        assert_eq!(civil_date(1_796_342_400), (2026, 12, 4));
        assert_eq!(civil_date(1_796_342_400 - 1), (2026, 12, 3));
    }

    #[test]
    fn the_clock_is_after_this_code_was_written() {
        assert!(now_unix() > 1_700_000_000);
        assert!(unix_ms() / 1000 >= now_unix() as u128 - 1);
        assert!(unix_ns() / 1_000_000 >= unix_ms() - 1 && unix_secs_f64() >= now_unix() as f64 - 1.0);
    }
}
