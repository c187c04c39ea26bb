//! Resources as data: the built-in resource table (vendored discovery data
//! plus hand-written exceptions) and lookups over it.

pub mod builtin;
pub mod index;
pub mod resource;
pub mod rest_facts;
#[cfg(test)]
mod table_tests;

pub use builtin::builtin_resources;
pub use index::{GroupInfo, Registry};
pub use resource::{NameRule, ResourceDef, SubresourceDef};
