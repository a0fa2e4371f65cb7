//! A user's WebAssembly controller, run as a `slowstart-cc` controller.
//!
//! [`register`] checks a module against the guest interface (`slowstart_guest::abi`: no
//! imports, the exports and their types, the version) and registers it under a name with
//! [`slowstart_cc::external`], after which the name builds controllers like a built-in's. Each
//! controller is one instance of the module, sandboxed: it has no imports (no file, network or
//! clock), its memory is capped at [`MEMORY_LIMIT`] and each call at [`FUEL_PER_CALL`]
//! instructions, so a guest that loops or grows without bound faults instead of hanging.
//! Interpreted by wasmi, which is deterministic: the same module, scenario and seed give the
//! same bytes.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use slowstart_cc::external::{self, Event, Guest, GuestFactory, Outputs};
use slowstart_cc::params::ParamValue;
use slowstart_cc::registry::{CcError, CommonParams};
use slowstart_guest::abi::{self, EventKind, Params, EVENT_WORDS};
use wasmi::{
    Config, Engine, ExternType, Instance, Linker, Memory, Module, StoreLimits, StoreLimitsBuilder,
    TypedFunc, ValType,
};

/// The largest linear memory a guest instance may have (a controller needs kilobytes).
pub const MEMORY_LIMIT: usize = 16 << 20;

/// The instructions one call may execute before it is stopped as a runaway (an ACK takes
/// hundreds for the built-ins compiled as guests).
pub const FUEL_PER_CALL: u64 = 10_000_000;

/// Largest module accepted, in bytes.
pub const MODULE_LIMIT: usize = 16 << 20;

type Store = wasmi::Store<StoreLimits>;

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut config = Config::default();
        config.consume_fuel(true);
        Engine::new(&config)
    })
}

/// A checked module that builds one instance per controller.
pub struct WasmFactory {
    module: Module,
}

/// Check `bytes` against the guest interface and register them under `name` (a no-op when the
/// name is registered already: names carry the module's content hash).
pub fn register(name: &str, bytes: &[u8]) -> Result<(), String> {
    if external::is_registered(name) {
        return Ok(());
    }
    let factory = WasmFactory::load(bytes)?;
    external::register(name, Arc::new(factory));
    Ok(())
}

