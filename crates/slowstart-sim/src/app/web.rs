//! HTTP/1.1-like exchanges (initcwnd seed): the client at `dst` sends a request of
//! `request_bytes`, the server at `src` answers with the object, and the client asks for the
//! next object once the last byte of the previous one arrived (no pipelining): on the same
//! connection with keep-alive, else on a new connection (new handshake, fresh windows), as
//! HTTP/1.0 does. The server has no think time.
//!
//! The connection opens as the transport's handshake does (one RTT); the client sends its first
//! request the moment the handshake completes, so the first byte arrives two round trips after
//! the flow starts at best, the seed's "two round trips".
//!
//! Per object: `ttfb_s` from when the object was wanted (the flow start for the first, so the
//! handshake counts; the request for later ones) to its first byte at the client;
//! `first_to_last_s`; `total_s` from the same origin to the last byte; `stalls`, the round trips
//! that ended while the server waited on cwnd or the client's window with response bytes unsent
//! and less than a path BDP in flight (see `Sender::set_stall_threshold`).

use serde::Serialize;
use slowstart_transport::request::RequestSender;

use crate::app::{seconds, Ctx};
use crate::config::WebConfig;

#[derive(Clone, Copy, Debug, Default)]
struct ObjectResult {
    bytes: u64,
    wanted_ns: u64,
    first_ns: u64,
    last_ns: u64,
    stalls: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ObjectSummary {
    pub bytes: u64,
    pub ttfb_s: f64,
    pub first_to_last_s: f64,
    pub total_s: f64,
    pub stalls: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct WebSummary {
    pub request_bytes: u64,
    pub objects_requested: u64,
    pub objects_completed: u64,
    pub request_packets: u64,
    pub request_timeouts: u64,
    pub objects: Vec<ObjectSummary>,
}

pub struct WebApp {
    request_bytes: u64,
    sizes: Vec<u64>,
    objects: u64,
    keep_alive: bool,
    start_ns: u64,
    // Server (`src`).
    answered: u64,
    /// Objects answered on earlier connections.
    answered_before: u64,
    stalls_at_answer: u64,
    // Client (`dst`).
    requested: u64,
    /// Data stream offsets of the object in progress.
    object_start: u64,
    object_end: u64,
    wanted_ns: u64,
    first_ns: Option<u64>,
    results: Vec<ObjectResult>,
}

impl WebApp {
    pub fn new(cfg: &WebConfig, start_ns: u64) -> Self {
        let objects = cfg.object_count();
        WebApp {
            request_bytes: cfg.request_bytes,
            sizes: cfg.response_bytes.clone(),
            objects,
            keep_alive: cfg.keep_alive,
            start_ns,
            answered: 0,
            answered_before: 0,
            stalls_at_answer: 0,
            requested: 0,
            object_start: 0,
            object_end: 0,
            wanted_ns: start_ns,
            first_ns: None,
            results: Vec::with_capacity(objects.min(1 << 16) as usize),
        }
    }

    fn size(&self, k: u64) -> u64 {
        self.sizes[(k % self.sizes.len() as u64) as usize]
    }

    fn request_next(&mut self, ctx: &mut Ctx) {
        let k = self.requested;
        self.object_start = self.object_end;
        self.object_end += self.size(k);
        self.first_ns = None;
        self.requested += 1;
        ctx.request(self.request_bytes);
    }

    pub fn on_established(&mut self, ctx: &mut Ctx) {
        if self.requested == 0 {
            // The first object is wanted from the flow start: its times include the handshake.
            self.wanted_ns = self.start_ns;
        }
        self.request_next(ctx);
    }

    /// Server: every complete request is answered with its object at once.
    pub fn on_requests(&mut self, upto: u64, ctx: &mut Ctx) {
        while (self.answered - self.answered_before + 1) * self.request_bytes <= upto
            && self.answered < self.objects
        {
            let size = self.size(self.answered);
            ctx.sender.write(size);
            self.stalls_at_answer = ctx.sender.stats().stalls;
            self.answered += 1;
        }
    }

    /// Client: record the object's first and last byte; ask for the next one.
    pub fn on_delivered(&mut self, upto: u64, ctx: &mut Ctx) {
        if self.results.len() as u64 == self.requested {
            return;
        }
        if self.first_ns.is_none() && upto > self.object_start {
            self.first_ns = Some(ctx.now);
        }
        if upto < self.object_end {
            return;
        }
        self.results.push(ObjectResult {
            bytes: self.object_end - self.object_start,
            wanted_ns: self.wanted_ns,
            first_ns: self.first_ns.unwrap_or(ctx.now),
            last_ns: ctx.now,
            stalls: ctx.sender.stats().stalls - self.stalls_at_answer,
        });
        if self.requested < self.objects {
            self.wanted_ns = ctx.now;
            if self.keep_alive {
                self.request_next(ctx);
            } else {
                // The server closes; the next object's request waits for a new connection,
                // whose streams start again from byte 0.
                self.answered_before = self.answered;
                self.object_end = 0;
                ctx.reconnect = true;
            }
        }
    }

    pub fn finished(&self) -> bool {
        self.results.len() as u64 == self.objects
    }

    pub fn summary(&self, requests: &RequestSender) -> WebSummary {
        WebSummary {
            request_bytes: self.request_bytes,
            objects_requested: self.requested,
            objects_completed: self.results.len() as u64,
            request_packets: requests.packets_sent(),
            request_timeouts: requests.timeouts(),
            objects: self
                .results
                .iter()
                .map(|r| ObjectSummary {
                    bytes: r.bytes,
                    ttfb_s: seconds(r.first_ns - r.wanted_ns),
                    first_to_last_s: seconds(r.last_ns - r.first_ns),
                    total_s: seconds(r.last_ns - r.wanted_ns),
                    stalls: r.stalls,
                })
                .collect(),
        }
    }
}
