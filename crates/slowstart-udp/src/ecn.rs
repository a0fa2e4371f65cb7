//! ECN over the socket: the IP header's ECN field (RFC 3168 §5) of every datagram, written on
//! send and read on receipt, so that a router's CE mark reaches the receiving transport as it
//! does in the simulation (`Packet::ip_ecn`, `Packet::set_ip_ecn`). The TCP header's half (ECE,
//! CWR, AE) rides in the transport's own header (`slowstart_transport::wire`).
//!
//! Linux's way, as quinn-udp uses it (quinn-udp/src/unix.rs): each `sendmsg` carries an
//! `IP_TOS` control message (`IPV6_TCLASS` over IPv6), an `int`, which sets the TOS byte of
//! that datagram alone; with the socket option `IP_RECVTOS` (`IPV6_RECVTCLASS`) each `recvmsg`
//! returns the received TOS byte as an `IP_TOS` control message (one byte; IPv6's traffic
//! class as an `int`). Only the two ECN bits are written; DSCP stays 0.

use std::io;
use std::mem;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::AsRawFd;
use std::ptr;

/// Room for control messages, aligned as `cmsghdr` is: one of an `int` takes 24 bytes on
/// 64-bit Linux, the received TOS byte as much.
#[repr(C, align(8))]
struct Control([u8; 64]);

