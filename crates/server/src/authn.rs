//! Request authentication: client certificates, a static token file and
//! bearer tokens, combined the way kube-apiserver combines them.
//!
//! Upstream files followed (kubernetes/kubernetes, under
//! `staging/src/k8s.io/apiserver/pkg/authentication/`):
//! - `request/x509/x509.go` (`CommonNameUserConversion`): [`user_from_peer_certificate`]
//! - `token/tokenfile/tokenfile.go` (`NewCSV`): [`TokenFile`]
//! - `request/bearertoken/bearertoken.go`: [`bearer_token`]
//! - `group/authenticated_group_adder.go`: [`add_authenticated_group`]
//! - `request/anonymous/anonymous.go`: [`UserInfo::anonymous`]
//! - `pkg/kubeapiserver/authenticator/config.go` (the union, the group adder
//!   and the fail-on-error anonymous fallback): [`Authenticator`]

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;
use x509_parser::x509::AttributeTypeAndValue;

/// `user.Anonymous`.
pub const ANONYMOUS_USER: &str = "system:anonymous";
/// `user.AllAuthenticated`.
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// `user.AllUnauthenticated`.
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// `user.SystemPrivilegedGroup`.
pub const SYSTEM_MASTERS: &str = "system:masters";
/// Subject attribute read as the user UID (`AllowParsingUserUIDFromCertAuth`,
/// beta and on by default in 1.34).
pub const CERT_UID_OID: &str = "1.3.6.1.4.1.57683.2";

/// Who made a request (`user.DefaultInfo` without `Extra`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
}

impl UserInfo {
    /// The user of requests without credentials (`anonymous.go`).
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: ANONYMOUS_USER.to_string(),
            uid: String::new(),
            groups: vec![ALL_UNAUTHENTICATED.to_string()],
        }
    }
}

/// Errors of this module. Token-file messages match upstream's wording.
#[derive(Debug, thiserror::Error)]
pub enum AuthnError {
    #[error("reading token file '{path}': {source}")]
    ReadTokenFile { path: PathBuf, source: io::Error },
    #[error("token file '{path}': {error}")]
    TokenFileSyntax { path: String, error: CsvError },
    #[error("token file '{path}' must have at least 3 columns (token, user name, user uid), found {found}")]
    TooFewColumns { path: String, found: usize },
    #[error("invalid bearer token")]
    InvalidBearerToken,
    #[error("client certificate: {0}")]
    Certificate(String),
    /// No credential was presented and anonymous requests are disabled.
    #[error("unauthorized")]
    Unauthorized,
}

// ---------------------------------------------------------------------------
// x509: request/x509/x509.go

/// The user a verified client certificate names: the subject's common name
/// (the last one, as Go's `pkix.Name` keeps it), each organization as a group
/// and the `1.3.6.1.4.1.57683.2` attribute as UID. `None` when the
/// certificate has no common name or cannot be read. The certificate must
/// already be verified (the TLS layer does it against the client CA).
///
/// Like upstream's converter this does not add `system:authenticated`; the
/// [`Authenticator`] does, as kube's `AuthenticatedGroupAdder` does.
pub fn user_from_peer_certificate(der: &[u8]) -> Option<UserInfo> {
    match user_from_certificate(der) {
        Ok(user) => user,
        Err(e) => {
            tracing::debug!(error = %e, "client certificate rejected");
            None
        }
    }
}

