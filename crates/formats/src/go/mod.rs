//! Go behaviours kube-apiserver's texts depend on, reproduced byte for byte
//! and tested once here: every module that prints what a Go function would
//! print uses these.
//!
//! - [`strconv`]: `strconv.Quote` / `IsPrint` (`%q`, `%#v` of a string).
//! - [`float`]: `strconv.FormatFloat(f, 'g', -1, …)` and `encoding/json`'s floats.
//! - [`fmt`]: `%v` and `%s` of a decoded JSON value.
//! - [`time`]: RFC 3339 as `metav1.Time`/`MicroTime` write it, `time.Duration`'s
//!   text forms and `ParseDuration`'s errors; [`time_parse`]: `time.Parse`'s
//!   errors for the two layouts kube decodes.
//! - [`sort`]: `sort.SliceStable`, whose exact swaps matter where kube's
//!   comparator is not a strict weak order.
//! - [`utf8`]: `utf8.DecodeRune`, and invalid UTF-8 as Go writes it into JSON.
//! - [`errors`]: how `utilerrors.NewAggregate(...).Error()` reads.

pub mod errors;
pub mod float;
pub mod fmt;
pub mod sort;
pub mod strconv;
pub mod time;
pub mod time_parse;
pub mod utf8;
