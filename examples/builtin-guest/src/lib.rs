//! Every built-in controller, compiled as a WebAssembly guest: `algorithm` names it and the
//! other parameters are its own (`--cc ./builtin_guest.wasm:algorithm=cubic,beta=0.8`). The
//! same code as the built-in, behind the guest interface: a run with it must be byte-identical
//! to the built-in's, which is what the interface's tests check.

use slowstart_guest::cc::params::ParamValue;
use slowstart_guest::cc::{CcSpec, Controller};
use slowstart_guest::{export, CommonParams, Params};

fn build(common: &CommonParams, params: &Params) -> Result<Controller, String> {
    let mut params = params.0.clone();
    let name = match params.remove("algorithm") {
        Some(ParamValue::Text(name)) => name,
        Some(other) => return Err(format!("algorithm: expected a name, got {other}")),
        None => return Err("algorithm: missing (a built-in's name, e.g. algorithm=reno)".into()),
    };
    Controller::new(
        &CcSpec {
            name,
            params,
            guest: None,
        },
        common,
    )
    .map_err(|e| e.0)
}

export!(build);