/// `CommonNameUserConversion`: `Ok(None)` is "not this authenticator's
/// business", `Err` is a failed authentication.
fn user_from_certificate(der: &[u8]) -> Result<Option<UserInfo>, AuthnError> {
    let (_, cert) =
        X509Certificate::from_der(der).map_err(|e| AuthnError::Certificate(e.to_string()))?;
    let subject = cert.subject();
    let name = subject
        .iter_common_name()
        .filter_map(attribute_string)
        .last()
        .unwrap_or_default();
    if name.is_empty() {
        return Ok(None);
    }
    let groups = subject
        .iter_organization()
        .filter_map(attribute_string)
        .collect();
    // parseUIDFromCert
    let mut uids = Vec::new();
    for attr in subject.iter_attributes() {
        if attr.attr_type().to_id_string() != CERT_UID_OID {
            continue;
        }
        let uid = attribute_string(attr).ok_or_else(|| {
            AuthnError::Certificate("unable to parse UID into a string".to_string())
        })?;
        uids.push(uid);
    }
    let uid = match uids.as_slice() {
        [] => String::new(),
        [one] if one.is_empty() => {
            return Err(AuthnError::Certificate(
                "UID cannot be an empty string".to_string(),
            ))
        }
        [one] => one.clone(),
        _ => {
            return Err(AuthnError::Certificate(format!(
                "expected 1 UID, but found multiple: {uids:?}"
            )))
        }
    };
    Ok(Some(UserInfo { name, uid, groups }))
}

/// The attribute value when it is one of the string types Go's
/// `encoding/asn1` decodes into a `string`.
fn attribute_string(attr: &AttributeTypeAndValue<'_>) -> Option<String> {
    use x509_parser::der_parser::asn1_rs::Tag;
    let value = attr.attr_value();
    let data = value.data;
    match value.header.tag() {
        Tag::Utf8String
        | Tag::PrintableString
        | Tag::Ia5String
        | Tag::NumericString
        | Tag::T61String => std::str::from_utf8(data).ok().map(str::to_string),
        Tag::BmpString => {
            if data.len() % 2 != 0 {
                return None;
            }
            let units: Vec<u16> = data
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16(&units).ok()
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Bearer tokens: request/bearertoken/bearertoken.go

/// The token of an `Authorization` header value: surrounding white space
/// trimmed, split on single spaces, the first part `bearer` in any case, the
/// second part the token. `"Bearer  x"` (two spaces) has an empty token and
/// yields `None`, as upstream.
pub fn bearer_token(header_value: &str) -> Option<&str> {
    let auth = header_value.trim();
    if auth.is_empty() {
        return None;
    }
    let mut parts = auth.split(' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return None;
    }
    Some(token)
}

// ---------------------------------------------------------------------------
// Static tokens: token/tokenfile/tokenfile.go

/// Something that maps a bearer token to a user (`authenticator.Token`).
pub trait TokenAuthenticator: Send + Sync {
    fn authenticate_token(&self, token: &str) -> Option<UserInfo>;
}

/// The `--token-auth-file` authenticator: CSV records
/// `token,user,uid[,"group1,group2"[,...]]`.
#[derive(Clone, Default)]
pub struct TokenFile {
    tokens: HashMap<String, UserInfo>,
}

impl fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Tokens are secrets.
        f.debug_struct("TokenFile")
            .field("tokens", &self.tokens.len())
            .finish()
    }
}

impl TokenFile {
    /// Reads and parses a token file (`NewCSV`).
    pub fn load(path: &Path) -> Result<TokenFile, AuthnError> {
        let data = fs::read(path).map_err(|source| AuthnError::ReadTokenFile {
            path: path.to_path_buf(),
            source,
        })?;
        TokenFile::parse(&path.display().to_string(), &data)
    }

    /// Parses token file contents; `path` only names the file in messages.
    ///
    /// As upstream (Go `encoding/csv` with variable field counts): blank
    /// lines are skipped, fields may be double-quoted (with `""` for a quote
    /// and line breaks inside), there are no comment lines, a record with
    /// fewer than 3 fields is an error, a record with an empty token is
    /// skipped with a warning, a repeated token wins over earlier ones with a
    /// warning, the 4th field is split on `,` into groups and further fields
    /// are ignored.
    pub fn parse(path: &str, data: &[u8]) -> Result<TokenFile, AuthnError> {
        let mut reader = CsvReader::new(data);
        let mut tokens = HashMap::new();
        let mut record_num = 0usize;
        while let Some(record) = reader.read_record() {
            let record = record.map_err(|error| AuthnError::TokenFileSyntax {
                path: path.to_string(),
                error,
            })?;
            if record.len() < 3 {
                return Err(AuthnError::TooFewColumns {
                    path: path.to_string(),
                    found: record.len(),
                });
            }
            record_num += 1;
            if record[0].is_empty() {
                tracing::warn!(
                    "empty token has been found in token file '{path}', record number '{record_num}'"
                );
                continue;
            }
            let groups = match record.get(3) {
                Some(g) => g.split(',').map(str::to_string).collect(),
                None => Vec::new(),
            };
            let user = UserInfo {
                name: record[1].clone(),
                uid: record[2].clone(),
                groups,
            };
            if tokens.insert(record[0].clone(), user).is_some() {
                tracing::warn!(
                    "duplicate token has been found in token file '{path}', record number '{record_num}'"
                );
            }
        }
        Ok(TokenFile { tokens })
    }

    /// The user of `token`, if the file has it (`AuthenticateToken`).
    pub fn authenticate(&self, token: &str) -> Option<UserInfo> {
        self.tokens.get(token).cloned()
    }

    /// Number of tokens loaded.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

impl TokenAuthenticator for TokenFile {
    fn authenticate_token(&self, token: &str) -> Option<UserInfo> {
        self.authenticate(token)
    }
}

/// A syntax error in CSV input, worded like Go's `csv.ParseError`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvError {
    pub start_line: usize,
    pub line: usize,
    pub column: usize,
    pub kind: CsvErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsvErrorKind {
    /// `csv.ErrBareQuote`
    BareQuote,
    /// `csv.ErrQuote`
    Quote,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            CsvErrorKind::BareQuote => "bare \" in non-quoted-field",
            CsvErrorKind::Quote => "extraneous or missing \" in quoted-field",
        };
        if self.start_line != self.line {
            write!(f, "record on line {}; ", self.start_line)?;
        }
        write!(
            f,
            "parse error on line {}, column {}: {what}",
            self.line, self.column
        )
    }
}

