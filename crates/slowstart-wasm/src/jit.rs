//! [`Runtime::Jit`](crate::Runtime::Jit): wasmtime, compiling a module to native code with
//! Cranelift when it is loaded. The same sandbox as the interpreter's: no imports, the memory
//! capped by [`StoreLimits`], the per-call budget counted in fuel (deterministic, unlike epochs:
//! wasmtime's `Config::consume_fuel`), NaNs canonicalised (`Config::cranelift_nan_canonicalization`).
//! Out-of-bounds accesses trap through guard pages and wasmtime's signal handlers (its default,
//! as in wasmtime-py inside CPython), which chain to handlers installed before them, such as
//! pytest's faulthandler.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use slowstart_guest::abi::EventKind;
use wasmtime::{
    Config, Engine, ExternType, Linker, Memory, StoreLimits, StoreLimitsBuilder, Trap, TypedFunc,
    ValType,
};

use crate::{Backend, Call, Export, Stop, Type, EVENTS_EXPORT, FUEL_PER_CALL, MEMORY_LIMIT};

type Store = wasmtime::Store<StoreLimits>;

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut config = Config::new();
        config
            .consume_fuel(true)
            .cranelift_nan_canonicalization(true)
            .relaxed_simd_deterministic(true);
        Engine::new(&config).expect("wasmtime's configuration is fixed and valid")
    })
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
        store
            .set_fuel(FUEL_PER_CALL)
            .map_err(|e| format!("fuel: {}", one_line(&e)))?;
        let instance = Linker::new(engine())
            .instantiate(&mut store, &self.0)
            .map_err(|e| format!("cannot be instantiated: {}", one_line(&e)))?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or("missing export 'memory'")?;
        let mut func = |name: &str| {
            instance
                .get_typed_func::<(), i32>(&mut store, name)
                .map_err(|e| format!("{name}: {}", one_line(&e)))
        };
        let version = func("slowstart_abi_version")?;
        let io = func("slowstart_io")?;
        // The optional exports (crate::check saw their types): absent or typed.
        let mut optional = |name: &str| func(name).ok();
        let wanted = optional(EVENTS_EXPORT);
        let events = EventKind::ALL.map(|k| optional(k.export()));
        let new = instance
            .get_typed_func(&mut store, "slowstart_new")
            .map_err(|e| format!("slowstart_new: {}", one_line(&e)))?;
        Ok(Sandbox {
            store,
            memory,
            version,
            io,
            new,
            wanted,
            events,
        })
    }
}

/// An instance, its memory and its exports, looked up once.
pub struct Sandbox {
    store: Store,
    memory: Memory,
    version: TypedFunc<(), i32>,
    io: TypedFunc<(), i32>,
    new: TypedFunc<(i64, i64, i32, i64, i32), i32>,
    /// `slowstart_events`, where exported.
    wanted: Option<TypedFunc<(), i32>>,
    /// One per [`EventKind`], where exported.
    events: [Option<TypedFunc<(), i32>>; 6],
}

impl crate::Sandbox for Sandbox {
    fn memory(&mut self) -> &mut [u8] {
        self.memory.data_mut(&mut self.store)
    }

    fn exported(&self) -> i32 {
        EventKind::ALL
            .iter()
            .filter(|k| self.events[**k as usize].is_some())
            .fold(0, |bits, k| bits | k.bit())
    }

    fn call(&mut self, call: Call) -> Result<i32, Stop> {
        self.store
            .set_fuel(FUEL_PER_CALL)
            .map_err(|e| Stop::Trap(one_line(&e)))?;
        let store = &mut self.store;
        match call {
            Call::Version => self.version.call(store, ()),
            Call::Io => self.io.call(store, ()),
            Call::New(c) => self.new.call(
                store,
                (
                    c.mss as i64,
                    c.initcwnd as i64,
                    c.abc as i32,
                    c.seed as i64,
                    c.paced as i32,
                ),
            ),
            Call::Events => match &self.wanted {
                Some(f) => f.call(store, ()),
                None => return Ok(self.exported()),
            },
            Call::Event(kind) => match &self.events[kind as usize] {
                Some(f) => f.call(store, ()),
                None => return Err(Stop::Trap("not exported".into())),
            },
        }
        .map_err(|e| match e.downcast_ref::<Trap>() {
            Some(Trap::OutOfFuel) => Stop::OutOfFuel,
            // The trap's own words, as wasmi says them (its Display prefixes "wasm trap: ").
            Some(trap) => Stop::Trap(trap.to_string().trim_start_matches("wasm trap: ").into()),
            None => Stop::Trap(one_line(&e)),
        })
    }
}