/// A module's SHA-256 in hex, as the loader names it (`python/slowstart/guests.py`).
pub fn sha256_hex(module: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(module)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The functions every guest exports, with their parameter types (each returns one i32).
fn expected_exports() -> Vec<(&'static str, Vec<ValType>)> {
    use ValType::{I32, I64};
    let mut list = vec![
        ("slowstart_abi_version", vec![]),
        ("slowstart_io", vec![]),
        ("slowstart_new", vec![I64, I64, I32, I64, I32]),
    ];
    list.extend(EventKind::ALL.iter().map(|k| (k.export(), vec![])));
    list
}

impl WasmFactory {
    /// Compile and check a module: one line saying what is wrong with it, if anything.
    pub fn load(bytes: &[u8]) -> Result<Self, String> {
        if bytes.len() > MODULE_LIMIT {
            return Err(format!(
                "{} bytes is larger than a controller module may be ({MODULE_LIMIT})",
                bytes.len()
            ));
        }
        if !bytes.starts_with(b"\0asm") {
            return Err("not a WebAssembly module (no \\0asm header)".into());
        }
        let module = Module::new(engine(), bytes)
            .map_err(|e| format!("not a valid WebAssembly module: {e}"))?;
        if let Some(import) = module.imports().next() {
            return Err(format!(
                "imports {}.{}, which slowstart does not provide (a guest has no file, network \
                 or clock: build it for wasm32-unknown-unknown, without WASI)",
                import.module(),
                import.name()
            ));
        }
        let exports: BTreeMap<&str, ExternType> = module
            .exports()
            .map(|e| (e.name(), e.ty().clone()))
            .collect();
        if !matches!(exports.get("memory"), Some(ExternType::Memory(_))) {
            return Err("missing export 'memory' (the guest's linear memory)".into());
        }
        for (name, params) in expected_exports() {
            match exports.get(name) {
                Some(ExternType::Func(f))
                    if f.params() == params.as_slice() && f.results() == [ValType::I32] =>
                {
                    continue
                }
                Some(_) => {
                    return Err(format!(
                        "export '{name}' has the wrong type (expected ({params:?}) -> i32, \
                         slowstart_guest::abi)"
                    ))
                }
                None => {
                    return Err(format!(
                        "missing export '{name}' (is it built with slowstart_guest::export!?)"
                    ))
                }
            }
        }
        let factory = Self { module };
        let (mut store, instance) = factory.instantiate()?;
        let version = instance
            .get_typed_func::<(), i32>(&store, "slowstart_abi_version")
            .and_then(|f| f.call(&mut store, ()))
            .map_err(|e| format!("slowstart_abi_version: {e}"))?;
        if version != abi::VERSION {
            return Err(format!(
                "built for guest interface version {version}; this slowstart runs version {} \
                 (rebuild it against this slowstart-guest)",
                abi::VERSION
            ));
        }
        Ok(factory)
    }

    fn instantiate(&self) -> Result<(Store, Instance), String> {
        let limits = StoreLimitsBuilder::new()
            .memory_size(MEMORY_LIMIT)
            .instances(1)
            .build();
        let mut store = Store::new(engine(), limits);
        store.limiter(|limits| limits);
        store
            .set_fuel(FUEL_PER_CALL)
            .map_err(|e| format!("fuel: {e}"))?;
        let instance = Linker::new(engine())
            .instantiate_and_start(&mut store, &self.module)
            .map_err(|e| format!("cannot be instantiated: {e}"))?;
        Ok((store, instance))
    }
}

/// One controller: an instance, its memory, its exchange block and its event functions.
struct WasmGuest {
    store: Store,
    memory: Memory,
    io: usize,
    events: [TypedFunc<(), i32>; 6],
    words: [u64; EVENT_WORDS],
}

impl GuestFactory for WasmFactory {
    fn build(
        &self,
        params: &BTreeMap<String, ParamValue>,
        common: &CommonParams,
    ) -> Result<(Box<dyn Guest>, Outputs), CcError> {
        let (mut store, instance) = self.instantiate().map_err(CcError)?;
        let memory = instance
            .get_memory(&store, "memory")
            .ok_or_else(|| CcError("missing export 'memory'".into()))?;
        let func = |store: &Store, name: &str| {
            instance
                .get_typed_func::<(), i32>(store, name)
                .map_err(|e| CcError(format!("{name}: {e}")))
        };
        let io = func(&store, "slowstart_io")?
            .call(&mut store, ())
            .map_err(|e| CcError(format!("slowstart_io: {e}")))? as u32 as usize;
        let events = [
            func(&store, EventKind::Sent.export())?,
            func(&store, EventKind::Ack.export())?,
            func(&store, EventKind::RttSample.export())?,
            func(&store, EventKind::Congestion.export())?,
            func(&store, EventKind::RecoveryExit.export())?,
            func(&store, EventKind::Rto.export())?,
        ];
        let mut guest = WasmGuest {
            store,
            memory,
            io,
            events,
            words: [0; EVENT_WORDS],
        };
        let text = Params(params.clone()).encode();
        if text.len() > abi::TEXT_BYTES {
            return Err(CcError(format!(
                "parameters take {} bytes, more than {}",
                text.len(),
                abi::TEXT_BYTES
            )));
        }
        guest.write(abi::TEXT_LEN_OFFSET, &(text.len() as u64).to_le_bytes())?;
        guest.write(abi::TEXT_OFFSET, text.as_bytes())?;
        let new = instance
            .get_typed_func::<(i64, i64, i32, i64, i32), i32>(&guest.store, "slowstart_new")
            .map_err(|e| CcError(format!("slowstart_new: {e}")))?;
        guest
            .store
            .set_fuel(FUEL_PER_CALL)
            .map_err(|e| CcError(e.to_string()))?;
        let status = new
            .call(
                &mut guest.store,
                (
                    common.mss as i64,
                    common.initcwnd as i64,
                    common.abc as i32,
                    common.seed as i64,
                    common.paced as i32,
                ),
            )
            .map_err(|e| CcError(trap("slowstart_new", &e)))?;
        let out = guest.answer(status).map_err(CcError)?;
        Ok((Box::new(guest), out))
    }
}

fn trap(export: &str, e: &wasmi::Error) -> String {
    if matches!(e.as_trap_code(), Some(wasmi::TrapCode::OutOfFuel)) {
        return format!(
            "{export} ran past its budget of {FUEL_PER_CALL} instructions (an endless loop?)"
        );
    }
    format!("{export} trapped: {e}")
}

impl WasmGuest {
    fn write(&mut self, offset: usize, bytes: &[u8]) -> Result<(), CcError> {
        let at = self.io + offset;
        self.memory
            .data_mut(&mut self.store)
            .get_mut(at..at + bytes.len())
            .ok_or_else(|| {
                CcError(format!(
                    "slowstart_io {:#x} lies outside its memory",
                    self.io
                ))
            })?
            .copy_from_slice(bytes);
        Ok(())
    }

    /// The answers after a call that returned `status`, or the guest's message.
    fn answer(&mut self, status: i32) -> Result<Outputs, String> {
        let data = self.memory.data(&self.store);
        let block = data
            .get(self.io..self.io + abi::IO_BYTES)
            .ok_or_else(|| format!("slowstart_io {:#x} lies outside its memory", self.io))?;
        if status != 0 {
            let len = u64::from_le_bytes(word(block, abi::TEXT_LEN_OFFSET)) as usize;
            let text = &block[abi::TEXT_OFFSET..abi::TEXT_OFFSET + len.min(abi::TEXT_BYTES)];
            let message = String::from_utf8_lossy(text);
            return Err(format!("returned {status}: {}", message.trim()));
        }
        let mut out = [0u64; 5];
        for (i, w) in out.iter_mut().enumerate() {
            *w = u64::from_le_bytes(word(block, abi::OUT_OFFSET + 8 * i));
        }
        abi::decode_out(&out)
    }
}

fn word(block: &[u8], at: usize) -> [u8; 8] {
    block[at..at + 8].try_into().expect("8 bytes")
}

impl Guest for WasmGuest {
    fn call(&mut self, event: Event<'_>) -> Result<Outputs, String> {
        let w = &mut self.words;
        let kind = match event {
            Event::Sent(e) => {
                abi::encode_sent(e, w);
                EventKind::Sent
            }
            Event::Ack(e) => {
                abi::encode_ack(e, w);
                EventKind::Ack
            }
            Event::RttSample { now, rtt } => {
                abi::encode_pair(now, rtt, w);
                EventKind::RttSample
            }
            Event::Congestion(e) => {
                abi::encode_congestion(e, w);
                EventKind::Congestion
            }
            Event::RecoveryExit { now } => {
                abi::encode_pair(now, 0, w);
                EventKind::RecoveryExit
            }
            Event::Rto {
                now,
                bytes_in_flight,
            } => {
                abi::encode_pair(now, bytes_in_flight, w);
                EventKind::Rto
            }
        };
        let mut bytes = [0u8; EVENT_WORDS * 8];
        for (chunk, x) in bytes.chunks_exact_mut(8).zip(self.words.iter()) {
            chunk.copy_from_slice(&x.to_le_bytes());
        }
        self.write(abi::EVENT_OFFSET, &bytes).map_err(|e| e.0)?;
        self.store
            .set_fuel(FUEL_PER_CALL)
            .map_err(|e| e.to_string())?;
        let export = kind.export();
        let status = self.events[kind as usize]
            .call(&mut self.store, ())
            .map_err(|e| trap(export, &e))?;
        self.answer(status).map_err(|e| format!("{export} {e}"))
    }
}

#[cfg(test)]
mod tests;
