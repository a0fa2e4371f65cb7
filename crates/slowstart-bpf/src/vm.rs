//! An eBPF interpreter (Documentation/bpf/standardization/instruction-set.rst): the base
//! instruction set, 32-bit jumps and atomics, BPF-to-BPF calls, with every memory access checked
//! against the regions a controller may touch and every call counted against a budget.
//!
//! A pointer is a region's number in its upper 32 bits and an offset in the lower: the same on
//! every host, so a controller that keeps or compares pointers stays deterministic, and an
//! access outside a region (a null pointer is region 0) is a fault, not a host crash.

use std::fmt;

/// Instructions one hook call may execute before it is stopped as a runaway. The kernel's
/// verifier bounds a program at one million *analysed* instructions (BPF_COMPLEXITY_LIMIT_INSNS);
/// a congestion controller's hook runs tens to hundreds.
pub const INSN_BUDGET: u64 = 1_000_000;

/// Bytes of stack each call frame has (MAX_BPF_STACK).
pub const FRAME_STACK: u32 = 512;

/// Nested BPF-to-BPF calls (MAX_CALL_FRAMES).
pub const MAX_FRAMES: usize = 8;

/// Memory region numbers: a pointer's upper 32 bits.
pub mod region {
    pub const STACK: u32 = 1;
    /// The hook's arguments, `u64 ctx[]` (struct_ops programs read them as BPF_PROG does).
    pub const CTX: u32 = 2;
    pub const SOCK: u32 = 3;
    /// `struct ack_sample` or `struct rate_sample`, for the hook that takes one.
    pub const SAMPLE: u32 = 4;
    /// The object's data sections (`.bss`, `.data`, `.rodata`, ...) from here on.
    pub const DATA: u32 = 5;
}

pub fn pointer(region: u32, offset: u32) -> u64 {
    (region as u64) << 32 | offset as u64
}

/// One decoded instruction; `imm` holds a `lddw`'s whole 64-bit value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    pub dst: u8,
    pub src: u8,
    pub off: i16,
    pub imm: i64,
}

pub const LDDW: u8 = 0x18;
pub const CALL: u8 = 0x85;
pub const EXIT: u8 = 0x95;
/// `src` of a call to a BPF function (relative `imm`) and to a kernel function (our id).
pub const PSEUDO_CALL: u8 = 1;
pub const PSEUDO_KFUNC_CALL: u8 = 2;

/// Decode raw instructions; a `lddw`'s second half stays in place (as a no-op), so jump
/// offsets keep their meaning.
pub fn decode(bytes: &[u8]) -> Vec<Insn> {
    let raw: Vec<Insn> = bytes
        .chunks_exact(8)
        .map(|c| Insn {
            code: c[0],
            dst: c[1] & 0xf,
            src: c[1] >> 4,
            off: i16::from_le_bytes([c[2], c[3]]),
            imm: i32::from_le_bytes([c[4], c[5], c[6], c[7]]) as i64,
        })
        .collect();
    let mut out = raw.clone();
    for i in 0..raw.len() {
        if raw[i].code == LDDW && i + 1 < raw.len() {
            out[i].imm = (raw[i].imm as u32 as u64 | (raw[i + 1].imm as u32 as u64) << 32) as i64;
        }
    }
    out
}

/// Why a call stopped: one line for the run's fault message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault(pub String);

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A memory region: its bytes and whether the program may write them, or which bytes
/// (`check`, for the socket).
pub struct Region {
    pub bytes: Vec<u8>,
    pub name: &'static str,
    pub access: Access,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadOnly,
    ReadWrite,
    /// Writable where [`crate::layout::writable`] says.
    Socket,
}

/// Every region a program's pointers can reach, by number (index 0: none).
pub struct Memory {
    pub regions: Vec<Region>,
}

impl Memory {
    fn at(&self, addr: u64, len: u32, pc: usize) -> Result<(usize, usize), Fault> {
        let r = (addr >> 32) as usize;
        let off = addr as u32;
        match self.regions.get(r) {
            Some(region) if r != 0 && (off as u64 + len as u64) <= region.bytes.len() as u64 => {
                Ok((r, off as usize))
            }
            Some(region) if r != 0 => Err(Fault(format!(
                "reads or writes {len} bytes at offset {off} of {}, which has {} (instruction {pc})",
                region.name,
                region.bytes.len()
            ))),
            _ if addr < 4096 => Err(Fault(format!(
                "dereferences a null pointer ({addr:#x}, instruction {pc})"
            ))),
            _ => Err(Fault(format!(
                "dereferences {addr:#x}, which points nowhere (instruction {pc})"
            ))),
        }
    }

