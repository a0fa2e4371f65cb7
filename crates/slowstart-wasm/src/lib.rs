//! A user's WebAssembly controller, run as a `slowstart-cc` controller.
//!
//! [`register`] checks a module against the guest interface (`slowstart_guest::abi`: no
//! imports, the exports and their types, the version) and registers it under a name with
//! [`slowstart_cc::external`], after which the name builds controllers like a built-in's. Each
//! controller is one instance of the module, sandboxed: it has no imports (no file, network or
//! clock), its memory is capped at [`MEMORY_LIMIT`] and each call has a budget (wasmi:
//! [`FUEL_PER_CALL`] instructions; wasmtime: [`TIME_PER_CALL`]), so a guest that loops or grows
//! without bound faults instead of hanging.
//!
//! Two [`Runtime`]s run a module: wasmi, an interpreter, always built; and wasmtime, which
//! compiles it to native code with Cranelift, built with the cargo feature `jit`
//! (docs/performance.md, "Your own controller", says which is used where and why). Both are
//! deterministic (NaNs are canonical): the same module, scenario and seed give the same bytes,
//! whichever runs them. Only where a runaway call is stopped differs: wasmi counts fuel, the
//! same on every machine; wasmtime checks a clock's epoch at function entries and loop heads,
//! far cheaper than its fuel, after a time that no well-behaved call comes near.

use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::Arc;
use std::time::Duration;

use slowstart_cc::external::{self, Event, Guest, GuestFactory, Outputs};
use slowstart_cc::params::ParamValue;
use slowstart_cc::{CcError, CommonParams};
use slowstart_guest::abi::{self, EventKind, Params, EVENT_WORDS};

mod interp;
#[cfg(feature = "jit")]
mod jit;

/// The largest linear memory a guest instance may have (a controller needs kilobytes).
pub const MEMORY_LIMIT: usize = 16 << 20;

/// The instructions one call may execute under wasmi before it is stopped as a runaway (an ACK
/// takes hundreds for the built-ins compiled as guests).
pub const FUEL_PER_CALL: u64 = 10_000_000;

/// The time one call may run under wasmtime before it is stopped as a runaway, in whole epoch
/// ticks of [`EPOCH_TICK`] (an ACK takes about a microsecond for the built-ins as guests).
pub const TIME_PER_CALL: Duration = Duration::from_secs(1);

/// The period of the clock whose epochs bound a call under wasmtime: a runaway call stops
/// between [`TIME_PER_CALL`] less one tick and [`TIME_PER_CALL`] after it began.
pub const EPOCH_TICK: Duration = Duration::from_millis(100);

/// Largest module accepted, in bytes.
pub const MODULE_LIMIT: usize = 16 << 20;

/// What runs a guest module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// wasmi, an interpreter.
    Interpreter,
    /// wasmtime, compiling to native code with Cranelift (cargo feature `jit`).
    #[cfg(feature = "jit")]
    Jit,
}

impl Runtime {
    /// The runtimes in this build.
    pub const BUILT: &[Runtime] = &[
        Runtime::Interpreter,
        #[cfg(feature = "jit")]
        Runtime::Jit,
    ];

    /// The runtime [`register`] uses unless [`RUNTIME_VAR`] says: the JIT where it is built.
    pub const DEFAULT: Runtime = *Self::BUILT.last().expect("one runtime");

    /// The runtime's crate, as [`RUNTIME_VAR`] and reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Interpreter => "wasmi",
            #[cfg(feature = "jit")]
            Runtime::Jit => "wasmtime",
        }
    }

    /// The runtime [`RUNTIME_VAR`] names, [`Runtime::DEFAULT`] when it is unset or empty.
    pub fn from_env() -> Result<Runtime, String> {
        let Some(value) = std::env::var_os(RUNTIME_VAR).filter(|v| !v.is_empty()) else {
            return Ok(Self::DEFAULT);
        };
        let value = value.to_string_lossy();
        Self::BUILT
            .iter()
            .copied()
            .find(|r| r.name() == value)
            .ok_or_else(|| {
                let built: Vec<&str> = Self::BUILT.iter().map(|r| r.name()).collect();
                let hint = if cfg!(feature = "jit") {
                    ""
                } else {
                    "; wasmtime needs the cargo feature jit"
                };
                format!(
                    "{RUNTIME_VAR}={value:?} is not a runtime of this build (accepted: {}{hint})",
                    built.join(", ")
                )
            })
    }
}

