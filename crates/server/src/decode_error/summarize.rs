//! `summarizeData` of kube's `handlers/rest.go`.

use std::fmt::Write as _;

use crate::go::utf8::lossy;

/// `summarizeData(data, 30)` of `handlers/rest.go`: `<empty>`; a body starting
/// with `{` as text (its first 30 bytes plus ` ...` when longer); anything else
/// (leading whitespace included) as lower-case hex of its first 30 bytes.
pub fn summarize_data(body: &[u8]) -> String {
    const MAX: usize = 30;
    let (head, more) = if body.len() > MAX {
        (&body[..MAX], " ...")
    } else {
        (body, "")
    };
    match body.first() {
        None => "<empty>".to_string(),
        Some(b'{') => format!("{}{more}", lossy(head)),
        Some(_) => {
            let mut out = String::with_capacity(head.len() * 2 + more.len());
            for byte in head {
                let _ = write!(out, "{byte:02x}");
            }
            out.push_str(more);
            out
        }
    }
}