    pub fn load(&self, addr: u64, len: u32, pc: usize) -> Result<u64, Fault> {
        let (r, off) = self.at(addr, len, pc)?;
        let b = &self.regions[r].bytes[off..off + len as usize];
        let mut v = [0u8; 8];
        v[..b.len()].copy_from_slice(b);
        Ok(u64::from_le_bytes(v))
    }

    pub fn store(&mut self, addr: u64, len: u32, value: u64, pc: usize) -> Result<(), Fault> {
        let (r, off) = self.at(addr, len, pc)?;
        let region = &mut self.regions[r];
        let allowed = match region.access {
            Access::ReadWrite => true,
            Access::ReadOnly => false,
            Access::Socket => crate::layout::writable(off as u32, len),
        };
        if !allowed {
            let what = if region.access == Access::Socket {
                format!(
                    "the socket at offset {off}, which the kernel's verifier refuses (writable: {})",
                    crate::layout::writable_names().join(", ")
                )
            } else {
                format!("{}, which is read-only", region.name)
            };
            return Err(Fault(format!(
                "writes {len} bytes to {what} (instruction {pc})"
            )));
        }
        region.bytes[off..off + len as usize].copy_from_slice(&value.to_le_bytes()[..len as usize]);
        Ok(())
    }
}

/// What a program's calls reach outside it: helpers (by number) and kernel functions (by the
/// id loading gave them).
pub trait Host {
    fn helper(&mut self, id: i64, args: [u64; 5], mem: &mut Memory) -> Result<u64, Fault>;
    fn kfunc(&mut self, id: i64, args: [u64; 5], mem: &mut Memory) -> Result<u64, Fault>;
}

fn size_of(code: u8) -> u32 {
    match code & 0x18 {
        0x00 => 4,
        0x08 => 2,
        0x10 => 1,
        _ => 8,
    }
}

