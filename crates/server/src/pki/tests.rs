use std::fs;

use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;

use super::san::{cert_sans, SanName};
use super::*;

fn read(dir: &Path, name: &str) -> Vec<u8> {
    fs::read(dir.join(name)).expect("read pki file")
}

const ALL: [&str; 6] = [
    CA_CERT_FILE,
    CA_KEY_FILE,
    SERVING_CERT_FILE,
    SERVING_KEY_FILE,
    ADMIN_CERT_FILE,
    ADMIN_KEY_FILE,
];

#[test]
fn first_run_creates_everything_and_second_run_reuses_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("pki");
    let started = std::time::Instant::now();
    let pki = ensure(&dir, &[]).expect("first ensure");
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(500),
        "pki creation took {took:?}"
    );
    assert_eq!(pki.generated, vec!["ca", "apiserver", "admin"]);
    let before: Vec<Vec<u8>> = ALL.iter().map(|n| read(&dir, n)).collect();
    for (name, bytes) in ALL.iter().zip(&before) {
        assert!(!bytes.is_empty(), "{name} is empty");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for name in ALL {
            let mode = fs::metadata(dir.join(name))
                .expect("stat")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}");
        }
    }
    assert_eq!(pki.ca_cert_pem.as_bytes(), &before[0][..]);

    let again = ensure(&dir, &[]).expect("second ensure");
    assert!(again.generated.is_empty(), "{:?}", again.generated);
    let after: Vec<Vec<u8>> = ALL.iter().map(|n| read(&dir, n)).collect();
    assert_eq!(before, after);
    assert_eq!(again.serving_key_pem, pki.serving_key_pem);
}

#[test]
fn new_san_reissues_only_the_serving_certificate() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    ensure(dir, &["10.1.2.3".to_string()]).expect("first ensure");
    let before: Vec<Vec<u8>> = ALL.iter().map(|n| read(dir, n)).collect();

    let sans = vec![
        "10.1.2.3".to_string(),
        "Api.Example.COM".to_string(),
        "[fd00::1]".to_string(),
    ];
    let pki = ensure(dir, &sans).expect("ensure with new sans");
    assert_eq!(pki.generated, vec!["apiserver"]);
    let after: Vec<Vec<u8>> = ALL.iter().map(|n| read(dir, n)).collect();
    for (i, name) in ALL.iter().enumerate() {
        let changed = before[i] != after[i];
        let expect_change = *name == SERVING_CERT_FILE || *name == SERVING_KEY_FILE;
        assert_eq!(changed, expect_change, "{name}");
    }

    let der = pki.serving_cert_chain().expect("chain").remove(0);
    let (_, x509) = X509Certificate::from_der(der.as_ref()).expect("parse");
    let names = cert_sans(&x509);
    for want in DEFAULT_SANS
        .iter()
        .copied()
        .chain(["10.1.2.3", "api.example.com", "fd00::1"])
    {
        let name = SanName::parse(want).expect("parse").expect("some");
        assert!(names.contains(&name), "missing {want}");
    }
    // A subset of what is already there changes nothing.
    let same = ensure(dir, &["api.example.com".to_string()]).expect("third ensure");
    assert!(same.generated.is_empty());
}

#[test]
fn missing_ca_key_is_an_error_and_missing_leaf_is_recreated() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    ensure(dir, &[]).expect("first ensure");
    fs::remove_file(dir.join(ADMIN_KEY_FILE)).expect("rm");
    let pki = ensure(dir, &[]).expect("second ensure");
    assert_eq!(pki.generated, vec!["admin"]);
    fs::remove_file(dir.join(CA_KEY_FILE)).expect("rm");
    assert!(matches!(
        ensure(dir, &[]),
        Err(PkiError::MissingCaKey { .. })
    ));
}

#[test]
fn certificates_verify_against_the_ca() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pki = ensure(tmp.path(), &[]).expect("ensure");
    let ca = CaMaterial::load(
        &pki.ca_cert_path,
        &pki.ca_cert_pem,
        &pki.ca_key_path,
        &pki.ca_key_pem,
    )
    .expect("load ca");
    let now = now_unix();
    let admin = pki.admin_cert_chain().expect("admin").remove(0);
    let serving = pki.serving_cert_chain().expect("serving").remove(0);
    assert!(ca.verifies_client(&admin, now));
    assert!(ca.verifies_server(&serving, now));
    // The EKUs keep the two apart.
    assert!(!ca.verifies_client(&serving, now));
    assert!(!ca.verifies_server(&admin, now));

    let (_, x509) = X509Certificate::from_der(admin.as_ref()).expect("parse");
    let cn: Vec<&str> = x509
        .subject()
        .iter_common_name()
        .filter_map(|a| a.as_str().ok())
        .collect();
    let orgs: Vec<&str> = x509
        .subject()
        .iter_organization()
        .filter_map(|a| a.as_str().ok())
        .collect();
    assert_eq!(cn, vec![ADMIN_COMMON_NAME]);
    assert_eq!(orgs, vec![ADMIN_ORGANIZATION]);
    // The issuer field is the CA subject byte for byte.
    let ca_der = pki.ca_cert_der().expect("ca der");
    let (_, ca_x509) = X509Certificate::from_der(ca_der.as_ref()).expect("parse ca");
    assert_eq!(x509.issuer().as_raw(), ca_x509.subject().as_raw());
    assert!(ca_x509.is_ca());
}

#[test]
fn sans_are_classified() {
    let parse = |s: &str| SanName::parse(s).expect("parse");
    assert_eq!(
        parse("1.2.3.4"),
        Some(SanName::Ip("1.2.3.4".parse().expect("ip")))
    );
    assert_eq!(
        parse("[::1]"),
        Some(SanName::Ip("::1".parse().expect("ip")))
    );
    assert_eq!(
        parse("Host.Example"),
        Some(SanName::Dns("host.example".into()))
    );
    assert_eq!(
        parse("*.example.com"),
        Some(SanName::Dns("*.example.com".into()))
    );
    assert_eq!(parse("  "), None);
    assert!(SanName::parse("exämple.com").is_err());
    assert!(SanName::parse("http://x").is_err());
}

/// Files an older ferrokube wrote readable by everyone (certificates were
/// 0644) are made private on the next start, and nothing is left behind by
/// the durable writes (no `.tmp` files).
#[cfg(unix)]
#[test]
fn existing_files_are_made_private_and_writes_leave_no_temporaries() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("pki");
    ensure(&dir, &[]).expect("first ensure");
    for name in ALL {
        fs::set_permissions(dir.join(name), fs::Permissions::from_mode(0o644)).expect("chmod");
    }
    let again = ensure(&dir, &[]).expect("second ensure");
    assert!(again.generated.is_empty(), "{:?}", again.generated);
    for name in ALL {
        let mode = fs::metadata(dir.join(name))
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{name}");
    }
    let mut names: Vec<String> = fs::read_dir(&dir)
        .expect("read_dir")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    let mut expected: Vec<String> = ALL.iter().map(|name| (*name).to_string()).collect();
    expected.sort();
    assert_eq!(names, expected);
}
