//! The client behind an engine: the native protocol or the web API, each through
//! `ares::api`'s `TaskApi`; the two upload differently (see `crate::upload`).

use ares::api::{NativeClient, TaskApi, WebTaskApi};

/// The client of an engine.
pub enum Client {
    Native(NativeClient),
    Web(WebTaskApi),
}

impl Client {
    pub fn api(&mut self) -> &mut dyn TaskApi {
        match self {
            Client::Native(c) => c,
            Client::Web(c) => c,
        }
    }
}