/// Run `prog` from instruction `entry` with `r1 = ctx` until its `exit`; `r0`.
pub fn run(
    prog: &[Insn],
    entry: usize,
    ctx: u64,
    mem: &mut Memory,
    host: &mut dyn Host,
) -> Result<u64, Fault> {
    let stack_top = FRAME_STACK * MAX_FRAMES as u32;
    let mut reg = [0u64; 11];
    reg[1] = ctx;
    reg[10] = pointer(region::STACK, stack_top);
    // Return address, callee-saved r6-r9 and r10 of each caller.
    let mut frames: Vec<(usize, [u64; 5])> = Vec::new();
    let mut pc = entry;
    let mut budget = INSN_BUDGET;
    loop {
        let Some(&insn) = prog.get(pc) else {
            return Err(Fault(format!("runs past its last instruction ({pc})")));
        };
        if budget == 0 {
            return Err(Fault(format!(
                "ran {INSN_BUDGET} instructions without returning (the budget per call; \
                 instruction {pc})"
            )));
        }
        budget -= 1;
        let at = pc;
        pc += 1;
        let d = insn.dst as usize;
        let s = insn.src as usize;
        if d > 10 || s > 10 {
            return Err(Fault(format!(
                "names register r{} (instruction {at})",
                d.max(s)
            )));
        }
        let class = insn.code & 7;
        match class {
            // ALU (32-bit) and ALU64.
            4 | 7 => {
                let wide = class == 7;
                let op = insn.code & 0xf0;
                let x = if insn.code & 0x08 != 0 {
                    reg[s]
                } else {
                    insn.imm as u64
                };
                let a = reg[d];
                let v = if wide {
                    match op {
                        0x00 => a.wrapping_add(x),
                        0x10 => a.wrapping_sub(x),
                        0x20 => a.wrapping_mul(x),
                        0x30 => a.checked_div(x).unwrap_or(0),
                        0x40 => a | x,
                        0x50 => a & x,
                        0x60 => a.wrapping_shl(x as u32 & 63),
                        0x70 => a.wrapping_shr(x as u32 & 63),
                        0x80 => (a as i64).wrapping_neg() as u64,
                        0x90 => a.checked_rem(x).unwrap_or(a),
                        0xa0 => a ^ x,
                        0xb0 => x,
                        0xc0 => ((a as i64) >> (x as u32 & 63)) as u64,
                        _ => return Err(bad(insn, at)),
                    }
                } else {
                    let (a, x) = (a as u32, x as u32);
                    let v = match op {
                        0x00 => a.wrapping_add(x),
                        0x10 => a.wrapping_sub(x),
                        0x20 => a.wrapping_mul(x),
                        0x30 => a.checked_div(x).unwrap_or(0),
                        0x40 => a | x,
                        0x50 => a & x,
                        0x60 => a.wrapping_shl(x & 31),
                        0x70 => a.wrapping_shr(x & 31),
                        0x80 => (a as i32).wrapping_neg() as u32,
                        0x90 => a.checked_rem(x).unwrap_or(a),
                        0xa0 => a ^ x,
                        0xb0 => x,
                        0xc0 => ((a as i32) >> (x & 31)) as u32,
                        0xd0 => {
                            // Byte swaps: to little-endian truncates, to big-endian swaps.
                            let full = reg[d];
                            let v = match (insn.code & 0x08 != 0, insn.imm) {
                                (false, 16) => full as u16 as u64,
                                (false, 32) => full as u32 as u64,
                                (false, 64) => full,
                                (true, 16) => (full as u16).swap_bytes() as u64,
                                (true, 32) => (full as u32).swap_bytes() as u64,
                                (true, 64) => full.swap_bytes(),
                                _ => return Err(bad(insn, at)),
                            };
                            reg[d] = v;
                            continue;
                        }
                        _ => return Err(bad(insn, at)),
                    };
                    v as u64
                };
                reg[d] = v;
            }
            // JMP and JMP32.
            5 | 6 => {
                let op = insn.code & 0xf0;
                if class == 5 && op == 0x80 {
                    let args = [reg[1], reg[2], reg[3], reg[4], reg[5]];
                    match insn.src {
                        PSEUDO_CALL => {
                            if frames.len() + 1 >= MAX_FRAMES {
                                return Err(Fault(format!(
                                    "nests calls deeper than {MAX_FRAMES} frames (instruction {at})"
                                )));
                            }
                            frames.push((pc, [reg[6], reg[7], reg[8], reg[9], reg[10]]));
                            reg[10] = reg[10].wrapping_sub(FRAME_STACK as u64);
                            pc = (pc as i64 + insn.imm) as usize;
                            continue;
                        }
                        PSEUDO_KFUNC_CALL => reg[0] = host.kfunc(insn.imm, args, mem)?,
                        0 => reg[0] = host.helper(insn.imm, args, mem)?,
                        _ => return Err(bad(insn, at)),
                    }
                    // r1-r5 are scratch after a call.
                    reg[1..6].fill(0);
                    continue;
                }
                if class == 5 && op == 0x90 {
                    match frames.pop() {
                        None => return Ok(reg[0]),
                        Some((ret, saved)) => {
                            pc = ret;
                            reg[6..11].copy_from_slice(&saved);
                            continue;
                        }
                    }
                }
                let x = if insn.code & 0x08 != 0 {
                    reg[s]
                } else {
                    insn.imm as u64
                };
                let (a, x) = if class == 6 {
                    (reg[d] as u32 as u64, x as u32 as u64)
                } else {
                    (reg[d], x)
                };
                let (sa, sx) = if class == 6 {
                    (a as u32 as i32 as i64, x as u32 as i32 as i64)
                } else {
                    (a as i64, x as i64)
                };
                let taken = match op {
                    0x00 => true,
                    0x10 => a == x,
                    0x20 => a > x,
                    0x30 => a >= x,
                    0x40 => a & x != 0,
                    0x50 => a != x,
                    0x60 => sa > sx,
                    0x70 => sa >= sx,
                    0xa0 => a < x,
                    0xb0 => a <= x,
                    0xc0 => sa < sx,
                    0xd0 => sa <= sx,
                    _ => return Err(bad(insn, at)),
                };
                if taken {
                    let target = pc as i64 + insn.off as i64;
                    if target < 0 || target as usize >= prog.len() {
                        return Err(Fault(format!(
                            "jumps outside the program (instruction {at})"
                        )));
                    }
                    pc = target as usize;
                }
            }
            // LDX: memory loads.
            1 => {
                if insn.code & 0xe0 != 0x60 {
                    return Err(bad(insn, at));
                }
                let addr = reg[s].wrapping_add(insn.off as i64 as u64);
                reg[d] = mem.load(addr, size_of(insn.code), at)?;
            }
            // ST (immediate) and STX (register, and atomics).
            2 | 3 => {
                let len = size_of(insn.code);
                let addr = reg[d].wrapping_add(insn.off as i64 as u64);
                match insn.code & 0xe0 {
                    0x60 => {
                        let v = if class == 3 { reg[s] } else { insn.imm as u64 };
                        mem.store(addr, len, v, at)?;
                    }
                    0xc0 if class == 3 && (len == 4 || len == 8) => {
                        atomic(insn, addr, len, &mut reg, mem, at)?;
                    }
                    _ => return Err(bad(insn, at)),
                }
            }
            // LD: only the 64-bit immediate.
            0 => {
                if insn.code != LDDW {
                    return Err(bad(insn, at));
                }
                reg[d] = insn.imm as u64;
                pc += 1;
            }
            _ => return Err(bad(insn, at)),
        }
    }
}

