//! The object's own BTF (`.BTF`) and its CO-RE relocation records (`.BTF.ext`), read as the
//! kernel documents them (Documentation/bpf/btf.rst, "BTF Type and String Encoding" and
//! ".BTF.ext section"). Only what loading a controller needs: types by id, names, members,
//! and the relocation records by section.

use std::collections::BTreeMap;

const MAGIC: u16 = 0xeb9f;

/// One BTF type, as far as relocation and globals need it.
#[derive(Clone, Debug)]
pub enum Type {
    Void,
    Int {
        name: String,
        size: u32,
        signed: bool,
    },
    Ptr(u32),
    /// A function prototype: its parameter count.
    FuncProto(usize),
    Array {
        elem: u32,
        len: u32,
    },
    Struct {
        name: String,
        size: u32,
        members: Vec<Member>,
        union: bool,
    },
    Enum {
        name: String,
        size: u32,
        values: Vec<(String, i64)>,
        signed: bool,
    },
    /// Typedef, volatile, const, restrict, type tag: the type they refer to.
    Alias(u32),
    Var {
        name: String,
        ty: u32,
    },
    /// Anything else (functions, prototypes, sections, floats, forward declarations).
    Other {
        name: String,
        size: u32,
    },
}

#[derive(Clone, Debug)]
pub struct Member {
    pub name: String,
    pub ty: u32,
    pub bit_offset: u32,
    /// Non-zero for a bitfield.
    pub bit_size: u32,
}

/// A CO-RE relocation (`struct bpf_core_relo`).
#[derive(Clone, Debug)]
pub struct CoreRelo {
    /// Byte offset of the instruction in its section.
    pub insn_off: u32,
    pub type_id: u32,
    pub access: String,
    pub kind: u32,
}

pub struct Btf {
    types: Vec<Type>,
}

fn u16_at(b: &[u8], at: usize) -> Result<u16, String> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| "BTF is truncated".to_string())
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, String> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| "BTF is truncated".to_string())
}

fn string(strings: &[u8], off: u32) -> Result<String, String> {
    let s = strings
        .get(off as usize..)
        .ok_or("a BTF name is outside the string table")?;
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    Ok(String::from_utf8_lossy(&s[..end]).into_owned())
}

/// The header both sections start with: magic, version, flags, header length.
fn header(b: &[u8], what: &str) -> Result<usize, String> {
    if u16_at(b, 0)? != MAGIC {
        return Err(format!("{what} has no BTF magic"));
    }
    Ok(u32_at(b, 4)? as usize)
}

/// `.BTF`'s string table, for `.BTF.ext`'s names.
pub fn strings(b: &[u8]) -> Result<&[u8], String> {
    let hdr = header(b, ".BTF")?;
    let (off, len) = (u32_at(b, 16)? as usize, u32_at(b, 20)? as usize);
    b.get(hdr + off..hdr + off + len)
        .ok_or_else(|| ".BTF's string table is truncated".into())
}

impl Btf {
    pub fn parse(b: &[u8]) -> Result<Btf, String> {
        let hdr = header(b, ".BTF")?;
        let (type_off, type_len) = (u32_at(b, 8)? as usize, u32_at(b, 12)? as usize);
        let strs = strings(b)?;
        let data = b
            .get(hdr + type_off..hdr + type_off + type_len)
            .ok_or(".BTF's type section is truncated")?;
        let mut types = vec![Type::Void];
        let mut at = 0;
        while at < data.len() {
            let name = string(strs, u32_at(data, at)?)?;
            let info = u32_at(data, at + 4)?;
            let size_or_type = u32_at(data, at + 8)?;
            let vlen = (info & 0xffff) as usize;
            let kind = (info >> 24) & 0x1f;
            let kind_flag = info >> 31 == 1;
            at += 12;
            let ty = match kind {
                1 => {
                    let enc = u32_at(data, at)?;
                    at += 4;
                    Type::Int {
                        name,
                        size: size_or_type,
                        signed: (enc >> 24) & 1 == 1,
                    }
                }
                2 => Type::Ptr(size_or_type),
                3 => {
                    let t = Type::Array {
                        elem: u32_at(data, at)?,
                        len: u32_at(data, at + 8)?,
                    };
                    at += 12;
                    t
                }
                4 | 5 => {
                    let mut members = Vec::with_capacity(vlen);
                    for _ in 0..vlen {
                        let offset = u32_at(data, at + 8)?;
                        let (bit_offset, bit_size) = if kind_flag {
                            (offset & 0xff_ffff, offset >> 24)
                        } else {
                            (offset, 0)
                        };
                        members.push(Member {
                            name: string(strs, u32_at(data, at)?)?,
                            ty: u32_at(data, at + 4)?,
                            bit_offset,
                            bit_size,
                        });
                        at += 12;
                    }
                    Type::Struct {
                        name,
                        size: size_or_type,
                        members,
                        union: kind == 5,
                    }
                }
                6 | 19 => {
                    let mut values = Vec::with_capacity(vlen);
                    for _ in 0..vlen {
                        let n = string(strs, u32_at(data, at)?)?;
                        let lo = u32_at(data, at + 4)?;
                        let v = if kind == 6 {
                            at += 8;
                            if kind_flag {
                                lo as i32 as i64
                            } else {
                                lo as i64
                            }
                        } else {
                            let hi = u32_at(data, at + 8)?;
                            at += 12;
                            ((hi as u64) << 32 | lo as u64) as i64
                        };
                        values.push((n, v));
                    }
                    Type::Enum {
                        name,
                        size: size_or_type,
                        values,
                        signed: kind_flag,
                    }
                }
                7 | 12 | 16 | 18 => Type::Other {
                    name,
                    size: size_or_type,
                },
                8..=11 => Type::Alias(size_or_type),
                13 => {
                    at += 8 * vlen;
                    Type::FuncProto(vlen)
                }
                14 => {
                    at += 4;
                    Type::Var {
                        name,
                        ty: size_or_type,
                    }
                }
                15 => {
                    at += 12 * vlen;
                    Type::Other {
                        name,
                        size: size_or_type,
                    }
                }
                17 => {
                    at += 4;
                    Type::Other { name, size: 0 }
                }
                k => return Err(format!("BTF type kind {k} is not known")),
            };
            types.push(ty);
        }
        Ok(Btf { types })
    }

