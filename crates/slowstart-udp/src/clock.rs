//! The host's monotonic clock in nanoseconds, and waiting on a socket with a nanosecond
//! deadline (a paced 1500-byte packet at 50 Mbps leaves every 240 µs; poll(2)'s milliseconds
//! are too coarse).

use std::os::fd::RawFd;

/// CLOCK_MONOTONIC, ns: shared by every process on the host (and its network namespaces), so
/// a receiver's one-way delay from the sender's timestamp is meaningful.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Below this, waiting for a deadline spins instead of sleeping (a sleep overshoots by tens of
/// microseconds).
pub const SPIN_NS: u64 = 60_000;

/// Wait until `fd` is readable or the clock reaches `deadline` (ns), whichever comes first;
/// true if readable. The last `SPIN_NS` before the deadline are spent spinning.
pub fn wait_readable(fd: RawFd, deadline: u64) -> bool {
    loop {
        let now = now_ns();
        if now >= deadline {
            return readable(fd, 0);
        }
        let left = deadline - now;
        if left <= SPIN_NS {
            while now_ns() < deadline {
                if readable(fd, 0) {
                    return true;
                }
                std::hint::spin_loop();
            }
            return readable(fd, 0);
        }
        if readable(fd, left - SPIN_NS) {
            return true;
        }
    }
}

/// ppoll for readability with a timeout of `ns`.
fn readable(fd: RawFd, ns: u64) -> bool {
    let mut fds = [libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }];
    let timeout = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), 1, &timeout, std::ptr::null()) };
    r > 0 && fds[0].revents & libc::POLLIN != 0
}