impl std::error::Error for CsvError {}

/// Go's `encoding/csv.Reader` with `Comma = ','`, no comment character,
/// `LazyQuotes = false`, `TrimLeadingSpace = false`.
struct CsvReader<'a> {
    input: &'a [u8],
    pos: usize,
    num_line: usize,
}

fn length_nl(b: &[u8]) -> usize {
    usize::from(b.last() == Some(&b'\n'))
}

impl<'a> CsvReader<'a> {
    fn new(input: &'a [u8]) -> Self {
        CsvReader {
            input,
            pos: 0,
            num_line: 0,
        }
    }

    /// `readLine`: one line with its `\n`, `\r\n` folded to `\n`, a `\r`
    /// right before the end of input dropped. `None` at the end of input.
    fn read_line(&mut self) -> Option<Vec<u8>> {
        let rest = self.input.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let (raw, at_eof) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..=i], false),
            None => (rest, true),
        };
        self.pos += raw.len();
        self.num_line += 1;
        let mut line = raw.to_vec();
        if at_eof && line.last() == Some(&b'\r') {
            line.pop();
        }
        let n = line.len();
        if n >= 2 && line[n - 2] == b'\r' && line[n - 1] == b'\n' {
            line[n - 2] = b'\n';
            line.truncate(n - 1);
        }
        Some(line)
    }

    /// `readRecord`: the next record, `None` at the end of input.
    fn read_record(&mut self) -> Option<Result<Vec<String>, CsvError>> {
        let mut line = loop {
            let line = self.read_line()?;
            if line.len() == length_nl(&line) {
                continue; // empty line
            }
            break line;
        };
        let start_line = self.num_line;
        let mut fields: Vec<Vec<u8>> = Vec::new();
        let mut p = 0usize; // offset into `line`
        let mut col = 1usize;
        let mut pos_line = self.num_line;
        'field: loop {
            if line.get(p) != Some(&b'"') {
                // Non-quoted field.
                let rest = &line[p..];
                let comma = rest.iter().position(|&b| b == b',');
                let field = match comma {
                    Some(i) => &rest[..i],
                    None => &rest[..rest.len() - length_nl(rest)],
                };
                if let Some(j) = field.iter().position(|&b| b == b'"') {
                    return Some(Err(CsvError {
                        start_line,
                        line: self.num_line,
                        column: col + j,
                        kind: CsvErrorKind::BareQuote,
                    }));
                }
                fields.push(field.to_vec());
                match comma {
                    Some(i) => {
                        p += i + 1;
                        col += i + 1;
                        continue 'field;
                    }
                    None => break 'field,
                }
            }
            // Quoted field.
            let mut buf = Vec::new();
            p += 1;
            col += 1;
            loop {
                let rest = &line[p..];
                if let Some(i) = rest.iter().position(|&b| b == b'"') {
                    buf.extend_from_slice(&rest[..i]);
                    p += i + 1;
                    col += i + 1;
                    let rest = &line[p..];
                    match rest.first() {
                        Some(b'"') => {
                            // `""`: an escaped quote.
                            buf.push(b'"');
                            p += 1;
                            col += 1;
                        }
                        Some(b',') => {
                            p += 1;
                            col += 1;
                            fields.push(buf);
                            continue 'field;
                        }
                        _ if rest.len() == length_nl(rest) => {
                            fields.push(buf);
                            break 'field;
                        }
                        _ => {
                            return Some(Err(CsvError {
                                start_line,
                                line: self.num_line,
                                column: col - 1,
                                kind: CsvErrorKind::Quote,
                            }));
                        }
                    }
                } else if !rest.is_empty() {
                    // The field goes on on the next line.
                    buf.extend_from_slice(rest);
                    col += rest.len();
                    line = self.read_line().unwrap_or_default();
                    p = 0;
                    if !line.is_empty() {
                        pos_line += 1;
                        col = 1;
                    }
                } else {
                    // End of input inside quotes.
                    return Some(Err(CsvError {
                        start_line,
                        line: pos_line,
                        column: col,
                        kind: CsvErrorKind::Quote,
                    }));
                }
            }
        }
        Some(Ok(fields
            .into_iter()
            .map(|f| String::from_utf8_lossy(&f).into_owned())
            .collect()))
    }
}

