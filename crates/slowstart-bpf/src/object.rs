//! Loading an object: its `tcp_congestion_ops`, its programs as one instruction array with
//! every relocation done (global data, BPF-to-BPF calls, kernel functions, CO-RE field
//! accesses), and its globals. What libbpf does before the kernel's verifier sees an object
//! (tools/lib/bpf/libbpf.c `bpf_object__relocate`, relo_core.c), against the simulator's
//! structures ([`crate::layout`]) instead of the running kernel's BTF.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use object::read::elf::ElfFile64;
use object::{
    Object as _, ObjectSection, ObjectSymbol, RelocationTarget, SectionIndex, SectionKind,
    SymbolKind,
};

use crate::btf::{self, Btf, Type};
use crate::layout::{self, Ty};
use crate::vm::{self, Insn, CALL, LDDW, PSEUDO_CALL, PSEUDO_KFUNC_CALL};

/// `tcp_congestion_ops.flags`: the controller needs ECN (include/net/tcp.h).
pub const TCP_CONG_NEEDS_ECN: u32 = 0x2;

/// The hooks of `struct tcp_congestion_ops` (include/net/tcp.h) the simulator calls.
pub const HOOKS: &[&str] = &[
    "init",
    "release",
    "ssthresh",
    "cong_avoid",
    "set_state",
    "cwnd_event",
    "in_ack_event",
    "pkts_acked",
    "undo_cwnd",
    "cong_control",
];

/// Hooks an object may set that the simulator never calls (no TSO, no send buffer, no
/// `ss -i`): accepted, named in the docs.
pub const HOOKS_NOT_CALLED: &[&str] = &["min_tso_segs", "sndbuf_expand", "get_info"];

/// A hook a program implements: its entry in [`Object::insns`], and how many arguments its
/// prototype has (`cong_control` took 2 before Linux 6.10 and 4 since).
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub pc: usize,
    pub args: usize,
}

/// An object's data section: the bytes a run starts from, and whether programs may write it.
#[derive(Clone, Debug)]
pub struct DataSection {
    pub name: String,
    pub bytes: Vec<u8>,
    pub writable: bool,
}

/// A global a `key=value` may set: its section (index into [`Object::data`]), offset, size.
#[derive(Clone, Debug)]
pub struct Global {
    pub name: String,
    pub section: usize,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
    /// Where its bytes lie in the object file (none in `.bss`).
    pub file_offset: Option<usize>,
}

#[derive(Debug)]
pub struct Object {
    /// `tcp_congestion_ops.name`, as the kernel registers it.
    pub name: String,
    pub flags: u32,
    pub insns: Vec<Insn>,
    pub hooks: BTreeMap<&'static str, Entry>,
    /// The same, by place in [`HOOKS`], for the per-ACK calls.
    pub entries: [Option<Entry>; HOOKS.len()],
    pub data: Vec<DataSection>,
    pub globals: Vec<Global>,
    /// Kernel functions the programs call, by the id their call instructions carry.
    pub kfuncs: Vec<&'static str>,
    /// Instructions that read a field the simulator does not model, behind a
    /// `bpf_core_field_exists` test: what each would read, if it ran.
    pub poisoned: BTreeMap<usize, String>,
}

impl Object {
    /// The globals `key=value` may set: integers with bytes in the file (`.rodata`, `.data`).
    pub fn settable_globals(&self) -> Vec<&str> {
        self.globals
            .iter()
            .filter(|g| g.size <= 8 && self.data[g.section].name != ".bss")
            .map(|g| g.name.as_str())
            .collect()
    }
}

/// Helpers (by number, include/uapi/linux/bpf.h) the programs may call.
pub const HELPERS: &[(i64, &str)] = &[
    (4, "bpf_probe_read"),
    (5, "bpf_ktime_get_ns"),
    (6, "bpf_trace_printk"),
    (7, "bpf_get_prandom_u32"),
    (113, "bpf_probe_read_kernel"),
    (118, "bpf_jiffies64"),
];

/// The `imm` of a helper call that stands for a poisoned instruction, plus its index.
pub const POISON: i64 = 0x0bad_0000;

