use super::*;
use std::fs;

use rustls::pki_types::CertificateDer;

fn user(name: &str, uid: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        uid: uid.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        extra: Default::default(),
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
    // A lone `\r` is data, not a line end (Go's `readLine` folds only `\r\n`).
    assert_eq!(
        parse("t,u,i\rj\n").expect("parse").authenticate("t"),
        Some(user("u", "i\rj", &[]))
    );
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

/// A CA and certificates it issues, for the chain tests.
struct TestCa {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    pem: String,
}

impl TestCa {
    fn new(name: &str) -> TestCa {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).expect("ca");
        let pem = cert.pem();
        let issuer = rcgen::Issuer::new(params, key);
        TestCa { issuer, pem }
    }

    fn bundle(&self) -> Arc<CaBundle> {
        Arc::new(CaBundle::load("test", &[], Some(&self.pem)).expect("bundle"))
    }

    /// A client certificate with the subject `dn`, leaf only.
    fn issue(&self, dn: &[(rcgen::DnType, &str)]) -> Vec<CertificateDer<'static>> {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        let mut name = rcgen::DistinguishedName::new();
        for (ty, value) in dn {
            name.push(ty.clone(), *value);
        }
        params.distinguished_name = name;
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params.signed_by(&key, &self.issuer).expect("leaf");
        vec![cert.der().clone()]
    }
}

fn request(
    auth: &Authenticator,
    chain: Option<&[CertificateDer<'static>]>,
    header_pairs: &[(&str, &str)],
) -> (Result<UserInfo, AuthnError>, http::HeaderMap) {
    let mut headers = http::HeaderMap::new();
    for (name, value) in header_pairs {
        headers.append(
            http::HeaderName::from_bytes(name.as_bytes()).expect("name"),
            value.parse().expect("value"),
        );
    }
    let peer = chain.map(|chain| auth.peer_certificate(chain));
    let result = auth.authenticate(peer.as_ref(), &mut headers);
    (result, headers)
}

fn bearer(auth: &Authenticator, value: Option<&str>) -> Result<UserInfo, AuthnError> {
    let pairs: Vec<(&str, &str)> = value.map(|v| ("authorization", v)).into_iter().collect();
    request(auth, None, &pairs).0
}

#[test]
fn admin_certificate_from_pki() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = crate::pki::ensure(dir.path(), &[]).expect("pki");
    let chain = pki.admin_cert_chain().expect("chain");
    let u = user_from_peer_certificate(chain[0].as_ref()).expect("user");
    assert_eq!(u.name, "ferrokube-admin");
    assert!(u.groups.iter().any(|g| g == SYSTEM_MASTERS));
    let client_ca = Arc::new(CaBundle::load("test", &[], Some(&pki.ca_cert_pem)).expect("ca"));
    let auth = Authenticator::new(false).with_client_ca(client_ca);
    let full = request(&auth, Some(&chain), &[]).0.expect("authenticated");
    assert_eq!(full.groups, vec![SYSTEM_MASTERS, ALL_AUTHENTICATED]);
}

#[test]
fn authenticator_chain() {
    let tokens =
        Arc::new(parse("good,bob,7,\"a,system:authenticated\"\nplain,carol,8\n").expect("parse"));
    let with_tokens = Authenticator::new(true).with_token_authenticator(tokens.clone());
    // Token users get system:authenticated unless they already have it.
    assert_eq!(
        bearer(&with_tokens, Some("Bearer plain")).expect("ok"),
        user("carol", "8", &[ALL_AUTHENTICATED])
    );
    assert_eq!(
        bearer(&with_tokens, Some("Bearer good")).expect("ok"),
        user("bob", "7", &["a", ALL_AUTHENTICATED])
    );
    // No credential: anonymous, without system:authenticated.
    assert_eq!(
        bearer(&with_tokens, None).expect("anonymous"),
        user(ANONYMOUS_USER, "", &[ALL_UNAUTHENTICATED])
    );
    // A bad token is refused even with anonymous enabled.
    assert_eq!(
        bearer(&with_tokens, Some("Bearer nope"))
            .expect_err("refused")
            .to_string(),
        "invalid bearer token"
    );
    // A malformed Authorization header is no credential at all.
    assert!(bearer(&with_tokens, Some("Basic Zm9v")).is_ok());
    // Without token authenticators bearer tokens are ignored.
    assert_eq!(
        bearer(&Authenticator::new(true), Some("Bearer nope"))
            .expect("anonymous")
            .name,
        ANONYMOUS_USER
    );
    // Anonymous disabled.
    assert!(matches!(
        bearer(
            &Authenticator::new(false).with_token_authenticator(tokens.clone()),
            None
        ),
        Err(AuthnError::Unauthorized)
    ));
    // The certificate wins over the token.
    let ca = TestCa::new("client-ca");
    let with_ca = Authenticator::new(true)
        .with_token_authenticator(tokens)
        .with_client_ca(ca.bundle());
    let chain = ca.issue(&[(rcgen::DnType::CommonName, "certuser")]);
    let (result, headers) = request(
        &with_ca,
        Some(&chain),
        &[("authorization", "Bearer nope"), ("x-remote-user", "x")],
    );
    assert_eq!(result.expect("cert").name, "certuser");
    // WithAuthentication drops the credential headers once authenticated.
    assert!(headers.is_empty(), "{headers:?}");
}

