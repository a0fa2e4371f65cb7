//! [`Runtime::Interpreter`](crate::Runtime::Interpreter): wasmi, a register-based interpreter.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use slowstart_guest::abi::EventKind;
use wasmi::{
    Config, Engine, ExternType, Linker, Memory, StoreLimits, StoreLimitsBuilder, TypedFunc, ValType,
};

use crate::{Backend, Call, Export, Stop, Type, EVENTS_EXPORT, FUEL_PER_CALL, MEMORY_LIMIT};

type Store = wasmi::Store<StoreLimits>;

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut config = Config::default();
        config.consume_fuel(true);
        Engine::new(&config)
    })
}

pub struct Module(wasmi::Module);

fn value_type(t: &ValType) -> Type {
    match t {
        ValType::I32 => Type::I32,
        ValType::I64 => Type::I64,
        _ => Type::Other,
    }
}

impl Backend for Module {
    type Sandbox = Sandbox;

    fn compile(bytes: &[u8]) -> Result<Self, String> {
        wasmi::Module::new(engine(), bytes)
            .map(Module)
            .map_err(|e| format!("not a valid WebAssembly module: {e}"))
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
                        f.params().iter().map(value_type).collect(),
                        f.results().iter().map(value_type).collect(),
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
            .map_err(|e| format!("fuel: {e}"))?;
        let instance = Linker::new(engine())
            .instantiate_and_start(&mut store, &self.0)
            .map_err(|e| format!("cannot be instantiated: {e}"))?;
        let memory = instance
            .get_memory(&store, "memory")
            .ok_or("missing export 'memory'")?;
        let func = |name: &str| {
            instance
                .get_typed_func::<(), i32>(&store, name)
                .map_err(|e| format!("{name}: {e}"))
        };
        let version = func("slowstart_abi_version")?;
        let io = func("slowstart_io")?;
        // The optional exports (crate::check saw their types): absent or typed.
        let optional = |name: &str| func(name).ok();
        let wanted = optional(EVENTS_EXPORT);
        let events = EventKind::ALL.map(|k| optional(k.export()));
        let new = instance
            .get_typed_func(&store, "slowstart_new")
            .map_err(|e| format!("slowstart_new: {e}"))?;
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
            .map_err(|e| Stop::Trap(e.to_string()))?;
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
        .map_err(|e| match e.as_trap_code() {
            Some(wasmi::TrapCode::OutOfFuel) => Stop::OutOfFuel,
            _ => Stop::Trap(e.to_string()),
        })
    }
}
