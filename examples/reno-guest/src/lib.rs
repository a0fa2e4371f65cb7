//! Built-in Reno alone, compiled as a WebAssembly guest (`--cc ./reno_guest.wasm`, with Reno's
//! parameters: `:slow_start=lss`). The guest of issue #23's speed target (`make bench`, the
//! `guest-*-reno` cases): a user's module holds one controller, so its calls go straight to it,
//! where `examples/builtin-guest` reaches Reno through the match over every built-in (which
//! costs a guest call about 300 instructions more under wasmtime, docs/performance.md).

use slowstart_guest::cc::{CcSpec, Controller};
use slowstart_guest::{export, reno::Reno, CommonParams, Params};

/// The built-in's own construction (its parameters and defaults), kept to its one type.
fn build(common: &CommonParams, params: &Params) -> Result<Reno, String> {
    let spec = CcSpec {
        name: "reno".into(),
        params: params.0.clone(),
        guest: None,
    };
    match Controller::new(&spec, common).map_err(|e| e.0)? {
        Controller::Reno(reno) => Ok(reno),
        _ => Err("the registry built something other than Reno for 'reno'".into()),
    }
}

export!(build);