/// The environment variable naming the runtime [`register`] uses (`wasmi`, or `wasmtime` in a
/// build with the feature `jit`): to compare them on the same run.
pub const RUNTIME_VAR: &str = "SLOWSTART_WASM_RUNTIME";

/// A value type of an export's signature, as far as the interface tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Type {
    I32,
    I64,
    Other,
}

/// An export's kind and, for a function, its parameter and result types.
enum Export {
    Memory,
    Func(Vec<Type>, Vec<Type>),
    Other,
}

/// What a call into the guest ended with, other than returning.
enum Stop {
    /// Past [`FUEL_PER_CALL`] (wasmi).
    OutOfFuel,
    /// Past [`TIME_PER_CALL`] (wasmtime).
    #[cfg(feature = "jit")]
    OutOfTime,
    Trap(String),
}

/// A call into an instance: the interface's exports.
#[derive(Clone, Copy)]
enum Call {
    Version,
    Io,
    New(CommonParams),
    Events,
    Event(EventKind),
}

impl Call {
    fn export(self) -> &'static str {
        match self {
            Call::Version => "slowstart_abi_version",
            Call::Io => "slowstart_io",
            Call::New(_) => "slowstart_new",
            Call::Events => EVENTS_EXPORT,
            Call::Event(kind) => kind.export(),
        }
    }
}

/// The arguments of `slowstart_new`, in the interface's order and types.
type NewArgs = (i64, i64, i32, i64, i32);

/// An instance's exports, looked up once: `F` is the runtime's handle on a `() -> i32` function,
/// `N` on `slowstart_new`.
struct Exports<F, N> {
    version: F,
    io: F,
    new: N,
    /// `slowstart_events`, where exported.
    wanted: Option<F>,
    /// One per [`EventKind`], where exported.
    events: [Option<F>; 6],
}

/// What a [`Call`] runs.
enum Target<'a, F, N> {
    Func(&'a F),
    New(&'a N, NewArgs),
    /// Answered by the host: `slowstart_events` where the module does not export it.
    Answer(i32),
}

impl<F, N> Exports<F, N> {
    /// Look the exports up with `func` (only called on a module whose exports [`check`]
    /// accepted: an optional one is absent or typed).
    fn lookup(new: N, mut func: impl FnMut(&str) -> Result<F, String>) -> Result<Self, String> {
        Ok(Exports {
            version: func("slowstart_abi_version")?,
            io: func("slowstart_io")?,
            new,
            wanted: func(EVENTS_EXPORT).ok(),
            events: EventKind::ALL.map(|k| func(k.export()).ok()),
        })
    }

    /// The events whose exports the module has, as [`EventKind::bit`]s.
    fn exported(&self) -> i32 {
        EventKind::ALL
            .iter()
            .filter(|k| self.events[**k as usize].is_some())
            .fold(0, |bits, k| bits | k.bit())
    }

    fn target(&self, call: Call) -> Result<Target<'_, F, N>, Stop> {
        Ok(match call {
            Call::Version => Target::Func(&self.version),
            Call::Io => Target::Func(&self.io),
            Call::New(c) => Target::New(
                &self.new,
                (
                    c.mss as i64,
                    c.initcwnd as i64,
                    c.abc as i32,
                    c.seed as i64,
                    c.paced as i32,
                ),
            ),
            Call::Events => match &self.wanted {
                Some(f) => Target::Func(f),
                None => Target::Answer(self.exported()),
            },
            Call::Event(kind) => match &self.events[kind as usize] {
                Some(f) => Target::Func(f),
                None => return Err(Stop::Trap("not exported".into())),
            },
        })
    }
}

