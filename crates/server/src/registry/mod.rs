//! Resources as data: the built-in resource table (vendored discovery data
//! plus hand-written exceptions), the custom resources of established CRDs,
//! and lookups over both in one snapshot.

pub mod builtin;
pub mod index;
pub mod intern;
pub mod live;
pub mod resource;
pub mod rest_facts;
#[cfg(test)]
mod table_tests;

pub use builtin::builtin_resources;
pub use index::{GroupInfo, Registry};
pub use live::LiveRegistry;
pub use resource::{NameRule, ResourceDef, SubresourceDef};
