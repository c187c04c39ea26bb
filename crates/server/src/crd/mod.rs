//! Custom resources: CustomResourceDefinitions read into served resources
//! (`definition.rs`) and the task that keeps the served registry equal to the
//! established CRDs (`serving.rs`). The controllers that accept names and
//! establish CRDs are in `controllers/crd_naming.rs`. Custom resources then
//! go down the same request path as every built-in kind.

pub mod conditions;
pub mod definition;
pub mod serving;

pub use conditions::{condition_true, set_condition};
pub use definition::{served_versions, CustomVersion, PrinterColumn, ScalePaths};
pub use serving::{keep_registry_current, CRD_PREFIX};
