//! The harness ferrokube's integration tests share (`crates/server/tests`,
//! `crates/store/tests`): a server to test against ([`server`]) and etcd
//! members ([`etcd`]). Test code: it panics with a message instead of
//! returning errors.
//!
//! Not the fixture controller authors use (that is issue 20's crate): this
//! one runs the built `ferrokube` binary as a child process.
#![allow(clippy::unwrap_used)]

pub mod etcd;
pub mod server;

pub use server::*;

/// One test module per scenario, running it once with each kubectl version
/// the suites cover: `per_version!(a, b)` makes `a::v1_33`, `a::v1_27`, ...
/// calling `async fn a(version: &str)` of the including file.
#[macro_export]
macro_rules! per_version {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            #[tokio::test]
            async fn v1_33() {
                super::$scenario("1.33").await
            }
            #[tokio::test]
            async fn v1_27() {
                super::$scenario("1.27").await
            }
        }
    )*};
}
