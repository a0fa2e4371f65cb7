//! A Linux BPF congestion controller, run as a `slowstart-cc` controller: the object clang
//! builds from a `struct tcp_congestion_ops` (the kernel's own examples:
//! tools/testing/selftests/bpf/progs/bpf_cubic.c, bpf_dctcp.c), the same file `bpftool
//! struct_ops register` loads into the kernel.
//!
//! [`register`] loads an object ([`object`]: its programs with every relocation done, CO-RE
//! field accesses resolved by name against the simulator's socket, [`layout`]) and registers it
//! with [`slowstart_cc::external`], after which its name builds controllers like a built-in's.
//! Each connection gets its own socket, stack and copy of the object's globals, and runs the
//! hooks as Linux TCP calls them ([`tcp`]) in an interpreter ([`vm`]) that checks every memory
//! access and bounds every call: a misbehaving object faults with one line, never crashes.

use std::collections::BTreeMap;
use std::sync::Arc;

use slowstart_cc::external::{self, Guest, GuestFactory, Outputs};
use slowstart_cc::params::ParamValue;
use slowstart_cc::{CcError, CommonParams};

pub mod btf;
pub mod layout;
pub mod object;
pub mod tcp;
pub mod vm;

pub use object::Object;

/// Largest object accepted, in bytes (an example with full debug info is ~700 KB).
pub const OBJECT_LIMIT: usize = 16 << 20;

/// Load `bytes` as a controller object; one line saying what is wrong otherwise.
pub fn load(bytes: &[u8]) -> Result<Object, String> {
    if bytes.len() > OBJECT_LIMIT {
        return Err(format!(
            "is {} bytes, more than the {OBJECT_LIMIT} accepted",
            bytes.len()
        ));
    }
    object::load(bytes, tcp::KFUNCS)
}

struct Factory {
    object: Arc<Object>,
}

/// The bytes of the object's data sections with `params` written into its globals, as a
/// libbpf skeleton sets them before loading.
fn data_with(
    object: &Object,
    params: &BTreeMap<String, ParamValue>,
) -> Result<Vec<Vec<u8>>, String> {
    let mut data: Vec<Vec<u8>> = object.data.iter().map(|d| d.bytes.clone()).collect();
    for (key, value) in params {
        let (global, bytes) = encode(object, key, value)?;
        data[global.section][global.offset..global.offset + global.size].copy_from_slice(&bytes);
    }
    Ok(data)
}

/// A global's new bytes: an integer (or true/false) that fits its type.
fn encode<'a>(
    object: &'a Object,
    key: &str,
    value: &ParamValue,
) -> Result<(&'a object::Global, Vec<u8>), String> {
    let Some(global) = object.globals.iter().find(|g| g.name == key) else {
        let settable = object.settable_globals();
        return Err(format!(
            "{key}: not a global of {} (its globals: {})",
            object.name,
            if settable.is_empty() {
                "none".to_string()
            } else {
                settable.join(", ")
            }
        ));
    };
    if object.data[global.section].name == ".bss" {
        return Err(format!(
            "{key}: is zero-initialised (.bss), so the object file has no bytes to set: declare it \
             `const volatile` with a value"
        ));
    }
    if global.size > 8 {
        return Err(format!("{key}: is {} bytes, not an integer", global.size));
    }
    let bits = 8 * global.size as u32;
    let (lo, hi): (f64, f64) = if global.signed {
        (
            -(2f64.powi(bits as i32 - 1)),
            2f64.powi(bits as i32 - 1) - 1.0,
        )
    } else {
        (0.0, 2f64.powi(bits as i32) - 1.0)
    };
    let v = match value {
        ParamValue::Bool(b) => *b as u8 as f64,
        ParamValue::Number(x) => *x,
        ParamValue::Text(t) => {
            return Err(format!("{key}: expected an integer, got {t:?}"));
        }
    };
    if v.fract() != 0.0 || v < lo || v > hi {
        return Err(format!(
            "{key}: expected an integer from {lo} to {hi} ({}-bit {}), got {v}",
            bits,
            if global.signed { "signed" } else { "unsigned" }
        ));
    }
    let raw = if global.signed {
        v as i64 as u64
    } else {
        v as u64
    };
    Ok((global, raw.to_le_bytes()[..global.size].to_vec()))
}

impl GuestFactory for Factory {
    fn build(
        &self,
        params: &BTreeMap<String, ParamValue>,
        common: &CommonParams,
    ) -> Result<(Box<dyn Guest>, Outputs), CcError> {
        let data = data_with(&self.object, params).map_err(CcError)?;
        let connection = tcp::Connection::new(self.object.clone(), &data, common);
        Ok((Box::new(connection), tcp::initial_outputs(common)))
    }

    fn needs_ecn(&self) -> Option<&'static [&'static str]> {
        (self.object.flags & object::TCP_CONG_NEEDS_ECN != 0).then_some(&["dctcp", "accurate"])
    }
}

/// Load `bytes` and register it under `name`; one line if it cannot run.
pub fn register(name: &str, bytes: &[u8]) -> Result<(), String> {
    let object = load(bytes)?;
    external::register(
        name,
        Arc::new(Factory {
            object: Arc::new(object),
        }),
    );
    Ok(())
}

/// The object file with `params` written into its globals' bytes (for the kernel: `bpftool
/// struct_ops register` then loads the values the simulator ran).
pub fn set_globals(bytes: &[u8], params: &BTreeMap<String, ParamValue>) -> Result<Vec<u8>, String> {
    let object = load(bytes)?;
    let mut out = bytes.to_vec();
    for (key, value) in params {
        let (global, new) = encode(&object, key, value)?;
        let at = global
            .file_offset
            .ok_or_else(|| format!("{key}: has no bytes in the object file"))?;
        out[at..at + global.size].copy_from_slice(&new);
    }
    Ok(out)
}
