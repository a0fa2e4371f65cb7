//! [`Runtime::Interpreter`](crate::Runtime::Interpreter): wasmi, a register-based interpreter.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use wasmi::{
    Config, Engine, ExternType, Linker, Memory, StoreLimits, StoreLimitsBuilder, TypedFunc, ValType,
};

use crate::{
    Backend, Call, Export, Exports, NewArgs, Stop, Target, Type, FUEL_PER_CALL, MEMORY_LIMIT,
};

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
        let new = instance
            .get_typed_func(&store, "slowstart_new")
            .map_err(|e| format!("slowstart_new: {e}"))?;
        let exports = Exports::lookup(new, |name| {
            instance
                .get_typed_func::<(), i32>(&store, name)
                .map_err(|e| format!("{name}: {e}"))
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
    const FIXED_MEMORY: bool = false;
    type Func = TypedFunc<(), i32>;
    type New = TypedFunc<NewArgs, i32>;

    fn exports(&self) -> &Exports<Self::Func, Self::New> {
        &self.exports
    }

    fn memory(&mut self) -> &mut [u8] {
        self.memory.data_mut(&mut self.store)
    }

    fn call(&mut self, call: Call) -> Result<i32, Stop> {
        self.store
            .set_fuel(FUEL_PER_CALL)
            .map_err(|e| Stop::Trap(e.to_string()))?;
        let store = &mut self.store;
        match self.exports.target(call)? {
            Target::Func(f) => f.call(store, ()),
            Target::New(f, args) => f.call(store, args),
            Target::Answer(a) => return Ok(a),
        }
        .map_err(|e| match e.as_trap_code() {
            Some(wasmi::TrapCode::OutOfFuel) => Stop::OutOfFuel,
            _ => Stop::Trap(e.to_string()),
        })
    }
}
