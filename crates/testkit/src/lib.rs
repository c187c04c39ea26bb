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
