//! kube's semver library (`apiserver/pkg/cel/library/semverlib.go`):
//! `semver(string)`, `semver(string, normalize)`, `isSemver(string)`,
//! `isSemver(string, normalize)`, and on a version `major()`, `minor()`,
//! `patch()`, `isGreaterThan`, `isLessThan`, `compareTo`. Parsing and
//! ordering are `github.com/blang/semver/v4`'s (`Parse`, `Version.Compare`),
//! with its error texts; `normalize` is kube's `normalizeAndParse`.

use std::cmp::Ordering;
use std::sync::Arc;

use cel::common::types::{Type, BOOL_TYPE, STRING_TYPE};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::{arguments, no_such_overload, overload};

const TYPE_NAME: &str = "kubernetes.Semver";

fn semver_type() -> Type {
    Type::new_opaque_type(TYPE_NAME)
}

/// One pre-release identifier: numeric ones sort before alphanumeric ones.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PreRelease {
    Numeric(u64),
    Alphanumeric(String),
}

impl PreRelease {
    /// `PRVersion.Compare`.
    fn compare(&self, other: &PreRelease) -> Ordering {
        match (self, other) {
            (PreRelease::Numeric(a), PreRelease::Numeric(b)) => a.cmp(b),
            (PreRelease::Alphanumeric(a), PreRelease::Alphanumeric(b)) => a.cmp(b),
            (PreRelease::Numeric(_), PreRelease::Alphanumeric(_)) => Ordering::Less,
            (PreRelease::Alphanumeric(_), PreRelease::Numeric(_)) => Ordering::Greater,
        }
    }
}

/// A `semver.Version` (build metadata is checked, not kept: it does not
/// take part in comparisons).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<PreRelease>,
}

impl Version {
    /// `Version.Compare`.
    fn compare(&self, other: &Version) -> Ordering {
        let numbers =
            (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if numbers != Ordering::Equal {
            return numbers;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            (false, false) => {}
        }
        for (mine, theirs) in self.pre.iter().zip(&other.pre) {
            let order = mine.compare(theirs);
            if order != Ordering::Equal {
                return order;
            }
        }
        self.pre.len().cmp(&other.pre.len())
    }
}

#[derive(Debug, Clone)]
struct CelSemver(Version);

impl PartialEq for CelSemver {
    fn eq(&self, other: &Self) -> bool {
        self.0.compare(&other.0).is_eq()
    }
}

impl Eq for CelSemver {}

impl Opaque for CelSemver {
    fn runtime_type_name(&self) -> &str {
        TYPE_NAME
    }
}

fn digits_only(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_digit())
}