// ---------------------------------------------------------------------------
// The chain: group/authenticated_group_adder.go, authenticator/config.go

/// Adds `system:authenticated` to an authenticated user unless it is
/// `system:anonymous` or already has `system:authenticated` or
/// `system:unauthenticated` (`AuthenticatedGroupAdder`).
pub fn add_authenticated_group(mut user: UserInfo) -> UserInfo {
    if user.name == ANONYMOUS_USER {
        return user;
    }
    if user
        .groups
        .iter()
        .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED)
    {
        return user;
    }
    user.groups.push(ALL_AUTHENTICATED.to_string());
    user
}

/// kube-apiserver's request authenticator: client certificate first, then
/// the bearer token (only when some token authenticator is configured),
/// `system:authenticated` added to whoever succeeds, and then either the
/// anonymous user or a failure.
///
/// A request that presents credentials that fail (an unknown bearer token, a
/// certificate whose UID attribute is malformed) is refused even when
/// anonymous requests are allowed (`union.NewFailOnError`).
#[derive(Clone, Default)]
pub struct Authenticator {
    tokens: Vec<Arc<dyn TokenAuthenticator>>,
    anonymous: bool,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authenticator")
            .field("token_authenticators", &self.tokens.len())
            .field("anonymous", &self.anonymous)
            .finish()
    }
}

impl Authenticator {
    /// `anonymous`: kube-apiserver's `--anonymous-auth` (default true).
    pub fn new(anonymous: bool) -> Authenticator {
        Authenticator {
            tokens: Vec::new(),
            anonymous,
        }
    }

