//! `slowstart-emu CONFIG.json TUN_SENDER TUN_RECEIVER LOG.csv [PCAP_DIR]`
//!
//! Creates the two TUN devices (IFF_TUN | IFF_NO_PI, so no packet-info header and no
//! offloads: packets stay within the MTU), prints `ready` on stdout
//! (log times are CLOCK_MONOTONIC nanoseconds, so callers can align them with their own clock), then forwards packets
//! between them through the emulated link until SIGTERM or SIGINT. The devices are not
//! persistent: they vanish when this process exits, however it exits. The caller moves them
//! into its namespaces after `ready`; the descriptors stay valid across the move. On exit the
//! per-direction statistics are printed on stdout as one JSON line. The process gets SIGTERM
//! when its parent dies (PR_SET_PDEATHSIG), so a killed caller leaves no emulator behind.
//! With PCAP_DIR, every packet is also captured as the link takes it (its headers, time since
//! `ready`), the forward direction into `bottleneck.pcap` and the reverse into
//! `bottleneck_reverse.pcap`: the names and format of a simulated run's bottleneck captures.
//! The config's cross sources send from the run's time 0, which the caller writes on stdin as
//! a line `start T` (T: CLOCK_MONOTONIC ns); their packets are the emulator's own, in the log
//! and the statistics but in no capture and on no device.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use slowstart_emu::{capture_len, Dir, EmuConfig, Emulator, LogEvent};
use slowstart_link::pcap::PcapFile;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

fn open_tun(name: &str) -> std::io::Result<OwnedFd> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(std::io::Error::other("interface name too long"));
    }
    let fd = unsafe {
        libc::open(
            c"/dev/net/tun".as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = [0u8; 40];
    req[..name.len()].copy_from_slice(name.as_bytes());
    let flags = (libc::IFF_TUN | libc::IFF_NO_PI) as u16;
    req[16..18].copy_from_slice(&flags.to_ne_bytes());
    if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, req.as_mut_ptr()) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn main() {
    if let Err(e) = run() {
        eprintln!("slowstart-emu: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 && args.len() != 6 {
        return Err(
            "usage: slowstart-emu CONFIG.json TUN_SENDER TUN_RECEIVER LOG.csv [PCAP_DIR]".into(),
        );
    }
    // Die with the parent, even when it is SIGKILLed: the TUN devices go with this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
    // A parent killed before the signal was armed: the caller names itself in
    // $SLOWSTART_PARENT, and a different parent now means it is gone (prctl(2) notes this race).
    if let Ok(parent) = std::env::var("SLOWSTART_PARENT") {
        if parent.parse::<libc::pid_t>().ok() != Some(unsafe { libc::getppid() }) {
            return Err("parent gone".into());
        }
    }
    let cfg: EmuConfig = serde_json::from_str(&std::fs::read_to_string(&args[1])?)?;
    let tuns = [open_tun(&args[2])?, open_tun(&args[3])?];
    let mut log = BufWriter::new(File::create(&args[4])?);
    let mut captures = match args.get(5) {
        Some(dir) => {
            let dir = std::path::Path::new(dir);
            Some([
                PcapFile::create(&dir.join("bottleneck.pcap"))?,
                PcapFile::create(&dir.join("bottleneck_reverse.pcap"))?,
            ])
        }
        None => None,
    };
    writeln!(log, "{}", LogEvent::CSV_HEADER)?;
    unsafe {
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
    }
    let mut emu = Emulator::new(&cfg);
    println!("ready");
    std::io::stdout().flush()?;
    let ready = now_ns();
    // Times in the log are CLOCK_MONOTONIC, shared with every namespace on the machine.
    let t0 = 0;
    let mut buf = vec![0u8; 65536];
    // Side 0 (sender) feeds Forward and receives Reverse; side 1 the opposite.
    let dirs = [Dir::Forward, Dir::Reverse];
    // Stdin until it ends (then -1, which ppoll skips), and what it has sent of a line.
    let mut stdin_fd = libc::STDIN_FILENO;
    let mut line = Vec::new();
    while !STOP.load(Ordering::SeqCst) {
        let now = now_ns() - t0;
        let wait_ns = match emu.next_deadline() {
            Some(t) => t.saturating_sub(now).min(100_000_000),
            None => 100_000_000,
        };
        let timeout = libc::timespec {
            tv_sec: (wait_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (wait_ns % 1_000_000_000) as libc::c_long,
        };
        let mut fds = [
            libc::pollfd {
                fd: tuns[0].as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: tuns[1].as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: stdin_fd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let r = unsafe { libc::ppoll(fds.as_mut_ptr(), 3, &timeout, std::ptr::null()) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e.into());
        }
        if fds[2].revents != 0 {
            let n =
                unsafe { libc::read(stdin_fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
            if n <= 0 {
                stdin_fd = -1;
            } else {
                line.extend_from_slice(&buf[..n as usize]);
            }
            while let Some(end) = line.iter().position(|&b| b == b'\n') {
                let command: Vec<u8> = line.drain(..=end).collect();
                let command = String::from_utf8_lossy(&command);
                match command.trim().strip_prefix("start ").map(str::parse) {
                    Some(Ok(origin)) => emu.start_cross(origin),
                    _ => return Err(format!("stdin: expected `start T`, got {command:?}").into()),
                }
            }
        }
        emu.inject_cross(now_ns() - t0);
        for side in 0..2 {
            if fds[side].revents & libc::POLLIN == 0 {
                continue;
            }
            loop {
                let n = unsafe {
                    libc::read(
                        tuns[side].as_raw_fd(),
                        buf.as_mut_ptr() as *mut libc::c_void,
                        buf.len(),
                    )
                };
                if n <= 0 {
                    break;
                }
                let pkt = &buf[..n as usize];
                let t = now_ns();
                if let Some(c) = &mut captures {
                    c[side].write(t - ready, &pkt[..capture_len(pkt)], n as u32)?;
                }
                emu.ingress(dirs[side], t - t0, pkt.to_vec());
            }
        }
        let now = now_ns() - t0;
        for (side, d) in dirs.iter().enumerate() {
            for pkt in emu.due(*d, now) {
                let out = &tuns[1 - side];
                unsafe {
                    libc::write(
                        out.as_raw_fd(),
                        pkt.as_ptr() as *const libc::c_void,
                        pkt.len(),
                    )
                };
            }
        }
        for ev in emu.log.drain(..) {
            ev.write_csv(&mut log)?;
        }
    }
    // The statistics are as of `end`: what was due by then has been sent and has arrived
    // (the run is over, so arrivals are not written any more).
    let end = now_ns() - t0;
    emu.inject_cross(end);
    for d in dirs {
        emu.due(d, end);
    }
    for ev in emu.log.drain(..) {
        ev.write_csv(&mut log)?;
    }
    log.flush()?;
    for c in captures.into_iter().flatten() {
        c.finish()?;
    }
    println!("{}", emu.stats_json(end));
    Ok(())
}
