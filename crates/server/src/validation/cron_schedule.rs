//! A CronJob's `schedule` and `timeZone` (`pkg/apis/batch/validation/validation.go`
//! `validateScheduleFormat`, `validateTimeZone`), with the schedule parsed as
//! `github.com/robfig/cron/v3` `ParseStandard` parses it (`parser.go`:
//! `Parse`, `normalizeFields`, `getRange`, `parseIntOrName`, `mustParseInt`,
//! `parseDescriptor`) and its error texts.

use serde_json::Value;

use super::field;
use crate::go::strconv::quote;
use crate::status::FieldError;

/// The zone database `time.LoadLocation` reads.
const ZONEINFO: &str = "/usr/share/zoneinfo";

struct Bounds {
    min: i64,
    max: i64,
    names: &'static [(&'static str, i64)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DAYS_OF_MONTH: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DAYS_OF_WEEK: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// `validateScheduleFormat`: the parse error, then the TZ rules (a `TZ` in
/// the schedule is kept only when the old schedule had one).
pub fn schedule(
    schedule: &str,
    allow_tz: bool,
    time_zone: Option<&str>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    if let Err(error) = parse_standard(schedule) {
        errors.push(field::invalid(path, schedule, error));
    }
    let has_tz = schedule.contains("TZ");
    if allow_tz && has_tz && time_zone.is_some() {
        errors.push(field::invalid(
            path,
            schedule,
            "cannot use both timeZone field and TZ or CRON_TZ in schedule",
        ));
    } else if !allow_tz && has_tz {
        errors.push(field::invalid(
            path,
            schedule,
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ));
    }
}

/// `validateTimeZone`.
pub fn time_zone(value: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(zone) = value.and_then(Value::as_str) else {
        return;
    };
    if zone.is_empty() {
        errors.push(field::invalid(
            path,
            zone,
            "timeZone must be nil or non-empty string",
        ));
        return;
    }
    let valid_part = |part: &str| {
        (1..=14).contains(&part.len())
            && part
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || b".-_+".contains(&byte))
            && part != "."
            && part != ".."
            && !part.starts_with('-')
    };
    if !zone.split('/').all(valid_part) {
        errors.push(field::invalid(
            path,
            zone,
            format!("unknown time zone {zone}"),
        ));
        return;
    }
    if zone.eq_ignore_ascii_case("Local") {
        errors.push(field::invalid(
            path,
            zone,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    if let Err(error) = load_location(zone) {
        errors.push(field::invalid(path, zone, error));
    }
}

/// `time.LoadLocation` against the system's zone database.
fn load_location(name: &str) -> Result<(), String> {
    if name.is_empty() || name == "UTC" || name == "Local" {
        return Ok(());
    }
    let path = std::path::Path::new(ZONEINFO).join(name);
    let is_zone_file = std::fs::read(&path)
        .map(|bytes| bytes.starts_with(b"TZif"))
        .unwrap_or(false);
    if is_zone_file {
        Ok(())
    } else {
        Err(format!("unknown time zone {name}"))
    }
}

/// `cron.ParseStandard`: five fields or a descriptor, with an optional
/// `TZ=`/`CRON_TZ=` prefix.
pub fn parse_standard(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".to_string());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let equals = spec.find('=').unwrap_or(0);
        // Go slices up to the first space (and panics without one).
        let space = spec.find(' ').unwrap_or(spec.len());
        let name = spec.get(equals + 1..space).unwrap_or_default();
        load_location(name).map_err(|error| format!("provided bad location {name}: {error}"))?;
        spec = spec[space..].trim();
    }
    if spec.starts_with('@') {
        return descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (text, bounds) in
        fields
            .iter()
            .zip([&MINUTES, &HOURS, &DAYS_OF_MONTH, &MONTHS, &DAYS_OF_WEEK])
    {
        for expression in text.split(',').filter(|part| !part.is_empty()) {
            range(expression, bounds)?;
        }
    }
    Ok(())
}

/// `getRange`: `*`, `?`, `n`, `n-m`, each with an optional `/step`.
fn range(expression: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expression.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (bounds.min, bounds.max)
    } else {
        let start = int_or_name(low_and_high[0], bounds)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, int_or_name(low_and_high[1], bounds)?),
            _ => return Err(format!("too many hyphens: {expression}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(range_and_step[1])?;
            // "N/step" means "N-max/step".
            if low_and_high.len() == 1 {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expression}")),
    };
    if start < bounds.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expression}",
            bounds.min
        ));
    }
    if end > bounds.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expression}",
            bounds.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expression}"
        ));
    }
    if step == 0 {
        return Err(format!(
            "step of range should be a positive number: {expression}"
        ));
    }
    Ok(())
}