/// Ask the kernel for each received datagram's TOS byte (traffic class over IPv6).
pub fn receive_ecn(sock: &UdpSocket) -> io::Result<()> {
    let (level, option) = match sock.local_addr()? {
        SocketAddr::V4(_) => (libc::IPPROTO_IP, libc::IP_RECVTOS),
        SocketAddr::V6(_) => (libc::IPPROTO_IPV6, libc::IPV6_RECVTCLASS),
    };
    let on: libc::c_int = 1;
    // SAFETY: a valid descriptor and an `int` option of its size.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            option,
            &on as *const libc::c_int as *const libc::c_void,
            mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `sock.send_to(buf, peer)` with the IP header's ECN field set to `ecn` (its two low bits).
pub fn send_to(sock: &UdpSocket, buf: &[u8], peer: SocketAddr, ecn: u8) -> io::Result<usize> {
    let (name, name_len) = sockaddr_of(peer);
    let mut iov = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let mut control = Control([0; 64]);
    // SAFETY: msghdr is plain data; every pointer set below outlives the call, and the control
    // buffer is aligned and holds CMSG_SPACE(sizeof(int)) bytes.
    let n = unsafe {
        let mut msg: libc::msghdr = mem::zeroed();
        msg.msg_name = &name as *const libc::sockaddr_storage as *mut libc::c_void;
        msg.msg_namelen = name_len;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr() as *mut libc::c_void;
        let size = mem::size_of::<libc::c_int>() as libc::c_uint;
        msg.msg_controllen = libc::CMSG_SPACE(size) as _;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::IPPROTO_IP;
        (*c).cmsg_type = libc::IP_TOS;
        if peer.is_ipv6() {
            (*c).cmsg_level = libc::IPPROTO_IPV6;
            (*c).cmsg_type = libc::IPV6_TCLASS;
        }
        (*c).cmsg_len = libc::CMSG_LEN(size) as _;
        ptr::write_unaligned(
            libc::CMSG_DATA(c) as *mut libc::c_int,
            (ecn & 0b11) as libc::c_int,
        );
        libc::sendmsg(sock.as_raw_fd(), &msg, 0)
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// `sock.recv_from(buf)` with the received IP header's ECN field (0 if the kernel gave no TOS
/// byte: [`receive_ecn`] was not called).
pub fn recv_from(sock: &UdpSocket, buf: &mut [u8]) -> io::Result<(usize, SocketAddr, u8)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let mut control = Control([0; 64]);
    // SAFETY: as in `send_to`; the kernel writes at most `msg_namelen` and `msg_controllen`
    // bytes, and the control messages are walked with the kernel's own macros.
    unsafe {
        let mut name: libc::sockaddr_storage = mem::zeroed();
        let mut msg: libc::msghdr = mem::zeroed();
        msg.msg_name = &mut name as *mut libc::sockaddr_storage as *mut libc::c_void;
        msg.msg_namelen = mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = control.0.len() as _;
        let n = libc::recvmsg(sock.as_raw_fd(), &mut msg, 0);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut tos = 0u8;
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            let data = libc::CMSG_DATA(c);
            match ((*c).cmsg_level, (*c).cmsg_type) {
                (libc::IPPROTO_IP, libc::IP_TOS) => tos = *data,
                (libc::IPPROTO_IPV6, libc::IPV6_TCLASS) => {
                    tos = ptr::read_unaligned(data as *const libc::c_int) as u8
                }
                _ => {}
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        let from = socket_addr_of(&name)?;
        Ok((n as usize, from, tos & 0b11))
    }
}

fn sockaddr_of(a: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data, large and aligned enough for either family.
    let mut s: libc::sockaddr_storage = unsafe { mem::zeroed() };
    let len = match a {
        SocketAddr::V4(v4) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: v4.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(v4.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            unsafe { ptr::write(&mut s as *mut _ as *mut libc::sockaddr_in, sin) };
            mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(v6) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: v6.port().to_be(),
                sin6_flowinfo: v6.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: v6.ip().octets(),
                },
                sin6_scope_id: v6.scope_id(),
            };
            unsafe { ptr::write(&mut s as *mut _ as *mut libc::sockaddr_in6, sin6) };
            mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (s, len as libc::socklen_t)
}

fn socket_addr_of(s: &libc::sockaddr_storage) -> io::Result<SocketAddr> {
    // SAFETY: the family says which structure the kernel wrote.
    match s.ss_family as libc::c_int {
        libc::AF_INET => {
            let sin = unsafe { &*(s as *const _ as *const libc::sockaddr_in) };
            let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
            Ok(SocketAddrV4::new(ip, u16::from_be(sin.sin_port)).into())
        }
        libc::AF_INET6 => {
            let sin6 = unsafe { &*(s as *const _ as *const libc::sockaddr_in6) };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            let port = u16::from_be(sin6.sin6_port);
            Ok(SocketAddrV6::new(ip, port, sin6.sin6_flowinfo, sin6.sin6_scope_id).into())
        }
        f => Err(io::Error::other(format!("address family {f}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slowstart_transport::packet::{IP_CE, IP_ECT0, IP_ECT1};

    /// Over loopback each codepoint arrives as sent, datagram by datagram, on IPv4 and IPv6.
    #[test]
    fn each_datagram_arrives_with_the_ecn_field_it_was_sent_with() {
        for local in ["127.0.0.1:0", "[::1]:0"] {
            let (Ok(a), Ok(b)) = (UdpSocket::bind(local), UdpSocket::bind(local)) else {
                assert!(local.starts_with('['), "IPv4 loopback is always there");
                continue; // no IPv6 on this host
            };
            receive_ecn(&b).unwrap();
            let to = b.local_addr().unwrap();
            let sent = [IP_ECT0, 0, IP_CE, IP_ECT1, IP_CE, IP_ECT0];
            for (i, &ecn) in sent.iter().enumerate() {
                assert_eq!(send_to(&a, &[i as u8; 100], to, ecn).unwrap(), 100);
            }
            let mut buf = [0u8; 200];
            for (i, &ecn) in sent.iter().enumerate() {
                let (n, from, got) = recv_from(&b, &mut buf).unwrap();
                assert_eq!((n, buf[0], from), (100, i as u8, a.local_addr().unwrap()));
                assert_eq!(got, ecn, "{local}: datagram {i}");
            }
        }
    }

    /// Without `receive_ecn` the kernel gives no TOS byte, and the field reads Not-ECT.
    #[test]
    fn a_socket_that_did_not_ask_reads_not_ect() {
        let (a, b) = (
            UdpSocket::bind("127.0.0.1:0").unwrap(),
            UdpSocket::bind("127.0.0.1:0").unwrap(),
        );
        send_to(&a, b"x", b.local_addr().unwrap(), IP_CE).unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(recv_from(&b, &mut buf).unwrap().2, 0);
    }
}
