//! Query-string parsing: percent-decoding and typed parameters with kube's 400s.

use crate::status::Status;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

fn hex(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

/// A URL path's `%XX` escapes decoded, as Go's `url.URL.Path` holds it (no
/// `+` → space; an invalid escape stays as written), lossy on invalid UTF-8.
pub fn percent_decode_path(input: &str) -> String {
    percent_decode(&input.replace('+', "%2B"))
}

/// `application/x-www-form-urlencoded` decoding (`+` is a space), lossy on invalid UTF-8.
pub fn percent_decode(input: &str) -> String {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'+' => out.push(b' '),
            b'%' if index + 2 < bytes.len() => {
                match (
                    bytes.get(index + 1).copied().and_then(hex),
                    bytes.get(index + 2).copied().and_then(hex),
                ) {
                    (Some(high), Some(low)) => {
                        out.push(high << 4 | low);
                        index += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Query {
    pub fn parse(raw: &str) -> Query {
        let pairs = raw
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) => (percent_decode(key), percent_decode(value)),
                None => (percent_decode(pair), String::new()),
            })
            .collect();
        Query { pairs }
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Every value of `name` (`dryRun=All&dryRun=All`).
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
            .collect()
    }

    /// A boolean flag as kube's query decoding reads it: `1`/`true` (any case) set it;
    /// a bare `?watch` does too.
    pub fn flag(&self, name: &str) -> bool {
        match self.get(name) {
            Some(value) => matches!(value.to_ascii_lowercase().as_str(), "1" | "true" | "t" | ""),
            None => false,
        }
    }

    /// An integer parameter, 400 BadRequest when malformed.
    pub fn int(&self, name: &str) -> Result<Option<i64>, Status> {
        match self.get(name) {
            None | Some("") => Ok(None),
            Some(value) => value.parse::<i64>().map(Some).map_err(|_| {
                Status::bad_request(format!(
                    "invalid value for {name}: {value:?}: must be an integer"
                ))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_pairs_and_flags() {
        let cases: Vec<(&str, &str, Option<&str>)> = vec![
            (
                "labelSelector=app%3Dweb%2Ctier%20in%20(a%2Cb)",
                "labelSelector",
                Some("app=web,tier in (a,b)"),
            ),
            (
                "fieldSelector=metadata.name%3Dx&limit=2",
                "limit",
                Some("2"),
            ),
            ("a=1+2", "a", Some("1 2")),
            ("a=%zz", "a", Some("%zz")),
            ("a=%4", "a", Some("%4")),
            ("a=%41", "a", Some("A")),
            ("watch", "watch", Some("")),
            ("", "x", None),
        ];
        for (raw, name, expected) in cases {
            assert_eq!(Query::parse(raw).get(name), expected, "{raw}");
        }
        assert!(Query::parse("watch=true").flag("watch"));
        assert!(Query::parse("watch=1").flag("watch"));
        assert!(!Query::parse("watch=false").flag("watch"));
        assert!(!Query::parse("watch=0").flag("watch"));
        assert!(!Query::parse("").flag("watch"));
        assert_eq!(
            Query::parse("limit=x").int("limit").map_err(|s| s.code),
            Err(400)
        );
        assert_eq!(Query::parse("limit=5").int("limit").ok(), Some(Some(5)));
    }
}