/// A runtime's compiled module.
trait Backend: Sized + Send + Sync + 'static {
    type Sandbox: Sandbox + 'static;
    /// Compile (and validate) a module.
    fn compile(bytes: &[u8]) -> Result<Self, String>;
    /// The first import, as (module, name).
    fn first_import(&self) -> Option<(String, String)>;
    fn exports(&self) -> BTreeMap<String, Export>;
    /// A fresh instance, its memory capped at [`MEMORY_LIMIT`]; only called on a module whose
    /// exports [`check`] accepted.
    fn instantiate(&self) -> Result<Self::Sandbox, String>;
}

/// One instance of a module (`Send`: quinn moves its controllers between threads).
trait Sandbox: Send {
    /// Whether the memory's bytes never move or shrink while the instance lives, so that a
    /// pointer into them stays valid.
    const FIXED_MEMORY: bool;
    type Func;
    type New;
    fn exports(&self) -> &Exports<Self::Func, Self::New>;
    /// The instance's linear memory.
    fn memory(&mut self) -> &mut [u8];
    /// Call an export (its [`Exports::target`]) with a fresh budget.
    fn call(&mut self, call: Call) -> Result<i32, Stop>;
}

/// The optional export naming the events an instance wants (`slowstart_guest::abi`).
const EVENTS_EXPORT: &str = "slowstart_events";

/// The functions of the interface, with their parameter types (each returns one i32) and
/// whether a guest must export them.
fn expected_exports() -> Vec<(&'static str, Vec<Type>, bool)> {
    use Type::{I32, I64};
    let mut list = vec![
        ("slowstart_abi_version", vec![], true),
        ("slowstart_io", vec![], true),
        ("slowstart_new", vec![I64, I64, I32, I64, I32], true),
        (EVENTS_EXPORT, vec![], false),
    ];
    list.extend(
        EventKind::ALL
            .iter()
            .map(|k| (k.export(), vec![], !k.optional())),
    );
    list
}