    /// Adds a bearer token authenticator; they are tried in order.
    pub fn with_token_authenticator(mut self, auth: Arc<dyn TokenAuthenticator>) -> Authenticator {
        self.tokens.push(auth);
        self
    }

    /// Authenticates one request. `peer_certificate` is the verified client
    /// leaf certificate of the connection, `authorization` the value of the
    /// `Authorization` header. `Err` means 401 Unauthorized.
    pub fn authenticate(
        &self,
        peer_certificate: Option<&[u8]>,
        authorization: Option<&str>,
    ) -> Result<UserInfo, AuthnError> {
        let mut error = None;
        if let Some(der) = peer_certificate {
            match user_from_certificate(der) {
                Ok(Some(user)) => return Ok(add_authenticated_group(user)),
                Ok(None) => {}
                Err(e) => error = Some(e),
            }
        }
        if !self.tokens.is_empty() {
            if let Some(token) = authorization.and_then(bearer_token) {
                if let Some(user) = self.tokens.iter().find_map(|a| a.authenticate_token(token)) {
                    return Ok(add_authenticated_group(user));
                }
                error.get_or_insert(AuthnError::InvalidBearerToken);
            }
        }
        if let Some(e) = error {
            return Err(e);
        }
        if self.anonymous {
            return Ok(UserInfo::anonymous());
        }
        Err(AuthnError::Unauthorized)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: &str, uid: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            uid: uid.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    fn parse(s: &str) -> Result<TokenFile, AuthnError> {
        TokenFile::parse("test.csv", s.as_bytes())
    }

    #[test]
    fn token_file_upstream_table() {
        // tokenfile_test.go TestTokenFile
        let auth = parse(
            "\ntoken1,user1,uid1\ntoken2,user2,uid2\ntoken3,user3,uid3,\"group1,group2\"\n\
             token4,user4,uid4,\"group2\"\ntoken5,user5,uid5,group5\n\
             token6,user6,uid6,group5,otherdata\ntoken7,user7,uid7,\"group1,group2\",otherdata\n",
        )
        .expect("parse");
        let cases: &[(&str, Option<UserInfo>)] = &[
            ("token1", Some(user("user1", "uid1", &[]))),
            ("token2", Some(user("user2", "uid2", &[]))),
            ("token3", Some(user("user3", "uid3", &["group1", "group2"]))),
            ("token4", Some(user("user4", "uid4", &["group2"]))),
            ("token5", Some(user("user5", "uid5", &["group5"]))),
            ("token6", Some(user("user6", "uid6", &["group5"]))),
            ("token7", Some(user("user7", "uid7", &["group1", "group2"]))),
            ("token8", None),
            ("", None),
        ];
        for (token, want) in cases {
            assert_eq!(&auth.authenticate(token), want, "{token}");
        }
        assert_eq!(auth.len(), 7);
    }

    #[test]
    fn token_file_errors_and_edge_cases() {
        // TestBadTokenFile / TestInsufficientColumnsTokenFile
        let err = parse("\ntoken1,user1,uid1\ntoken2,user2,uid2\ntoken3,user3\ntoken4\n")
            .expect_err("too few columns");
        assert!(
            matches!(err, AuthnError::TooFewColumns { found: 2, .. }),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "token file 'test.csv' must have at least 3 columns (token, user name, user uid), found 2"
        );
        assert!(matches!(
            parse("token4\n"),
            Err(AuthnError::TooFewColumns { found: 1, .. })
        ));
        // TestEmptyTokenTokenFile
        assert!(parse(",user5,uid5\n").expect("parse").is_empty());
        // No comment syntax: a `#` line is a record like any other.
        assert!(matches!(
            parse("# tokens\ntok,u,1\n"),
            Err(AuthnError::TooFewColumns { found: 1, .. })
        ));
        let with_hash = parse("#tok,u,1\n").expect("parse");
        assert_eq!(with_hash.authenticate("#tok"), Some(user("u", "1", &[])));
        // Blank lines anywhere, CRLF, no final newline.
        let auth = parse("\r\n\n a,b,c\r\n\n\nx,y,z").expect("parse");
        assert_eq!(auth.authenticate(" a"), Some(user("b", "c", &[])));
        assert_eq!(auth.authenticate("x"), Some(user("y", "z", &[])));
        // An empty 4th column is one empty group, as strings.Split gives.
        assert_eq!(
            parse("t,u,i,\n").expect("parse").authenticate("t"),
            Some(user("u", "i", &[""]))
        );
        // Quotes: escaped quotes, line breaks inside, quoted token.
        let auth = parse("\"t,1\",\"u\"\"x\",\"i\nj\",\"a,\nb\"\n").expect("parse");
        assert_eq!(
            auth.authenticate("t,1"),
            Some(user("u\"x", "i\nj", &["a", "\nb"]))
        );
        // Duplicates: the last record wins.
        let auth = parse("t,first,1\nt,second,2\n").expect("parse");
        assert_eq!(auth.authenticate("t"), Some(user("second", "2", &[])));
        assert_eq!(auth.len(), 1);
    }

    #[test]
    fn token_file_syntax_errors_match_go() {
        let err = |s: &str| match parse(s) {
            Err(AuthnError::TokenFileSyntax { error, .. }) => error.to_string(),
            other => panic!("expected a syntax error, got {other:?}"),
        };
        assert_eq!(
            err("tok,us\"er,uid\n"),
            "parse error on line 1, column 7: bare \" in non-quoted-field"
        );
        assert_eq!(
            err("a,b,c\n\"tok\"x,u,i\n"),
            "parse error on line 2, column 5: extraneous or missing \" in quoted-field"
        );
        assert_eq!(
            err("a,b,\"c\nd"),
            "record on line 1; parse error on line 2, column 2: extraneous or missing \" in quoted-field"
        );
        // A quote after leading space is a bare quote (no TrimLeadingSpace).
        assert!(err("t,u, \"i\"\n").contains("bare \""));
    }

    #[test]
    fn token_file_load_reads_a_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("tokens.csv");
        fs::write(&path, "secret,alice,42,\"dev,ops\"\n").expect("write");
        let auth = TokenFile::load(&path).expect("load");
        assert_eq!(
            auth.authenticate("secret"),
            Some(user("alice", "42", &["dev", "ops"]))
        );
        assert!(matches!(
            TokenFile::load(&dir.path().join("missing")),
            Err(AuthnError::ReadTokenFile { .. })
        ));
    }

