//! The raw terminal of a boot: stdin, if a terminal, without line editing
//! or echo while the guest runs, restored on drop or a fatal signal.

/// The terminal attributes to restore, for the signal handler.
static SAVED_TERMIOS: std::sync::OnceLock<libc::termios> = std::sync::OnceLock::new();

/// SIGINT/SIGTERM/SIGHUP while the terminal is raw: restore it, then die
/// of the signal as usual.
extern "C" fn restore_terminal_and_die(sig: libc::c_int) {
    // SAFETY: tcsetattr, signal and raise are async-signal-safe; the
    // OnceLock was set before the handler was installed.
    unsafe {
        if let Some(t) = SAVED_TERMIOS.get() {
            libc::tcsetattr(0, libc::TCSANOW, t);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Puts a terminal on stdin into non-canonical, no-echo mode (the guest
/// echoes) until dropped or a signal ends the emulator. Ctrl-C still
/// stops the emulator.
pub(super) struct RawTerminal(Option<libc::termios>);

impl RawTerminal {
    pub(super) fn new() -> RawTerminal {
        // SAFETY: plain termios calls on fd 0 with a valid struct, and
        // installing a handler that only makes async-signal-safe calls.
        unsafe {
            if libc::isatty(0) != 1 {
                return RawTerminal(None);
            }
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return RawTerminal(None);
            }
            let saved = t;
            if SAVED_TERMIOS.set(saved).is_ok() {
                let handler = restore_terminal_and_die as extern "C" fn(libc::c_int);
                for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                    libc::signal(sig, handler as libc::sighandler_t);
                }
            }
            t.c_lflag &= !(libc::ICANON | libc::ECHO);
            t.c_cc[libc::VMIN] = 1;
            t.c_cc[libc::VTIME] = 0;
            libc::tcsetattr(0, libc::TCSANOW, &t);
            RawTerminal(Some(saved))
        }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        if let Some(t) = self.0 {
            // SAFETY: restores the attributes read in `new`.
            unsafe {
                libc::tcsetattr(0, libc::TCSANOW, &t);
            }
        }
    }
}