/// Compile `bytes` with backend `B` and check them against the interface: one line saying what
/// is wrong with them, if anything.
fn check<B: Backend>(bytes: &[u8]) -> Result<B, String> {
    if bytes.len() > MODULE_LIMIT {
        return Err(format!(
            "{} bytes is larger than a controller module may be ({MODULE_LIMIT})",
            bytes.len()
        ));
    }
    if !bytes.starts_with(b"\0asm") {
        return Err("not a WebAssembly module (no \\0asm header)".into());
    }
    let module = B::compile(bytes)?;
    if let Some((module, name)) = module.first_import() {
        return Err(format!(
            "imports {module}.{name}, which slowstart does not provide (a guest has no file, \
             network or clock: build it for wasm32-unknown-unknown, without WASI)"
        ));
    }
    let exports = module.exports();
    if !matches!(exports.get("memory"), Some(Export::Memory)) {
        return Err("missing export 'memory' (the guest's linear memory)".into());
    }
    for (name, params, required) in expected_exports() {
        match exports.get(name) {
            Some(Export::Func(p, r)) if *p == params && *r == [Type::I32] => continue,
            None if !required => continue,
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
    let version = module
        .instantiate()?
        .call(Call::Version)
        .map_err(|e| stopped(Call::Version, e))?;
    if version != abi::VERSION {
        return Err(format!(
            "built for guest interface version {version}; this slowstart runs version {} \
             (rebuild it against this slowstart-guest)",
            abi::VERSION
        ));
    }
    Ok(module)
}

/// The one line for a call that did not return.
fn stopped(call: Call, stop: Stop) -> String {
    let export = call.export();
    match stop {
        Stop::OutOfFuel => format!(
            "{export} ran past its budget of {FUEL_PER_CALL} instructions (an endless loop?)"
        ),
        #[cfg(feature = "jit")]
        Stop::OutOfTime => format!(
            "{export} ran past its budget of {} s (an endless loop?)",
            TIME_PER_CALL.as_secs_f64()
        ),
        Stop::Trap(e) => format!("{export} trapped: {e}"),
    }
}

enum Compiled {
    Interpreter(interp::Module),
    #[cfg(feature = "jit")]
    Jit(jit::Module),
}

/// A checked module that builds one instance per controller.
pub struct WasmFactory {
    compiled: Compiled,
}

/// Check `bytes` against the guest interface and register them under `name`, run by the
/// runtime [`Runtime::from_env`] names (a no-op when the name is registered already: names
/// carry the module's content hash).
pub fn register(name: &str, bytes: &[u8]) -> Result<(), String> {
    if external::is_registered(name) {
        return Ok(());
    }
    let factory = WasmFactory::load_with(bytes, Runtime::from_env()?)?;
    external::register(name, Arc::new(factory));
    Ok(())
}

/// A module's SHA-256 in hex, as the loader names it (`python/slowstart/loading/guests.py`).
pub fn sha256_hex(module: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(module)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl WasmFactory {
    /// Compile and check a module for [`Runtime::DEFAULT`].
    pub fn load(bytes: &[u8]) -> Result<Self, String> {
        Self::load_with(bytes, Runtime::DEFAULT)
    }

    /// Compile and check a module for `runtime`: one line saying what is wrong with it, if
    /// anything.
    pub fn load_with(bytes: &[u8], runtime: Runtime) -> Result<Self, String> {
        let compiled = match runtime {
            Runtime::Interpreter => Compiled::Interpreter(check(bytes)?),
            #[cfg(feature = "jit")]
            Runtime::Jit => Compiled::Jit(check(bytes)?),
        };
        Ok(Self { compiled })
    }
}

impl GuestFactory for WasmFactory {
    fn build(
        &self,
        params: &BTreeMap<String, ParamValue>,
        common: &CommonParams,
    ) -> Result<(Box<dyn Guest>, Outputs), CcError> {
        let (guest, out) = match &self.compiled {
            Compiled::Interpreter(m) => boxed(WasmGuest::build(m, params, common)),
            #[cfg(feature = "jit")]
            Compiled::Jit(m) => boxed(WasmGuest::build(m, params, common)),
        }
        .map_err(CcError)?;
        Ok((guest, out))
    }
}

fn boxed<S: Sandbox + 'static>(
    built: Result<(WasmGuest<S>, Outputs), String>,
) -> Result<(Box<dyn Guest>, Outputs), String> {
    built.map(|(g, out)| (Box::new(g) as Box<dyn Guest>, out))
}

/// One controller: an instance, the address of its exchange block and the events it does
/// without.
struct WasmGuest<S> {
    sandbox: S,
    io: usize,
    /// The block, where [`Sandbox::FIXED_MEMORY`]: found once rather than at every call.
    fixed: Option<FixedBlock>,
    skipped: u8,
}

/// The exchange block in a memory that never moves or shrinks, [`abi::IO_BYTES`] from here.
struct FixedBlock(NonNull<u8>);

// SAFETY: it points into the memory of the instance beside it in its `WasmGuest`, which moves
// between threads with it and is only reached through that `WasmGuest`.
unsafe impl Send for FixedBlock {}

impl<S: Sandbox> WasmGuest<S> {
    fn build<B: Backend<Sandbox = S>>(
        module: &B,
        params: &BTreeMap<String, ParamValue>,
        common: &CommonParams,
    ) -> Result<(Self, Outputs), String> {
        let mut sandbox = module.instantiate()?;
        let io = sandbox.call(Call::Io).map_err(|e| stopped(Call::Io, e))? as u32 as usize;
        let mut guest = WasmGuest {
            sandbox,
            io,
            fixed: None,
            skipped: 0,
        };
        // The block lies in memory, which never shrinks: checked once here, not per call.
        let block = NonNull::from(guest.block()?).cast();
        if S::FIXED_MEMORY {
            guest.fixed = Some(FixedBlock(block));
        }
        let text = Params(params.clone()).encode();
        if text.len() > abi::TEXT_BYTES {
            return Err(format!(
                "parameters take {} bytes, more than {}",
                text.len(),
                abi::TEXT_BYTES
            ));
        }
        let block = guest.block()?;
        block[abi::TEXT_LEN_OFFSET..abi::TEXT_OFFSET]
            .copy_from_slice(&(text.len() as u64).to_le_bytes());
        block[abi::TEXT_OFFSET..abi::TEXT_OFFSET + text.len()].copy_from_slice(text.as_bytes());
        let call = Call::New(*common);
        let status = guest.sandbox.call(call).map_err(|e| stopped(call, e))?;
        let out = guest.answer(status)?;
        guest.skipped = guest.events()?;
        Ok((guest, out))
    }

    /// The events not to send, from `slowstart_events` (checked against the exports).
    fn events(&mut self) -> Result<u8, String> {
        let all = (1 << EventKind::ALL.len()) - 1;
        let wanted = self
            .sandbox
            .call(Call::Events)
            .map_err(|e| stopped(Call::Events, e))?;
        if wanted & !all != 0 {
            return Err(format!(
                "{EVENTS_EXPORT} returned {wanted:#x} (accepted: bits 0..={}, one an event, \
                 slowstart_guest::abi::EventKind)",
                EventKind::ALL.len() - 1
            ));
        }
        let exported = self.sandbox.exports().exported();
        if let Some(kind) = EventKind::ALL
            .iter()
            .find(|k| wanted & k.bit() != 0 && exported & k.bit() == 0)
        {
            return Err(format!(
                "{EVENTS_EXPORT} asks for an event the module does not export ({})",
                kind.export()
            ));
        }
        Ok((all & !wanted) as u8)
    }

    /// The exchange block in the instance's memory.
    fn block(&mut self) -> Result<&mut [u8], String> {
        if let Some(FixedBlock(at)) = self.fixed {
            // SAFETY: the block was found in the instance's memory when `at` was taken, and
            // the memory's bytes neither move nor shrink (`Sandbox::FIXED_MEMORY`) while the
            // sandbox, owned by `self`, lives; the guest only runs inside `Sandbox::call`, which
            // needs `&mut self.sandbox`, so nothing else reaches the bytes while the slice
            // borrows `self`.
            return Ok(unsafe { std::slice::from_raw_parts_mut(at.as_ptr(), abi::IO_BYTES) });
        }
        let io = self.io;
        self.sandbox
            .memory()
            .get_mut(io..io + abi::IO_BYTES)
            .ok_or_else(|| format!("slowstart_io {io:#x} lies outside its memory"))
    }

    /// The answers after a call that returned `status`, or the guest's message.
    fn answer(&mut self, status: i32) -> Result<Outputs, String> {
        let block = self.block()?;
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

impl<S: Sandbox> Guest for WasmGuest<S> {
    fn skipped(&self) -> u8 {
        self.skipped
    }

    fn call(&mut self, event: Event<'_>) -> Result<Outputs, String> {
        let w = &mut [0; EVENT_WORDS];
        let (kind, used) = match event {
            Event::Sent(e) => (EventKind::Sent, abi::encode_sent(e, w)),
            Event::Ack(e) => (EventKind::Ack, abi::encode_ack(e, w)),
            Event::RttSample { now, rtt } => (EventKind::RttSample, abi::encode_pair(now, rtt, w)),
            Event::Congestion(e) => (EventKind::Congestion, abi::encode_congestion(e, w)),
            Event::RecoveryExit { now } => (EventKind::RecoveryExit, abi::encode_pair(now, 0, w)),
            Event::Rto {
                now,
                bytes_in_flight,
            } => (EventKind::Rto, abi::encode_pair(now, bytes_in_flight, w)),
        };
        // Only the words the event uses.
        let words = &w[..used];
        let block = self.block().map_err(|e| format!("{} {e}", kind.export()))?;
        let event = &mut block[abi::EVENT_OFFSET..abi::EVENT_OFFSET + 8 * used];
        for (chunk, x) in event.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&x.to_le_bytes());
        }
        let call = Call::Event(kind);
        let status = self.sandbox.call(call).map_err(|e| stopped(call, e))?;
        self.answer(status)
            .map_err(|e| format!("{} {e}", kind.export()))
    }
}

#[cfg(test)]
mod tests;