#[test]
fn a_certificate_without_common_name_falls_through_to_the_token_then_anonymous() {
    let tokens = Arc::new(parse("plain,carol,8\n").expect("parse"));
    let ca = TestCa::new("client-ca");
    let auth = Authenticator::new(true)
        .with_token_authenticator(tokens)
        .with_client_ca(ca.bundle());
    let chain = ca.issue(&[(rcgen::DnType::OrganizationName, "devs")]);
    let (result, _) = request(&auth, Some(&chain), &[("authorization", "Bearer plain")]);
    assert_eq!(result.expect("token").name, "carol");
    let (result, _) = request(&auth, Some(&chain), &[]);
    assert_eq!(result.expect("anonymous"), UserInfo::anonymous());
}

#[test]
fn a_certificate_no_trusted_ca_signed_is_refused_with_kubes_error() {
    let trusted = TestCa::new("trusted");
    let other = TestCa::new("other");
    let tokens = Arc::new(parse("plain,carol,8\n").expect("parse"));
    let auth = Authenticator::new(true)
        .with_token_authenticator(tokens)
        .with_client_ca(trusted.bundle());
    let chain = other.issue(&[(rcgen::DnType::CommonName, "mallory")]);
    let (result, _) = request(&auth, Some(&chain), &[]);
    let text = result.expect_err("refused").to_string();
    let identifier = ca_bundle::certificate_identifier(chain[0].as_ref());
    assert_eq!(
        text,
        format!("verifying certificate {identifier} failed: x509: certificate signed by unknown authority")
    );
    assert!(identifier.starts_with("SN="), "{identifier}");
    assert!(identifier.contains(", SKID=") && identifier.contains(", AKID="));
    // A later authenticator that succeeds wins (union.New).
    let (result, _) = request(&auth, Some(&chain), &[("authorization", "Bearer plain")]);
    assert_eq!(result.expect("token").name, "carol");
}

#[test]
fn front_proxy_headers_need_the_proxy_ca_and_an_allowed_name() {
    let client_ca = TestCa::new("client-ca");
    let proxy_ca = TestCa::new("front-proxy-ca");
    let config = RequestHeaderConfig {
        client_ca: proxy_ca.bundle(),
        allowed_names: vec!["front-proxy-client".into()],
        username_headers: vec!["X-Remote-User".into()],
        uid_headers: vec!["X-Remote-Uid".into()],
        group_headers: vec!["X-Remote-Group".into()],
        extra_header_prefixes: vec!["X-Remote-Extra-".into()],
    };
    let auth = Authenticator::new(true)
        .with_client_ca(client_ca.bundle())
        .with_request_header(Some(config));
    let headers = [
        ("x-remote-user", "jane"),
        ("x-remote-group", "team"),
        ("x-remote-extra-scopes", "read"),
        ("accept", "application/json"),
    ];
    // The proxy: the user of the headers, and the headers removed.
    let proxy = proxy_ca.issue(&[(rcgen::DnType::CommonName, "front-proxy-client")]);
    let (result, left) = request(&auth, Some(&proxy), &headers);
    let jane = result.expect("proxy user");
    assert_eq!(jane.name, "jane");
    assert_eq!(jane.groups, vec!["team", ALL_AUTHENTICATED]);
    assert_eq!(jane.extra["scopes"], vec!["read"]);
    assert_eq!(left.len(), 1, "{left:?}");
    // The proxy without a username header: the request-header authenticator
    // has no opinion and the x509 one refuses a certificate the client CA
    // did not sign, as kube-apiserver does.
    let (result, _) = request(&auth, Some(&proxy), &[]);
    assert!(matches!(
        result,
        Err(AuthnError::CertificateVerification(_))
    ));
    // A proxy CA certificate with another common name is refused.
    let wrong = proxy_ca.issue(&[(rcgen::DnType::CommonName, "someone-else")]);
    let (result, _) = request(&auth, Some(&wrong), &headers);
    let AuthnError::Aggregate(errors) = result.expect_err("refused") else {
        panic!("expected both certificate authenticators to fail");
    };
    assert_eq!(
        errors[0].to_string(),
        "x509: subject with cn=someone-else is not in the allowed list"
    );
    assert!(errors[1]
        .to_string()
        .ends_with("failed: x509: certificate signed by unknown authority"));
    // A client CA certificate sending the headers is its own user.
    let client = client_ca.issue(&[(rcgen::DnType::CommonName, "bob")]);
    let (result, left) = request(&auth, Some(&client), &headers);
    assert_eq!(result.expect("bob").name, "bob");
    assert_eq!(left.len(), 1, "the proxy headers are removed: {left:?}");
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