    #[test]
    fn bearer_header_table() {
        let cases: &[(&str, Option<&str>)] = &[
            ("Bearer abc", Some("abc")),
            ("bearer abc", Some("abc")),
            ("BEARER abc", Some("abc")),
            ("BeArEr abc", Some("abc")),
            ("  Bearer abc  ", Some("abc")),
            ("\tBearer abc\r\n", Some("abc")),
            ("Bearer abc def", Some("abc")),
            ("Bearer  abc", None), // empty second part
            ("Bearer ", None),
            ("Bearer", None),
            ("Bearer\tabc", None),
            ("Basic abc", None),
            ("Bearerabc", None),
            ("", None),
            ("   ", None),
            ("abc", None),
        ];
        for (header, want) in cases {
            assert_eq!(bearer_token(header), *want, "{header:?}");
        }
    }

    fn cert_with(dn: &[(rcgen::DnType, &str)]) -> Vec<u8> {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key");
        let mut params = rcgen::CertificateParams::default();
        let mut name = rcgen::DistinguishedName::new();
        for (ty, value) in dn {
            name.push(ty.clone(), *value);
        }
        params.distinguished_name = name;
        params.self_signed(&key).expect("cert").der().to_vec()
    }

    #[test]
    fn certificate_users() {
        use rcgen::DnType;
        let uid_oid = DnType::CustomDnType(vec![1, 3, 6, 1, 4, 1, 57683, 2]);
        let der = cert_with(&[
            (DnType::CommonName, "jane"),
            (DnType::OrganizationName, "devs"),
            (uid_oid.clone(), "u-123"),
        ]);
        assert_eq!(
            user_from_peer_certificate(&der),
            Some(user("jane", "u-123", &["devs"]))
        );
        // No CN: not authenticated by the certificate.
        let der = cert_with(&[(DnType::OrganizationName, "devs")]);
        assert_eq!(user_from_peer_certificate(&der), None);
        assert!(matches!(user_from_certificate(&der), Ok(None)));
        // An empty UID attribute fails authentication.
        let der = cert_with(&[(DnType::CommonName, "jane"), (uid_oid, "")]);
        assert!(user_from_certificate(&der).is_err());
        assert_eq!(user_from_peer_certificate(b"not a certificate"), None);
    }