fn alphanumeric_only(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn has_leading_zeroes(text: &str) -> bool {
    text.len() > 1 && text.starts_with('0')
}

/// `strconv.ParseUint(text, 10, 64)`'s errors.
fn parse_uint(text: &str) -> Result<u64, String> {
    if text.is_empty() {
        return Err("strconv.ParseUint: parsing \"\": invalid syntax".into());
    }
    text.parse().map_err(|_| {
        format!(
            "strconv.ParseUint: parsing {}: value out of range",
            crate::go::strconv::quote(text)
        )
    })
}

/// A major, minor or patch number.
fn number(text: &str, what: &str) -> Result<u64, String> {
    let quoted = crate::go::strconv::quote(text);
    if !digits_only(text) {
        return Err(format!(
            "Invalid character(s) found in {what} number {quoted}"
        ));
    }
    if has_leading_zeroes(text) {
        let capitalized = format!("{}{}", what[..1].to_ascii_uppercase(), &what[1..]);
        return Err(format!(
            "{capitalized} number must not contain leading zeroes {quoted}"
        ));
    }
    parse_uint(text)
}

/// `NewPRVersion`.
fn pre_release(text: &str) -> Result<PreRelease, String> {
    if text.is_empty() {
        return Err("Prerelease is empty".into());
    }
    let quoted = crate::go::strconv::quote(text);
    if digits_only(text) {
        if has_leading_zeroes(text) {
            return Err(format!(
                "Numeric PreRelease version must not contain leading zeroes {quoted}"
            ));
        }
        return parse_uint(text).map(PreRelease::Numeric);
    }
    if alphanumeric_only(text) {
        return Ok(PreRelease::Alphanumeric(text.to_string()));
    }
    Err(format!("Invalid character(s) found in prerelease {quoted}"))
}

/// `semver.Parse`.
pub fn parse(text: &str) -> Result<Version, String> {
    if text.is_empty() {
        return Err("Version string empty".into());
    }
    let parts: Vec<&str> = text.splitn(3, '.').collect();
    let [major, minor, rest] = parts[..] else {
        return Err("No Major.Minor.Patch elements found".into());
    };
    let major = number(major, "major")?;
    let minor = number(minor, "minor")?;
    let (rest, build) = match rest.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (rest, None),
    };
    let (patch, pre) = match rest.split_once('-') {
        Some((patch, pre)) => (patch, Some(pre)),
        None => (rest, None),
    };
    let patch = number(patch, "patch")?;
    let pre = match pre {
        Some(pre) => pre.split('.').map(pre_release).collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    for meta in build.map(|build| build.split('.')).into_iter().flatten() {
        if meta.is_empty() {
            return Err("Buildmeta is empty".into());
        }
        if !alphanumeric_only(meta) {
            return Err(format!(
                "Invalid character(s) found in build meta {}",
                crate::go::strconv::quote(meta)
            ));
        }
    }
    Ok(Version {
        major,
        minor,
        patch,
        pre,
    })
}

/// kube's `normalizeAndParse`: no `v` prefix, missing minor and patch
/// filled with 0, leading zeroes removed.
pub fn normalize_and_parse(text: &str) -> Result<Version, String> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let mut parts: Vec<String> = text
        .splitn(3, '.')
        .map(|part| {
            if part.len() <= 1 {
                return part.to_string();
            }
            let trimmed = part.trim_start_matches('0');
            if trimmed.is_empty() || !trimmed.as_bytes()[0].is_ascii_digit() {
                format!("0{trimmed}")
            } else {
                trimmed.to_string()
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|last| last.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        parts.resize(3, "0".to_string());
    }
    parse(&parts.join("."))
}

/// Registers the library's overloads on `env`.
pub fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(semver_type())?;
    env.add_overload(
        "semver",
        "string_to_semver",
        vec![STRING_TYPE],
        overload!(to_semver),
    )?;
    env.add_overload(
        "semver",
        "string_bool_to_semver",
        vec![STRING_TYPE, BOOL_TYPE],
        overload!(to_semver),
    )?;
    env.add_overload(
        "isSemver",
        "is_semver_string",
        vec![STRING_TYPE],
        overload!(is_semver),
    )?;
    env.add_overload(
        "isSemver",
        "is_semver_string_bool",
        vec![STRING_TYPE, BOOL_TYPE],
        overload!(is_semver),
    )?;
    for (name, id, function) in [
        ("major", "semver_major", overload!(major)),
        ("minor", "semver_minor", overload!(minor)),
        ("patch", "semver_patch", overload!(patch)),
    ] {
        env.add_member_overload(name, id, semver_type(), vec![], function)?;
    }
    for (name, id, function) in [
        (
            "isGreaterThan",
            "semver_is_greater_than",
            overload!(is_greater_than),
        ),
        ("isLessThan", "semver_is_less_than", overload!(is_less_than)),
        ("compareTo", "semver_compare_to", overload!(compare_to)),
    ] {
        env.add_member_overload(name, id, semver_type(), vec![semver_type()], function)?;
    }
    Ok(())
}

/// The string and the optional `normalize` flag of `semver`/`isSemver`.
fn parsed(function: &str, args: &[Value]) -> Result<Result<Version, String>, ExecutionError> {
    let (input, normalize) = match args {
        [Value::String(input)] => (input, false),
        [Value::String(input), Value::Bool(normalize)] => (input, *normalize),
        _ => return Err(no_such_overload(function)),
    };
    Ok(if normalize {
        normalize_and_parse(input)
    } else {
        parse(input)
    })
}

fn to_semver(args: &[Value]) -> Result<Value, ExecutionError> {
    let version =
        parsed("semver", args)?.map_err(|error| ExecutionError::function_error("semver", error))?;
    Ok(Value::Opaque(Arc::new(CelSemver(version))))
}

fn is_semver(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(parsed("isSemver", args)?.is_ok()))
}