    pub fn get(&self, id: u32) -> Option<&Type> {
        self.types.get(id as usize)
    }

    /// `id` with typedefs and qualifiers taken off.
    pub fn resolve(&self, mut id: u32) -> (u32, Option<&Type>) {
        for _ in 0..32 {
            match self.get(id) {
                Some(Type::Alias(next)) => id = *next,
                t => return (id, t),
            }
        }
        (id, None)
    }

    /// The byte size of a type, where it has one.
    pub fn size(&self, id: u32) -> Option<u32> {
        match self.resolve(id).1? {
            Type::Int { size, .. }
            | Type::Struct { size, .. }
            | Type::Enum { size, .. }
            | Type::Other { size, .. } => Some(*size),
            Type::Ptr(_) => Some(8),
            Type::Array { elem, len } => Some(self.size(*elem)? * len),
            _ => None,
        }
    }

    /// The name of a struct, union, enum or int type.
    pub fn name(&self, id: u32) -> &str {
        match self.resolve(id).1 {
            Some(
                Type::Struct { name, .. }
                | Type::Int { name, .. }
                | Type::Enum { name, .. }
                | Type::Other { name, .. },
            ) => name,
            _ => "",
        }
    }

    /// The parameter count of the function a pointer type points to.
    pub fn pointee_args(&self, ptr: u32) -> Option<usize> {
        let Some(Type::Ptr(to)) = self.resolve(ptr).1 else {
            return None;
        };
        match self.resolve(*to).1 {
            Some(Type::FuncProto(n)) => Some(*n),
            _ => None,
        }
    }

    /// The variable named `name` (a global's `VAR`), its type id.
    pub fn var(&self, name: &str) -> Option<u32> {
        self.types.iter().find_map(|t| match t {
            Type::Var { name: n, ty } if n == name => Some(*ty),
            _ => None,
        })
    }
}

/// `.BTF.ext`'s CO-RE relocation records by section name.
pub fn core_relos(ext: &[u8], strs: &[u8]) -> Result<BTreeMap<String, Vec<CoreRelo>>, String> {
    let hdr = header(ext, ".BTF.ext")?;
    let mut out: BTreeMap<String, Vec<CoreRelo>> = BTreeMap::new();
    if hdr < 32 {
        return Ok(out);
    }
    let (off, len) = (u32_at(ext, 24)? as usize, u32_at(ext, 28)? as usize);
    let data = ext
        .get(hdr + off..hdr + off + len)
        .ok_or(".BTF.ext's CO-RE records are truncated")?;
    if data.is_empty() {
        return Ok(out);
    }
    let rec_size = u32_at(data, 0)? as usize;
    if rec_size < 16 {
        return Err(format!(
            ".BTF.ext: CO-RE record size {rec_size} is too small"
        ));
    }
    let mut at = 4;
    while at < data.len() {
        let section = string(strs, u32_at(data, at)?)?;
        let n = u32_at(data, at + 4)? as usize;
        at += 8;
        let list = out.entry(section).or_default();
        for _ in 0..n {
            list.push(CoreRelo {
                insn_off: u32_at(data, at)?,
                type_id: u32_at(data, at + 4)?,
                access: string(strs, u32_at(data, at + 8)?)?,
                kind: u32_at(data, at + 12)?,
            });
            at += rec_size;
        }
    }
    Ok(out)
}
