//! `--authorization-mode`: the authorizers and their order, validated as
//! kube-apiserver validates them (`pkg/kubeapiserver/options/authorization.go`,
//! `BuiltInAuthorizationOptions.Validate`; names from
//! `pkg/kubeapiserver/authorizer/modes/modes.go`).

use super::AuthzError;
use crate::go::strconv::quote;

/// One authorizer of the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `AlwaysAllow`: allows every request.
    AlwaysAllow,
    /// `AlwaysDeny`: no opinion on anything, with the reason "Everything is forbidden.".
    AlwaysDeny,
    /// `RBAC`: Roles and bindings (`authz/rbac/`).
    Rbac,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::AlwaysAllow => "AlwaysAllow",
            Mode::AlwaysDeny => "AlwaysDeny",
            Mode::Rbac => "RBAC",
        }
    }
}

/// ferrokube's default: kube-apiserver's own default is AlwaysAllow, but a
/// control plane that several users share wants RBAC (issue 15).
pub const DEFAULT_MODES: &[Mode] = &[Mode::Rbac];

/// Modes kube-apiserver knows that ferrokube does not build.
const UNSUPPORTED: &[&str] = &["ABAC", "Webhook", "Node"];

/// Parses the flag's comma-separated values (already split), refusing what
/// kube refuses and what ferrokube does not build.
pub fn parse_modes(values: &[String]) -> Result<Vec<Mode>, AuthzError> {
    // `--authorization-mode=` is an empty list, as pflag's StringSlice reads it.
    let values = match values {
        [only] if only.is_empty() => &[],
        _ => values,
    };
    let mut errors = Vec::new();
    if values.is_empty() {
        errors.push("at least one authorization-mode must be passed".to_string());
    }
    let mut modes = Vec::new();
    for value in values {
        match value.as_str() {
            "AlwaysAllow" => modes.push(Mode::AlwaysAllow),
            "AlwaysDeny" => modes.push(Mode::AlwaysDeny),
            "RBAC" => modes.push(Mode::Rbac),
            unsupported if UNSUPPORTED.contains(&unsupported) => errors.push(format!(
                "authorization-mode {} is not supported by ferrokube (supported: AlwaysAllow, AlwaysDeny, RBAC)",
                quote(unsupported)
            )),
            invalid => errors.push(format!(
                "authorization-mode {} is not a valid mode",
                quote(invalid)
            )),
        }
    }
    let mut unique = values.to_vec();
    unique.sort();
    unique.dedup();
    if unique.len() != values.len() {
        // `%q` of a `[]string`: `["RBAC" "RBAC"]`.
        let quoted: Vec<String> = values.iter().map(|value| quote(value)).collect();
        errors.push(format!(
            "authorization-mode [{}] has mode specified more than once",
            quoted.join(" ")
        ));
    }
    if errors.is_empty() {
        Ok(modes)
    } else {
        Err(AuthzError::Modes(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(values: &[&str]) -> Result<Vec<Mode>, String> {
        let values: Vec<String> = values.iter().map(|value| value.to_string()).collect();
        parse_modes(&values).map_err(|error| error.to_string())
    }

    #[test]
    fn modes_parse_in_order() {
        assert_eq!(parse(&["RBAC"]), Ok(vec![Mode::Rbac]));
        assert_eq!(
            parse(&["AlwaysDeny", "RBAC", "AlwaysAllow"]),
            Ok(vec![Mode::AlwaysDeny, Mode::Rbac, Mode::AlwaysAllow])
        );
    }

    #[test]
    fn bad_modes_are_refused_with_kubes_texts() {
        assert_eq!(
            parse(&[]),
            Err("at least one authorization-mode must be passed".into())
        );
        assert_eq!(
            parse(&["rbac"]),
            Err(r#"authorization-mode "rbac" is not a valid mode"#.into())
        );
        assert_eq!(
            parse(&["Node", "RBAC"]),
            Err(r#"authorization-mode "Node" is not supported by ferrokube (supported: AlwaysAllow, AlwaysDeny, RBAC)"#.into())
        );
        assert_eq!(
            parse(&["RBAC", "RBAC"]),
            Err(r#"authorization-mode ["RBAC" "RBAC"] has mode specified more than once"#.into())
        );
        assert_eq!(
            parse(&["Webhook", "x"]),
            Err(r#"[authorization-mode "Webhook" is not supported by ferrokube (supported: AlwaysAllow, AlwaysDeny, RBAC), authorization-mode "x" is not a valid mode]"#.into())
        );
    }
}