fn version<'a>(function: &str, value: &'a Value) -> Result<&'a Version, ExecutionError> {
    match value {
        Value::Opaque(opaque) => opaque
            .downcast_ref::<CelSemver>()
            .map(|version| &version.0)
            .ok_or_else(|| no_such_overload(function)),
        _ => Err(no_such_overload(function)),
    }
}

fn component(
    function: &str,
    args: &[Value],
    pick: fn(&Version) -> u64,
) -> Result<Value, ExecutionError> {
    let [value] = arguments(args)?;
    let number = pick(version(function, value)?);
    i64::try_from(number)
        .map(Value::Int)
        .map_err(|_| ExecutionError::function_error(function, "integer overflow"))
}

fn major(args: &[Value]) -> Result<Value, ExecutionError> {
    component("major", args, |version| version.major)
}

fn minor(args: &[Value]) -> Result<Value, ExecutionError> {
    component("minor", args, |version| version.minor)
}

fn patch(args: &[Value]) -> Result<Value, ExecutionError> {
    component("patch", args, |version| version.patch)
}

fn ordering(function: &str, args: &[Value]) -> Result<Ordering, ExecutionError> {
    let [left, right] = arguments(args)?;
    Ok(version(function, left)?.compare(version(function, right)?))
}

fn is_greater_than(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(ordering("isGreaterThan", args)?.is_gt()))
}

fn is_less_than(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(ordering("isLessThan", args)?.is_lt()))
}

fn compare_to(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Int(ordering("compareTo", args)? as i64))
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use cel::Value;

    /// Cases of kube's `library/semver_test.go` (`TestSemver`).
    #[test]
    fn kubes_semver_functions() {
        let truths = [
            "isSemver('1.0.0')",
            "isSemver('1.0.0-alpha.1+build.5')",
            "!isSemver('1.0')",
            "!isSemver('v1.0.0')",
            "!isSemver('01.0.0')",
            "!isSemver('hello')",
            "!isSemver('')",
            "isSemver('v1.0', true)",
            "isSemver('1.0', true)",
            "isSemver('01.01.01', true)",
            "!isSemver('1.0-alpha', true)",
            "semver('1.0.0') == semver('1.0.0')",
            "semver('1.0.0') != semver('1.0.1')",
            "semver('1.0.0+build1') == semver('1.0.0+build2')",
            "semver('v1.0', true) == semver('1.0.0')",
            "semver('01.01.01', true) == semver('1.1.1')",
            "semver('1.2.3').major() == 1",
            "semver('1.2.3').minor() == 2",
            "semver('1.2.3').patch() == 3",
            "semver('1.0.0').isLessThan(semver('1.1.0'))",
            "semver('1.0.0-alpha').isLessThan(semver('1.0.0'))",
            "semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))",
            "semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))",
            "semver('1.0.0-2').isLessThan(semver('1.0.0-10'))",
            "semver('2.0.0').isGreaterThan(semver('1.9.9'))",
            "!semver('1.0.0').isGreaterThan(semver('1.0.0'))",
            "semver('1.2.3').compareTo(semver('1.2.3')) == 0",
            "semver('1.2.3').compareTo(semver('2.0.0')) == -1",
            "semver('1.2.3').compareTo(semver('0.1.2')) == 1",
        ];
        for expression in truths {
            assert_eq!(eval(expression, &[]), Ok(Value::Bool(true)), "{expression}");
        }
    }

    #[test]
    fn blang_semver_errors() {
        for (input, message) in [
            ("", "Version string empty"),
            ("1.0", "No Major.Minor.Patch elements found"),
            ("a.0.0", "Invalid character(s) found in major number \"a\""),
            (
                "01.0.0",
                "Major number must not contain leading zeroes \"01\"",
            ),
            (
                "1.0.0-01",
                "Numeric PreRelease version must not contain leading zeroes \"01\"",
            ),
            (
                "1.0.0-a_b",
                "Invalid character(s) found in prerelease \"a_b\"",
            ),
            ("1.0.0+", "Buildmeta is empty"),
            ("1..0", "strconv.ParseUint: parsing \"\": invalid syntax"),
        ] {
            assert_eq!(super::parse(input), Err(message.to_string()), "{input}");
        }
        let error = eval("semver('200K')", &[]).expect_err("not a version");
        assert!(
            error.contains("No Major.Minor.Patch elements found"),
            "{error}"
        );
    }
}