    #[test]
    fn admin_certificate_from_pki() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pki = crate::pki::ensure(dir.path(), &[]).expect("pki");
        let der = pki.admin_cert_chain().expect("chain").remove(0);
        let u = user_from_peer_certificate(der.as_ref()).expect("user");
        assert_eq!(u.name, "ferrokube-admin");
        assert!(u.groups.iter().any(|g| g == SYSTEM_MASTERS));
        let full = Authenticator::new(false)
            .authenticate(Some(der.as_ref()), None)
            .expect("authenticated");
        assert_eq!(full.groups, vec![SYSTEM_MASTERS, ALL_AUTHENTICATED]);
    }

    #[test]
    fn authenticator_chain() {
        let tokens = Arc::new(
            parse("good,bob,7,\"a,system:authenticated\"\nplain,carol,8\n").expect("parse"),
        );
        let with_tokens = Authenticator::new(true).with_token_authenticator(tokens.clone());
        // Token users get system:authenticated unless they already have it.
        assert_eq!(
            with_tokens
                .authenticate(None, Some("Bearer plain"))
                .expect("ok"),
            user("carol", "8", &[ALL_AUTHENTICATED])
        );
        assert_eq!(
            with_tokens
                .authenticate(None, Some("Bearer good"))
                .expect("ok"),
            user("bob", "7", &["a", ALL_AUTHENTICATED])
        );
        // No credential: anonymous, without system:authenticated.
        assert_eq!(
            with_tokens.authenticate(None, None).expect("anonymous"),
            user(ANONYMOUS_USER, "", &[ALL_UNAUTHENTICATED])
        );
        // A bad token is refused even with anonymous enabled.
        assert!(matches!(
            with_tokens.authenticate(None, Some("Bearer nope")),
            Err(AuthnError::InvalidBearerToken)
        ));
        // A malformed Authorization header is no credential at all.
        assert!(with_tokens.authenticate(None, Some("Basic Zm9v")).is_ok());
        // Without token authenticators bearer tokens are ignored.
        assert_eq!(
            Authenticator::new(true)
                .authenticate(None, Some("Bearer nope"))
                .expect("anonymous")
                .name,
            ANONYMOUS_USER
        );
        // Anonymous disabled.
        assert!(matches!(
            Authenticator::new(false)
                .with_token_authenticator(tokens)
                .authenticate(None, None),
            Err(AuthnError::Unauthorized)
        ));
        // The certificate wins over the token.
        let der = cert_with(&[(rcgen::DnType::CommonName, "certuser")]);
        assert_eq!(
            with_tokens
                .authenticate(Some(&der), Some("Bearer nope"))
                .expect("cert")
                .name,
            "certuser"
        );
    }

    #[test]
    fn group_adder() {
        assert_eq!(
            add_authenticated_group(user("a", "", &[])).groups,
            vec![ALL_AUTHENTICATED]
        );
        assert_eq!(
            add_authenticated_group(user("a", "", &[ALL_UNAUTHENTICATED])).groups,
            vec![ALL_UNAUTHENTICATED]
        );
        assert_eq!(
            add_authenticated_group(UserInfo::anonymous()),
            UserInfo::anonymous()
        );
    }
}