/// The atomic operations (BPF_ATOMIC): add, or, and, xor with and without fetch, xchg, cmpxchg.
fn atomic(
    insn: Insn,
    addr: u64,
    len: u32,
    reg: &mut [u64; 11],
    mem: &mut Memory,
    at: usize,
) -> Result<(), Fault> {
    let mask = if len == 4 { u32::MAX as u64 } else { u64::MAX };
    let old = mem.load(addr, len, at)?;
    let x = reg[insn.src as usize] & mask;
    let op = insn.imm as u32;
    let new = match op & !1 {
        0x00 => old.wrapping_add(x),
        0x40 => old | x,
        0x50 => old & x,
        0xa0 => old ^ x,
        0xe0 => x,
        0xf0 => {
            if old == reg[0] & mask {
                mem.store(addr, len, x, at)?;
            }
            reg[0] = old;
            return Ok(());
        }
        _ => return Err(bad(insn, at)),
    };
    mem.store(addr, len, new & mask, at)?;
    if op & 1 != 0 || op == 0xe1 {
        reg[insn.src as usize] = old;
    }
    Ok(())
}

fn bad(insn: Insn, at: usize) -> Fault {
    Fault(format!(
        "has an instruction this interpreter does not run (opcode {:#04x}, instruction {at})",
        insn.code
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoHost;
    impl Host for NoHost {
        fn helper(&mut self, id: i64, _: [u64; 5], _: &mut Memory) -> Result<u64, Fault> {
            Ok(id as u64 * 10)
        }
        fn kfunc(&mut self, _: i64, _: [u64; 5], _: &mut Memory) -> Result<u64, Fault> {
            Err(Fault("no kfunc".into()))
        }
    }

    fn asm(words: &[(u8, u8, u8, i16, i32)]) -> Vec<Insn> {
        let mut bytes = Vec::new();
        for &(code, dst, src, off, imm) in words {
            bytes.push(code);
            bytes.push(dst | src << 4);
            bytes.extend_from_slice(&off.to_le_bytes());
            bytes.extend_from_slice(&imm.to_le_bytes());
        }
        decode(&bytes)
    }

    fn memory() -> Memory {
        let mut regions = vec![Region {
            bytes: vec![],
            name: "nothing",
            access: Access::ReadOnly,
        }];
        regions.push(Region {
            bytes: vec![0; (FRAME_STACK * MAX_FRAMES as u32) as usize],
            name: "the stack",
            access: Access::ReadWrite,
        });
        regions.push(Region {
            bytes: vec![7, 0, 0, 0, 0, 0, 0, 0],
            name: "the arguments",
            access: Access::ReadOnly,
        });
        Memory { regions }
    }

    /// sum = 0; for i in 0..10 { sum += i }: 45, in 10 rounds of a 3-instruction loop.
    #[test]
    fn a_counted_loop_sums() {
        let prog = asm(&[
            (0xb7, 0, 0, 0, 0),   // r0 = 0
            (0xb7, 1, 0, 0, 0),   // r1 = 0
            (0x0f, 0, 1, 0, 0),   // r0 += r1
            (0x07, 1, 0, 0, 1),   // r1 += 1
            (0xa5, 1, 0, -3, 10), // if r1 < 10 goto -3
            (EXIT, 0, 0, 0, 0),
        ]);
        let got = run(&prog, 0, 0, &mut memory(), &mut NoHost);
        assert_eq!(got, Ok(45));
    }

    /// 32-bit operations wrap and zero-extend; division by zero gives 0, remainder keeps dst.
    #[test]
    fn alu32_wraps_and_division_by_zero_is_defined() {
        let prog = asm(&[
            (0xb4, 0, 0, 0, -1), // w0 = 0xffffffff
            (0x04, 0, 0, 0, 2),  // w0 += 2 -> 1
            (0xb7, 2, 0, 0, 9),  // r2 = 9
            (0x37, 2, 0, 0, 0),  // r2 /= 0 -> 0
            (0x0f, 0, 2, 0, 0),  // r0 += r2
            (0xb7, 3, 0, 0, 5),  // r3 = 5
            (0x97, 3, 0, 0, 0),  // r3 %= 0 -> 5
            (0x0f, 0, 3, 0, 0),  // r0 += r3 -> 6
            (EXIT, 0, 0, 0, 0),
        ]);
        assert_eq!(run(&prog, 0, 0, &mut memory(), &mut NoHost), Ok(6));
    }

    /// Stack store and load, a helper's answer, and a read of the context.
    #[test]
    fn stack_context_and_helpers() {
        let prog = asm(&[
            (0x79, 6, 1, 0, 0),   // r6 = *(u64 *)(r1 + 0) = 7
            (0x7b, 10, 6, -8, 0), // *(u64 *)(r10 - 8) = r6
            (CALL, 0, 0, 0, 5),   // r0 = helper 5 -> 50
            (0x79, 2, 10, -8, 0), // r2 = *(u64 *)(r10 - 8)
            (0x0f, 0, 2, 0, 0),   // r0 += r2 -> 57
            (EXIT, 0, 0, 0, 0),
        ]);
        let ctx = pointer(region::CTX, 0);
        assert_eq!(run(&prog, 0, ctx, &mut memory(), &mut NoHost), Ok(57));
    }

    #[test]
    fn faults_name_what_went_wrong() {
        let oob = asm(&[(0x79, 0, 1, 8, 0), (EXIT, 0, 0, 0, 0)]);
        let e = run(&oob, 0, pointer(region::CTX, 0), &mut memory(), &mut NoHost).unwrap_err();
        assert!(e.0.contains("8 bytes at offset 8 of the arguments"), "{e}");
        let null = asm(&[(0x79, 0, 1, 0, 0), (EXIT, 0, 0, 0, 0)]);
        let e = run(&null, 0, 0, &mut memory(), &mut NoHost).unwrap_err();
        assert!(e.0.contains("null pointer"), "{e}");
        let ro = asm(&[(0x7a, 1, 0, 0, 1), (EXIT, 0, 0, 0, 0)]);
        let e = run(&ro, 0, pointer(region::CTX, 0), &mut memory(), &mut NoHost).unwrap_err();
        assert!(e.0.contains("read-only"), "{e}");
        let forever = asm(&[(0x05, 0, 0, -1, 0), (EXIT, 0, 0, 0, 0)]);
        let e = run(&forever, 0, 0, &mut memory(), &mut NoHost).unwrap_err();
        assert!(e.0.contains("without returning"), "{e}");
    }

    /// A BPF-to-BPF call keeps the caller's r6 and gets a frame of its own.
    #[test]
    fn bpf_to_bpf_calls_keep_callee_saved_registers() {
        let prog = asm(&[
            (0xb7, 6, 0, 0, 40),          // r6 = 40
            (0xb7, 1, 0, 0, 2),           // r1 = 2
            (CALL, 0, PSEUDO_CALL, 0, 2), // call +2
            (0x0f, 0, 6, 0, 0),           // r0 += r6
            (EXIT, 0, 0, 0, 0),
            (0xb7, 6, 0, 0, 1000), // callee: r6 = 1000 (restored on return)
            (0xbf, 0, 1, 0, 0),    // r0 = r1
            (EXIT, 0, 0, 0, 0),
        ]);
        assert_eq!(run(&prog, 0, 0, &mut memory(), &mut NoHost), Ok(42));
    }

    #[test]
    fn atomics_add_and_fetch() {
        let prog = asm(&[
            (0x7a, 10, 0, -8, 5),    // *(u64 *)(r10 - 8) = 5
            (0xb7, 1, 0, 0, 3),      // r1 = 3
            (0xdb, 10, 1, -8, 0x01), // r1 = atomic_fetch_add((u64 *)(r10 - 8), r1) -> 5
            (0x79, 0, 10, -8, 0),    // r0 = 8
            (0x0f, 0, 1, 0, 0),      // r0 += r1 -> 13
            (EXIT, 0, 0, 0, 0),
        ]);
        assert_eq!(run(&prog, 0, 0, &mut memory(), &mut NoHost), Ok(13));
    }
}