fn int_or_name(expression: &str, bounds: &Bounds) -> Result<i64, String> {
    let lower = expression.to_ascii_lowercase();
    if let Some((_, value)) = bounds.names.iter().find(|(name, _)| *name == lower) {
        return Ok(*value);
    }
    must_parse_int(expression)
}

/// `mustParseInt`: `strconv.Atoi`, not negative.
fn must_parse_int(expression: &str) -> Result<i64, String> {
    let number = atoi(expression)
        .map_err(|error| format!("failed to parse int from {expression}: {error}"))?;
    if number < 0 {
        return Err(format!(
            "negative number ({number}) not allowed: {expression}"
        ));
    }
    Ok(number)
}

/// Go's `strconv.Atoi` and its error text.
fn atoi(text: &str) -> Result<i64, String> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            quote(text)
        ));
    }
    text.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", quote(text)))
}

/// `parseDescriptor`.
fn descriptor(spec: &str) -> Result<(), String> {
    if matches!(
        spec,
        "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight" | "@hourly"
    ) {
        return Ok(());
    }
    if let Some(duration) = spec.strip_prefix("@every ") {
        return crate::go::time::parse_go_duration(duration)
            .map(|_| ())
            .map_err(|error| format!("failed to parse duration {spec}: {error}"));
    }
    Err(format!("unrecognized descriptor: {spec}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases of kube's `TestValidateCronJob` schedules and robfig/cron's `parser_test.go`.
    #[test]
    fn schedules_parse_as_robfig_cron() {
        for good in [
            "* * * * *",
            "*/5 1-3,7 ? JAN-mar sun",
            "0 0 1 1 *",
            "@hourly",
            "@every 1h30m",
            "TZ=UTC 0 0 * * *",
            "5/15 * * * *",
        ] {
            assert_eq!(parse_standard(good), Ok(()), "{good}");
        }
        for (bad, message) in [
            ("", "empty spec string"),
            ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
            ("60 * * * *", "end of range (60) above maximum (59): 60"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            (
                "5-3 * * * *",
                "beginning of range (5) beyond end of range (3): 5-3",
            ),
            (
                "*/0 * * * *",
                "step of range should be a positive number: */0",
            ),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("*/1/2 * * * *", "too many slashes: */1/2"),
            (
                "x * * * *",
                "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            ("*/-1 * * * *", "negative number (-1) not allowed: -1"),
            (
                "@every x",
                "failed to parse duration @every x: time: invalid duration \"x\"",
            ),
            ("@sometimes", "unrecognized descriptor: @sometimes"),
            (
                "TZ=Nowhere/Land 0 * * * *",
                "provided bad location Nowhere/Land: unknown time zone Nowhere/Land",
            ),
        ] {
            assert_eq!(parse_standard(bad), Err(message.to_string()), "{bad}");
        }
    }

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors
            .iter()
            .map(|error| format!("{}: {}", error.field, error.body()))
            .collect()
    }

    #[test]
    fn time_zones_and_tz_in_schedules() {
        let mut errors = Vec::new();
        schedule(
            "TZ=UTC 0 * * * *",
            false,
            None,
            "spec.schedule",
            &mut errors,
        );
        time_zone(Some(&Value::from("Local")), "spec.timeZone", &mut errors);
        time_zone(
            Some(&Value::from("Mars/Olympus_Mons")),
            "spec.timeZone",
            &mut errors,
        );
        time_zone(Some(&Value::from("../etc")), "spec.timeZone", &mut errors);
        time_zone(Some(&Value::from("")), "spec.timeZone", &mut errors);
        assert_eq!(
            messages(&errors),
            [
                "spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                "spec.timeZone: Invalid value: \"Local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
                "spec.timeZone: Invalid value: \"Mars/Olympus_Mons\": unknown time zone Mars/Olympus_Mons",
                "spec.timeZone: Invalid value: \"../etc\": unknown time zone ../etc",
                "spec.timeZone: Invalid value: \"\": timeZone must be nil or non-empty string",
            ]
        );
        let mut allowed = Vec::new();
        schedule(
            "TZ=UTC 0 * * * *",
            true,
            Some("UTC"),
            "spec.schedule",
            &mut allowed,
        );
        assert_eq!(
            messages(&allowed),
            ["spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use both timeZone field and TZ or CRON_TZ in schedule"]
        );
    }
}
