//! `slowstart-udp ROLE OPTIONS`: one endpoint of one flow over UDP (slowstart_udp::cli).

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(slowstart_udp::cli::main(std::env::args().skip(1).collect()))
}
