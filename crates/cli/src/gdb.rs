//! `--gdb PORT` of `rvnvmm run` and `rvnvmm boot`.

use rvnvmm_gdb::{GdbError, GdbStub};

/// Listens on 127.0.0.1:`port`, says so on stderr (with the port taken,
/// for port 0), and waits for gdb to connect.
pub(crate) fn wait_for_gdb(port: u16) -> Result<GdbStub, GdbError> {
    GdbStub::accept(port, |port| {
        eprintln!("rvnvmm: waiting for gdb on 127.0.0.1:{port} (target remote :{port})");
    })
}
