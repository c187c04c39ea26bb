//! The write pipeline: one sequence of steps every write goes through —
//! create, update, every patch type, server-side apply and the `status`,
//! `scale` and `finalize` subresources:
//!
//! 1. [`decode`], the body in any media type to one JSON object, with kube's
//!    decode errors and field validation (patches and apply build theirs in
//!    their handlers and enter at step 2 as a
//!    [`TypedObject`](crate::api::typed::TypedObject)).
//! 2. defaults (`crate::defaults`: kube defaults at decoding), then the
//!    mutating stage of [`admission`] (plugins and webhooks).
//! 3. strategy and defaults again (`crate::api::strategy`, `crate::defaults`),
//!    system metadata ([`create`], [`update`]).
//! 4. [`validate`], ObjectMeta and kind rules, 422 with every cause.
//! 5. [`ownership`], managedFields.
//! 6. the validating stage of [`admission`], then [`commit`]: bounded stored
//!    bytes, the store transaction, its errors.
//!
//! [`create::create_object`] and [`update::update_object`] run the sequence
//! (a create checks ObjectMeta before the strategy, since name generation
//! needs a valid `generateName`; an update after it, as `BeforeUpdate`);
//! handlers only choose which, with typed options
//! ([`crate::api::options::WriteOptions`]). [`scale`] maps a Scale onto its
//! parent and runs the update pipeline.

pub mod admission;
pub mod commit;
pub mod create;
pub mod decode;
pub mod escalation;
pub mod ownership;
pub mod scale;
pub mod update;
pub mod validate;