fn err(what: impl Into<String>) -> String {
    what.into()
}

/// Load `bytes`, its calls to kernel functions resolved by name in `kfuncs` (name, the id a
/// call then carries).
pub fn load(bytes: &[u8], kfuncs_offered: &[(&'static str, i64)]) -> Result<Object, String> {
    let elf = ElfFile64::<object::Endianness>::parse(bytes)
        .map_err(|e| err(format!("is not a BPF ELF object ({e})")))?;
    if elf.architecture() != object::Architecture::Bpf {
        return Err(err(format!(
            "is an object for {:?}, not BPF (build it with clang -target bpf)",
            elf.architecture()
        )));
    }
    let section_data = |name: &str| {
        elf.section_by_name(name)
            .and_then(|s| s.data().ok())
            .map(<[u8]>::to_vec)
    };
    let btf_bytes = section_data(".BTF")
        .ok_or("has no .BTF section (build it with clang -g, as libbpf needs too)")?;
    let btf = Btf::parse(&btf_bytes)?;
    let strings = btf::strings(&btf_bytes)?;
    let core = match section_data(".BTF.ext") {
        Some(ext) => btf::core_relos(&ext, strings)?,
        None => BTreeMap::new(),
    };

    // Programs: every executable section, laid end to end.
    let mut insns = Vec::new();
    let mut base: HashMap<SectionIndex, usize> = HashMap::new();
    let mut exec_names: BTreeMap<String, SectionIndex> = BTreeMap::new();
    for s in elf.sections() {
        if s.kind() == SectionKind::Text {
            let data = s.data().map_err(|e| err(format!("{e}")))?;
            base.insert(s.index(), insns.len());
            exec_names.insert(s.name().unwrap_or("").to_string(), s.index());
            insns.extend(vm::decode(data));
        }
    }

    // Data sections a program may point into.
    let mut data = Vec::new();
    let mut data_index: HashMap<SectionIndex, usize> = HashMap::new();
    for s in elf.sections() {
        let name = s.name().unwrap_or("");
        let is_data = [".bss", ".data", ".rodata"]
            .iter()
            .any(|p| name == *p || name.starts_with(&format!("{p}.")));
        if !is_data {
            continue;
        }
        let bytes = if s.kind() == SectionKind::UninitializedData {
            vec![0; s.size() as usize]
        } else {
            s.data().map_err(|e| err(format!("{e}")))?.to_vec()
        };
        data_index.insert(s.index(), data.len());
        data.push(DataSection {
            name: name.to_string(),
            bytes,
            writable: !name.starts_with(".rodata"),
        });
    }

    // Relocations in the programs.
    let mut kfuncs: Vec<&'static str> = Vec::new();
    let mut kfunc_ids: BTreeMap<String, i64> = BTreeMap::new();
    for s in elf.sections() {
        let Some(&start) = base.get(&s.index()) else {
            continue;
        };
        for (offset, rel) in s.relocations() {
            let pc = start + offset as usize / 8;
            let RelocationTarget::Symbol(sym_index) = rel.target() else {
                return Err(err(format!(
                    "has a relocation in {} it cannot read",
                    s.name().unwrap_or("?")
                )));
            };
            let sym = elf
                .symbol_by_index(sym_index)
                .map_err(|e| err(format!("{e}")))?;
            let sym_name = sym.name().unwrap_or("").to_string();
            let insn = insns[pc];
            if insn.code == LDDW {
                let target = sym.section_index();
                let region = target.and_then(|t| data_index.get(&t));
                let Some(&region) = region else {
                    let what = match target.and_then(|t| elf.section_by_index(t).ok()) {
                        Some(t) if t.name() == Ok(".maps") => {
                            format!("uses the map {sym_name:?}: maps are not supported, only global variables")
                        }
                        _ if sym.is_undefined() => format!(
                            "reads the kernel variable {sym_name:?}: the simulator has none"
                        ),
                        _ => format!(
                            "takes the address of {sym_name:?}, which is not a global variable"
                        ),
                    };
                    return Err(err(what));
                };
                let off = insn.imm + sym.address() as i64;
                insns[pc].imm = vm::pointer(vm::region::DATA + region as u32, off as u32) as i64;
                insns[pc].src = 0;
            } else if insn.code == CALL {
                if sym.is_undefined() {
                    let id = match kfunc_ids.get(&sym_name) {
                        Some(id) => *id,
                        None => {
                            let (name, id) = *kfuncs_offered
                                .iter()
                                .find(|k| k.0 == sym_name)
                                .ok_or_else(|| {
                                    err(format!(
                                        "calls the kernel function {sym_name}, which the \
                                         simulator does not provide (it provides: {})",
                                        kfuncs_offered
                                            .iter()
                                            .map(|k| k.0)
                                            .collect::<Vec<_>>()
                                            .join(", ")
                                    ))
                                })?;
                            kfunc_ids.insert(sym_name.clone(), id);
                            kfuncs.push(name);
                            id
                        }
                    };
                    insns[pc].src = PSEUDO_KFUNC_CALL;
                    insns[pc].imm = id;
                } else {
                    let Some(&callee_base) = sym.section_index().and_then(|t| base.get(&t)) else {
                        return Err(err(format!(
                            "calls {sym_name:?}, which is not a BPF function"
                        )));
                    };
                    let target = if sym.kind() == SymbolKind::Section {
                        callee_base as i64 + insn.imm + 1
                    } else {
                        (callee_base + sym.address() as usize / 8) as i64
                    };
                    insns[pc].src = PSEUDO_CALL;
                    insns[pc].imm = target - (pc as i64 + 1);
                }
            } else {
                return Err(err(format!(
                    "has a relocation against {sym_name:?} on an instruction that is not a load or a call (opcode {:#04x})",
                    insn.code
                )));
            }
        }
    }

    // CO-RE relocations.
    let mut poisoned = BTreeMap::new();
    let guarded: BTreeSet<String> = core
        .values()
        .flatten()
        .filter(|r| r.kind == 2)
        .filter_map(|r| field_path(&btf, r).ok())
        .collect();
    for (section, relos) in &core {
        let Some(&start) = exec_names.get(section).and_then(|i| base.get(i)) else {
            continue;
        };
        for r in relos {
            let pc = start + r.insn_off as usize / 8;
            match resolve(&btf, r)? {
                Resolved::Value(value, field) => patch(&mut insns, pc, value, field, r, &btf)?,
                Resolved::Missing(what) => {
                    let path = field_path(&btf, r).unwrap_or_default();
                    if !guarded.contains(&path) {
                        return Err(err(format!(
                            "{what} (docs: \"Controllers in BPF\", the fields the simulator models)"
                        )));
                    }
                    poisoned.insert(pc, what);
                }
            }
        }
    }
    for (i, (&pc, _)) in poisoned.iter().enumerate() {
        insns[pc] = Insn {
            code: CALL,
            dst: 0,
            src: 0,
            off: 0,
            imm: POISON + i as i64,
        };
    }

    let (name, flags, hooks) = struct_ops(&elf, &btf, &base)?;
    check_instructions(&insns, &poisoned)?;
    let globals = globals(&elf, &btf, &data_index, &data);
    let mut entries = [None; HOOKS.len()];
    for (i, hook) in HOOKS.iter().enumerate() {
        entries[i] = hooks.get(hook).copied();
    }
    Ok(Object {
        name,
        flags,
        insns,
        hooks,
        entries,
        data,
        globals,
        kfuncs,
        poisoned,
    })
}

/// The ops structure: its name, flags and the programs in its function pointers.
#[allow(clippy::type_complexity)]
fn struct_ops(
    elf: &ElfFile64<object::Endianness>,
    btf: &Btf,
    base: &HashMap<SectionIndex, usize>,
) -> Result<(String, u32, BTreeMap<&'static str, Entry>), String> {
    let sections: Vec<_> = elf
        .sections()
        .filter(|s| matches!(s.name(), Ok(".struct_ops") | Ok(".struct_ops.link")))
        .collect();
    let mut vars = Vec::new();
    for s in &sections {
        for sym in elf.symbols() {
            if sym.section_index() == Some(s.index()) && sym.kind() == SymbolKind::Data {
                vars.push((s, sym));
            }
        }
    }
    let names: Vec<String> = vars
        .iter()
        .map(|(_, v)| v.name().unwrap_or("?").to_string())
        .collect();
    let (section, var) = match vars.as_slice() {
        [] => {
            return Err(err(
                "has no tcp_congestion_ops (declare one: SEC(\".struct_ops\") struct tcp_congestion_ops x = {...})",
            ))
        }
        [one] => one,
        _ => {
            return Err(err(format!(
                "has {} struct_ops ({}): one tcp_congestion_ops per object",
                vars.len(),
                names.join(", ")
            )))
        }
    };
    let var_name = var.name().unwrap_or("?");
    let ty = btf
        .var(var_name)
        .ok_or_else(|| err(format!("has no BTF for its struct_ops {var_name:?}")))?;
    let (_, Some(Type::Struct { name, members, .. })) = btf.resolve(ty) else {
        return Err(err(format!(
            "its struct_ops {var_name:?} is not a structure"
        )));
    };
    if name != "tcp_congestion_ops" {
        return Err(err(format!(
            "its struct_ops {var_name:?} is a {name}, not a tcp_congestion_ops"
        )));
    }
    let bytes = section.data().map_err(|e| err(format!("{e}")))?;
    let start = var.address() as usize;
    let member_at = |byte: usize| members.iter().find(|m| m.bit_offset as usize == byte * 8);
    let field = |member: &str| members.iter().find(|m| m.name == member);
    let ops_name = field("name")
        .and_then(|m| bytes.get(start + m.bit_offset as usize / 8..))
        .map(|b| {
            let end = b
                .iter()
                .take(16)
                .position(|&c| c == 0)
                .unwrap_or(b.len().min(16));
            String::from_utf8_lossy(&b[..end]).into_owned()
        })
        .unwrap_or_default();
    if ops_name.is_empty() {
        return Err(err(format!(
            "its tcp_congestion_ops {var_name:?} has no .name"
        )));
    }
    let flags = field("flags")
        .and_then(|m| bytes.get(start + m.bit_offset as usize / 8..)?.get(..4))
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let mut hooks = BTreeMap::new();
    for (offset, rel) in section.relocations() {
        let RelocationTarget::Symbol(si) = rel.target() else {
            continue;
        };
        let sym = elf.symbol_by_index(si).map_err(|e| err(format!("{e}")))?;
        let at = (offset as usize).wrapping_sub(start);
        let Some(member) = member_at(at) else {
            continue;
        };
        let Some(&sec_base) = sym.section_index().and_then(|i| base.get(&i)) else {
            return Err(err(format!(".{} is not a BPF program", member.name)));
        };
        if HOOKS_NOT_CALLED.contains(&member.name.as_str()) {
            continue;
        }
        let Some(hook) = HOOKS.iter().find(|h| **h == member.name) else {
            return Err(err(format!(
                "sets the hook .{}, which the simulator does not call (it calls: {}; it accepts \
                 and ignores: {})",
                member.name,
                HOOKS.join(", "),
                HOOKS_NOT_CALLED.join(", ")
            )));
        };
        // `cong_control` took 2 arguments before Linux 6.10 and 4 since: its prototype says.
        let args = btf.pointee_args(member.ty).unwrap_or(1);
        hooks.insert(
            *hook,
            Entry {
                pc: sec_base + sym.address() as usize / 8,
                args,
            },
        );
    }
    // As the kernel's tcp_validate_congestion_control: ssthresh, undo_cwnd, and cong_avoid or
    // cong_control.
    for required in ["ssthresh", "undo_cwnd"] {
        if !hooks.contains_key(required) {
            return Err(err(format!(
                "its tcp_congestion_ops {ops_name:?} has no .{required} (Linux requires .ssthresh, \
                 .undo_cwnd and .cong_avoid or .cong_control)"
            )));
        }
    }
    if !hooks.contains_key("cong_avoid") && !hooks.contains_key("cong_control") {
        return Err(err(format!(
            "its tcp_congestion_ops {ops_name:?} has neither .cong_avoid nor .cong_control"
        )));
    }
    Ok((ops_name, flags, hooks))
}

/// The globals of `.rodata` and `.data` (and `.bss`, whose bytes are not in the file).
fn globals(
    elf: &ElfFile64<object::Endianness>,
    btf: &Btf,
    data_index: &HashMap<SectionIndex, usize>,
    data: &[DataSection],
) -> Vec<Global> {
    let mut out = Vec::new();
    for sym in elf.symbols() {
        let Some(section) = sym.section_index() else {
            continue;
        };
        let Some(&index) = data_index.get(&section) else {
            continue;
        };
        if sym.kind() != SymbolKind::Data || sym.size() == 0 {
            continue;
        }
        let name = sym.name().unwrap_or("").to_string();
        let signed = btf
            .var(&name)
            .map(|t| match btf.resolve(t).1 {
                Some(Type::Int { signed, .. }) => *signed,
                Some(Type::Enum { signed, .. }) => *signed,
                _ => false,
            })
            .unwrap_or(false);
        let file_offset = elf
            .section_by_index(section)
            .ok()
            .filter(|s| s.kind() != SectionKind::UninitializedData)
            .and_then(|s| s.file_range())
            .map(|(start, _)| (start + sym.address()) as usize);
        if sym.address() as usize + sym.size() as usize > data[index].bytes.len() {
            continue;
        }
        out.push(Global {
            name,
            section: index,
            offset: sym.address() as usize,
            size: sym.size() as usize,
            signed,
            file_offset,
        });
    }
    out
}

/// Every instruction is one the interpreter runs and every call reaches something.
fn check_instructions(insns: &[Insn], poisoned: &BTreeMap<usize, String>) -> Result<(), String> {
    let mut skip = false;
    for (pc, insn) in insns.iter().enumerate() {
        if std::mem::take(&mut skip) {
            continue;
        }
        if insn.code == LDDW {
            if insn.src != 0 {
                return Err(err(format!(
                    "has a 64-bit load of kind {} no relocation resolved (instruction {pc})",
                    insn.src
                )));
            }
            skip = true;
            continue;
        }
        if insn.dst > 10 || insn.src > 10 && insn.code != CALL {
            return Err(err(format!(
                "names register r{} (instruction {pc}): eBPF has r0 to r10",
                insn.dst.max(insn.src)
            )));
        }
        let class = insn.code & 7;
        let op = insn.code & 0xf0;
        if (class == 5 || class == 6) && !(class == 5 && (op == 0x80 || op == 0x90)) {
            let target = pc as i64 + 1 + insn.off as i64;
            if target < 0 || target as usize >= insns.len() {
                return Err(err(format!(
                    "jumps outside its programs (instruction {pc})"
                )));
            }
        }
        if insn.code == CALL {
            match insn.src {
                0 if insn.imm >= POISON && insn.imm < POISON + poisoned.len() as i64 => {}
                0 => {
                    if !HELPERS.iter().any(|(id, _)| *id == insn.imm) {
                        return Err(err(format!(
                            "calls BPF helper {} (instruction {pc}), which the simulator does not \
                             provide (it provides: {})",
                            insn.imm,
                            HELPERS.iter().map(|h| h.1).collect::<Vec<_>>().join(", ")
                        )));
                    }
                }
                PSEUDO_CALL => {
                    let target = pc as i64 + 1 + insn.imm;
                    if target < 0 || target as usize >= insns.len() {
                        return Err(err(format!(
                            "calls outside its programs (instruction {pc})"
                        )));
                    }
                }
                PSEUDO_KFUNC_CALL => {}
                _ => {
                    return Err(err(format!(
                        "has a call of kind {} (instruction {pc})",
                        insn.src
                    )))
                }
            }
        }
    }
    Ok(())
}

/// What a CO-RE relocation resolves to.
enum Resolved {
    /// The value, and for a field's offset the field as the simulator has it.
    Value(u64, Option<Access>),
    /// The field or type is not in the simulator's structures: what the program wanted.
    Missing(String),
}

/// A field an instruction loads or stores, as the simulator lays it out.
#[derive(Clone, Copy)]
struct Access {
    size: u32,
    unsigned: bool,
    /// The object reads a bitfield with the compiler's own shifts.
    direct_bitfield: bool,
}

/// The access path of a field relocation as names (`tcp_sock.inet_conn.icsk_ca_priv`), for
/// matching an access with its `bpf_core_field_exists` guard.
fn field_path(btf: &Btf, r: &btf::CoreRelo) -> Result<String, String> {
    let steps = access(r)?;
    let (mut id, _) = btf.resolve(r.type_id);
    let mut path = btf.name(id).to_string();
    for &i in steps.iter().skip(1) {
        match btf.resolve(id).1 {
            Some(Type::Struct { members, .. }) => {
                let m = members.get(i as usize).ok_or("bad access")?;
                if !m.name.is_empty() {
                    path.push('.');
                    path.push_str(&m.name);
                }
                id = m.ty;
            }
            Some(Type::Array { elem, .. }) => {
                path.push_str(&format!("[{i}]"));
                id = *elem;
            }
            _ => return Err("bad access".into()),
        }
    }
    Ok(path)
}

fn access(r: &btf::CoreRelo) -> Result<Vec<u32>, String> {
    r.access
        .split(':')
        .map(|s| {
            s.parse::<u32>()
                .map_err(|_| format!("has a CO-RE access string it cannot read: {:?}", r.access))
        })
        .collect()
}

/// Resolve one CO-RE relocation against the simulator's structures, by field name
/// (relo_core.c `bpf_core_calc_relo`).
fn resolve(btf: &Btf, r: &btf::CoreRelo) -> Result<Resolved, String> {
    let steps = access(r)?;
    let (root, _) = btf.resolve(r.type_id);
    let root_name = btf.name(root).to_string();
    match r.kind {
        // Type-based: local id, target id, exists, size, matches.
        6 => return Ok(Resolved::Value(root as u64, None)),
        7..=9 | 12 => {
            let ours = layout::def(&root_name);
            let value = match (r.kind, ours) {
                (7, Some(_)) => root as u64,
                (9, Some(d)) => d.size as u64,
                (8 | 12, found) => found.is_some() as u64,
                (_, None) if r.kind != 7 => 0,
                _ => {
                    return Ok(Resolved::Missing(format!(
                        "uses the type {root_name}, which the simulator does not have"
                    )))
                }
            };
            return Ok(Resolved::Value(value, None));
        }
        // Enum values: the kernel's enums (tcp_ca_state, tcp_ca_event) as the object has them.
        10 | 11 => {
            let Some(Type::Enum { values, .. }) = btf.get(root) else {
                return Err(format!(
                    "has an enum relocation on {root_name}, not an enum"
                ));
            };
            let v = values.get(steps[0] as usize).map(|v| v.1);
            let value = match r.kind {
                10 => v.is_some() as u64,
                _ => v.ok_or("bad enum relocation")? as u64,
            };
            return Ok(Resolved::Value(value, None));
        }
        0..=5 => {}
        k => {
            return Err(format!(
                "has a CO-RE relocation of kind {k}, which is not supported"
            ))
        }
    }
    let missing = |what: String| Ok(Resolved::Missing(what));
    let Some(def) = layout::def(&root_name) else {
        if r.kind == 2 {
            return Ok(Resolved::Value(0, None));
        }
        return missing(format!(
            "reads struct {root_name}, which the simulator does not have"
        ));
    };
    let mut ours = Ty::Struct(def.name);
    let mut offset = steps[0] * def.size;
    let mut local = root;
    let mut path = root_name.clone();
    let mut bitfield = false;
    for &i in steps.iter().skip(1) {
        match btf.resolve(local).1 {
            Some(Type::Struct { members, .. }) => {
                let m = members
                    .get(i as usize)
                    .ok_or_else(|| format!("has a CO-RE access past {path}'s members"))?;
                local = m.ty;
                if m.name.is_empty() {
                    continue; // an anonymous struct or union: its members are the parent's
                }
                path.push('.');
                path.push_str(&m.name);
                let Ty::Struct(current) = ours else {
                    return missing(format!("reads {path}, which the simulator does not model"));
                };
                let found =
                    layout::def(current).and_then(|d| d.fields.iter().find(|f| f.name == m.name));
                let Some(field) = found else {
                    if r.kind == 2 {
                        return Ok(Resolved::Value(0, None));
                    }
                    return missing(format!("reads {path}, which the simulator does not model"));
                };
                offset += field.offset;
                ours = field.ty;
                bitfield = m.bit_size > 0;
            }
            Some(Type::Array { elem, .. }) => {
                path.push_str(&format!("[{i}]"));
                let Ty::Array(elem_ty, len) = ours else {
                    return missing(format!("indexes {path}, which is not an array here"));
                };
                if i >= len {
                    return missing(format!("indexes {path}, past its {len} elements here"));
                }
                offset += i * elem_ty.size();
                ours = *elem_ty;
                local = *elem;
            }
            _ => {
                return Err(format!(
                    "has a CO-RE access into {path}, which is not a structure"
                ))
            }
        }
    }
    let size = ours.size() as u64;
    let bits = match ours {
        Ty::Bits(n) => n as u64,
        _ => size * 8,
    };
    let value = match r.kind {
        0 => {
            if bitfield && !matches!(ours, Ty::Bits(_)) {
                return Err(format!("reads {path} as a bitfield; here it is not one"));
            }
            offset as u64
        }
        1 => size,
        2 => 1,
        3 => ours.signed() as u64,
        // A field alone at bit 0 of its bytes, loaded as BYTE_SIZE: shift it to the top, then
        // down (relo_core.c, BPF_CORE_FIELD_LSHIFT_U64 / RSHIFT_U64, little-endian).
        4 => 64 - bits,
        _ => 64 - bits,
    };
    // Only a scalar's size is checked: an access into an array or structure at its offset
    // (icsk_ca_priv as the controller's own struct) has its own size.
    let scalar = !matches!(ours, Ty::Struct(_) | Ty::Array(..));
    let field = (r.kind == 0 && scalar).then_some(Access {
        size: size as u32,
        unsigned: matches!(ours, Ty::U8 | Ty::U16 | Ty::U32 | Ty::U64),
        direct_bitfield: bitfield,
    });
    Ok(Resolved::Value(value, field))
}

/// Write a relocated value into the instruction, as relo_core.c `bpf_core_patch_insn`.
fn patch(
    insns: &mut [Insn],
    pc: usize,
    value: u64,
    field: Option<Access>,
    r: &btf::CoreRelo,
    btf: &Btf,
) -> Result<(), String> {
    let insn = insns
        .get_mut(pc)
        .ok_or("has a CO-RE relocation outside its program")?;
    let class = insn.code & 7;
    match class {
        // ALU/ALU64 with an immediate, or a move of one.
        4 | 7 if insn.code & 0x08 == 0 => insn.imm = value as i32 as i64,
        // Loads and stores: the offset.
        1..=3 => {
            let path = || field_path(btf, r).unwrap_or_default();
            if let Some(field) = field {
                if field.direct_bitfield {
                    return Err(format!(
                        "reads the bitfield {} directly: read it with BPF_CORE_READ_BITFIELD \
                         (bpf_core_read.h), which relocates its shifts",
                        path()
                    ));
                }
                let size = match insn.code & 0x18 {
                    0x00 => 4,
                    0x08 => 2,
                    0x10 => 1,
                    _ => 8,
                };
                if size != field.size {
                    // A load of an unsigned field of another size takes the field's size, as
                    // libbpf adjusts it; a store or a signed load cannot be.
                    if class != 1 || !field.unsigned {
                        return Err(format!(
                            "accesses {} as {size} bytes; the simulator's field has {}",
                            path(),
                            field.size
                        ));
                    }
                    let bits = match field.size {
                        4 => 0x00,
                        2 => 0x08,
                        1 => 0x10,
                        _ => 0x18,
                    };
                    insn.code = insn.code & !0x18 | bits;
                }
            }
            insn.off =
                i16::try_from(value).map_err(|_| "has a field offset past 32 KiB".to_string())?;
        }
        0 if insn.code == LDDW => insn.imm = value as i64,
        _ => {
            return Err(format!(
                "has a CO-RE relocation on an instruction it cannot patch (opcode {:#04x})",
                insn.code
            ))
        }
    }
    Ok(())
}
