//! [`Runtime::Jit`](crate::Runtime::Jit): wasmtime, compiling a module to native code with
//! Cranelift when it is loaded. The same sandbox as the interpreter's: no imports, the memory
//! capped by [`StoreLimits`], NaNs canonicalised (`Config::cranelift_nan_canonicalization`). The
//! per-call budget is time, [`TIME_PER_CALL`]: wasmtime's epoch interruption
//! (`Config::epoch_interruption`), one load and compare at each function entry and loop head,
//! where its fuel adds and checks a count at every block (a fifth of a guest's instructions per
//! event, docs/performance.md). A thread of this process advances the engine's epoch every
//! [`EPOCH_TICK`]; each call's deadline is the whole ticks of [`TIME_PER_CALL`] from its start.
//! Epochs only say when a runaway call stops: a call that returns gives the same answers
//! whenever it returns.
//! Out-of-bounds accesses trap through guard pages and wasmtime's signal handlers (its default,
//! as in wasmtime-py inside CPython), which chain to handlers installed before them, such as
//! pytest's faulthandler.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use wasmtime::{
    Config, Engine, ExternType, Linker, Memory, StoreLimits, StoreLimitsBuilder, Trap, TypedFunc,
    ValType,
};

use crate::{
    Backend, Call, Export, Exports, NewArgs, Stop, Target, Type, EPOCH_TICK, MEMORY_LIMIT,
    TIME_PER_CALL,
};

type Store = wasmtime::Store<StoreLimits>;

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut config = Config::new();
        // A memory grows in place, never moved (its 16 MiB cap lies far inside the 4 GiB
        // reserved for it): `Sandbox::FIXED_MEMORY`.
        config
            .epoch_interruption(true)
            .memory_may_move(false)
            .cranelift_nan_canonicalization(true)
            .relaxed_simd_deterministic(true);
        Engine::new(&config).expect("wasmtime's configuration is fixed and valid")
    })
}

/// A call's deadline, in ticks of the epoch after its start.
const DEADLINE_TICKS: u64 = (TIME_PER_CALL.as_millis() / EPOCH_TICK.as_millis()) as u64;

/// Start the thread that advances the engine's epoch, unless this process has it: a child forked
/// from a process that had it (a sweep's process pool) inherits the engine but not the thread.
fn start_epoch_clock() {
    static CLOCK_PROCESS: AtomicU32 = AtomicU32::new(0);
    let process = std::process::id();
    if CLOCK_PROCESS.swap(process, Ordering::Relaxed) == process {
        return;
    }
    std::thread::Builder::new()
        .name("slowstart-wasm-epoch".into())
        .spawn(|| loop {
            std::thread::sleep(EPOCH_TICK);
            engine().increment_epoch();
        })
        .expect("a thread for the WebAssembly budget's clock");
}

pub struct Module(wasmtime::Module);

fn value_type(t: ValType) -> Type {
    match t {
        ValType::I32 => Type::I32,
        ValType::I64 => Type::I64,
        _ => Type::Other,
    }
}

fn one_line(e: &wasmtime::Error) -> String {
    format!("{e:#}").replace('\n', " ")
}

impl Backend for Module {
    type Sandbox = Sandbox;

    fn compile(bytes: &[u8]) -> Result<Self, String> {
        wasmtime::Module::new(engine(), bytes)
            .map(Module)
            .map_err(|e| format!("not a valid WebAssembly module: {}", one_line(&e)))
    }

    fn first_import(&self) -> Option<(String, String)> {
        self.0
            .imports()
            .next()
            .map(|i| (i.module().to_string(), i.name().to_string()))
    }

    fn exports(&self) -> BTreeMap<String, Export> {
        self.0
            .exports()
            .map(|e| {
                let kind = match e.ty() {
                    ExternType::Memory(_) => Export::Memory,
                    ExternType::Func(f) => Export::Func(
                        f.params().map(value_type).collect(),
                        f.results().map(value_type).collect(),
                    ),
                    _ => Export::Other,
                };
                (e.name().to_string(), kind)
            })
            .collect()
    }

    fn instantiate(&self) -> Result<Sandbox, String> {
        let limits = StoreLimitsBuilder::new()
            .memory_size(MEMORY_LIMIT)
            .instances(1)
            .build();
        let mut store = Store::new(engine(), limits);
        store.limiter(|limits| limits);
        start_epoch_clock();
        store.set_epoch_deadline(DEADLINE_TICKS);
        let instance = Linker::new(engine())
            .instantiate(&mut store, &self.0)
            .map_err(|e| format!("cannot be instantiated: {}", one_line(&e)))?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or("missing export 'memory'")?;
        let new = instance
            .get_typed_func(&mut store, "slowstart_new")
            .map_err(|e| format!("slowstart_new: {}", one_line(&e)))?;
        let exports = Exports::lookup(new, |name| {
            instance
                .get_typed_func::<(), i32>(&mut store, name)
                .map_err(|e| format!("{name}: {}", one_line(&e)))
        })?;
        Ok(Sandbox {
            store,
            memory,
            exports,
        })
    }
}

/// An instance, its memory and its exports.
pub struct Sandbox {
    store: Store,
    memory: Memory,
    exports: Exports<TypedFunc<(), i32>, TypedFunc<NewArgs, i32>>,
}

impl crate::Sandbox for Sandbox {
    const FIXED_MEMORY: bool = true;
    type Func = TypedFunc<(), i32>;
    type New = TypedFunc<NewArgs, i32>;

    fn exports(&self) -> &Exports<Self::Func, Self::New> {
        &self.exports
    }

    fn memory(&mut self) -> &mut [u8] {
        self.memory.data_mut(&mut self.store)
    }

    fn call(&mut self, call: Call) -> Result<i32, Stop> {
        self.store.set_epoch_deadline(DEADLINE_TICKS);
        let store = &mut self.store;
        match self.exports.target(call)? {
            Target::Func(f) => f.call(store, ()),
            Target::New(f, args) => f.call(store, args),
            Target::Answer(a) => return Ok(a),
        }
        .map_err(|e| match e.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => Stop::OutOfTime,
            // The trap's own words, as wasmi says them (its Display prefixes "wasm trap: ").
            Some(trap) => Stop::Trap(trap.to_string().trim_start_matches("wasm trap: ").into()),
            None => Stop::Trap(one_line(&e)),
        })
    }
}
