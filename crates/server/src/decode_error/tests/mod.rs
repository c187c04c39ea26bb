mod decode;
mod go_parsers;
mod scanner;

use super::interpret::FIND_KIND_TYPE;
use super::scanner::MAX_NESTING_DEPTH;
use super::tree::go_unquote;
use super::type_walk::base64_std_error;
use super::*;
use crate::go::time_parse::parse_go_time;

const CM: &str = "ConfigMap";

fn decode(kind: &str, gv: &str, body: &str) -> Option<String> {
    decode_failure_message(kind, gv, body.as_bytes(), None, None)
}
