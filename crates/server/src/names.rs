//! Object name validation with kube's messages
//! (`k8s.io/apimachinery/pkg/util/validation/validation.go`,
//! `apimachinery/pkg/api/validation/path` for path segment names).

use crate::registry::NameRule;

const DNS1123_LABEL_MAX: usize = 63;
const DNS1123_SUBDOMAIN_MAX: usize = 253;
const DNS1035_LABEL_MAX: usize = 63;

fn is_label(value: &str, first: fn(u8) -> bool) -> bool {
    let bytes = value.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    match (bytes.first(), bytes.last()) {
        (Some(&head), Some(&tail)) => {
            first(head) && alnum(tail) && bytes.iter().all(|&b| alnum(b) || b == b'-')
        }
        _ => false,
    }
}

fn alnum(byte: u8) -> bool {
    byte.is_ascii_lowercase() || byte.is_ascii_digit()
}

fn max_len_error(max: usize) -> String {
    format!("must be no more than {max} characters")
}

/// `IsDNS1123Label`.
pub fn dns1123_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_LABEL_MAX {
        errors.push(max_len_error(DNS1123_LABEL_MAX));
    }
    if !is_label(value, alnum) {
        if value.split('.').all(|part| is_label(part, alnum)) {
            // A valid subdomain, not a label: with the length checked, the dots.
            errors.push("must not contain dots".to_string());
        } else {
            errors.push("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".to_string());
        }
    }
    errors
}

/// `IsDNS1123Subdomain`.
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        errors.push(max_len_error(DNS1123_SUBDOMAIN_MAX));
    }
    if value.is_empty() || !value.split('.').all(|part| is_label(part, alnum)) {
        errors.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string());
    }
    errors
}

/// `IsDNS1035Label`.
pub fn dns1035_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1035_LABEL_MAX {
        errors.push(max_len_error(DNS1035_LABEL_MAX));
    }
    if !is_label(value, |b| b.is_ascii_lowercase()) {
        errors.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".to_string());
    }
    errors
}

/// `IsValidPathSegmentName`.
pub fn path_segment(value: &str) -> Vec<String> {
    if value == "." || value == ".." {
        return vec![format!("may not be '{value}'")];
    }
    let mut errors = Vec::new();
    for illegal in ["/", "%"] {
        if value.contains(illegal) {
            errors.push(format!("may not contain '{illegal}'"));
        }
    }
    errors
}

/// Validate a full name under `rule`; with `prefix` the name is a generateName
/// prefix, checked as kube does (a trailing '-' is allowed).
pub fn validate(rule: NameRule, name: &str, prefix: bool) -> Vec<String> {
    let checked = if prefix {
        name.strip_suffix('-').unwrap_or(name)
    } else {
        name
    };
    match rule {
        NameRule::Dns1123Subdomain => dns1123_subdomain(checked),
        NameRule::Dns1123Label => dns1123_label(checked),
        NameRule::Dns1035Label => dns1035_label(checked),
        NameRule::PathSegment => path_segment(checked),
    }
}

/// `SimpleNameGenerator.GenerateName`: the prefix (cut to fit) plus 5 random characters.
pub fn generate(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    const RANDOM_LENGTH: usize = 5;
    const MAX_GENERATED_NAME_LENGTH: usize = 63 - RANDOM_LENGTH;
    let prefix = if prefix.len() > MAX_GENERATED_NAME_LENGTH {
        &prefix[..MAX_GENERATED_NAME_LENGTH]
    } else {
        prefix
    };
    let random = crate::uid::new_v4();
    let suffix: String = random
        .as_bytes()
        .iter()
        .take(RANDOM_LENGTH)
        .map(|byte| ALPHABET[*byte as usize % ALPHABET.len()] as char)
        .collect();
    format!("{prefix}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `IsDNS1123Label`: a valid subdomain that is no label has dots.
    #[test]
    fn a_label_with_dots_is_told_so() {
        assert_eq!(dns1123_label("a.b"), ["must not contain dots"]);
        assert!(dns1123_label("ab").is_empty());
        assert!(dns1123_label("a..b")[0].starts_with("a lowercase RFC 1123 label"));
        assert!(dns1123_label("A.b")[0].starts_with("a lowercase RFC 1123 label"));
    }

    #[test]
    fn validates_names_per_rule() {
        let cases: Vec<(NameRule, &str, bool)> = vec![
            (NameRule::Dns1123Subdomain, "web", true),
            (NameRule::Dns1123Subdomain, "web.example.com", true),
            (NameRule::Dns1123Subdomain, "1abc", true),
            (NameRule::Dns1123Subdomain, "Web", false),
            (NameRule::Dns1123Subdomain, "web_", false),
            (NameRule::Dns1123Subdomain, "-web", false),
            (NameRule::Dns1123Subdomain, "a..b", false),
            (NameRule::Dns1123Subdomain, "", false),
            (NameRule::Dns1123Label, "kube-system", true),
            (NameRule::Dns1123Label, "a.b", false),
            (NameRule::Dns1035Label, "svc-1", true),
            (NameRule::Dns1035Label, "1svc", false),
            (NameRule::PathSegment, "system:controller:x", true),
            (NameRule::PathSegment, "a/b", false),
            (NameRule::PathSegment, "..", false),
            (NameRule::PathSegment, "100%", false),
        ];
        for (rule, name, valid) in cases {
            assert_eq!(
                validate(rule, name, false).is_empty(),
                valid,
                "{rule:?} {name:?}"
            );
        }
        assert_eq!(
            dns1123_label(&"a".repeat(64)),
            vec!["must be no more than 63 characters".to_string()]
        );
        assert!(
            validate(NameRule::Dns1123Subdomain, "web-", true).is_empty(),
            "generateName prefixes may end in '-'"
        );
    }

    #[test]
    fn generated_names_keep_prefix_and_fit() {
        let name = generate("web-");
        assert!(name.starts_with("web-") && name.len() == 9, "{name}");
        assert!(generate(&"x".repeat(100)).len() <= 63);
    }
}
