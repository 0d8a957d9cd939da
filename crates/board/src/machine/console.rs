//! The console: the UART's output, its last lines and whether the kernel
//! panicked.

use super::*;

/// The console: the UART's output passed on to a writer (stdout for
/// `rvnvmm boot`), remembering the last lines (for error reports) and
/// whether the kernel panicked. Clones share the record.
#[derive(Clone, Default)]
pub struct Console {
    tail: Arc<Mutex<VecDeque<u8>>>,
    panicked: Arc<AtomicBool>,
}

pub(super) const TAIL_BYTES: usize = 4096;

/// The UART's output stream: writes to `out` and records in `console`.
pub struct ConsoleOut {
    console: Console,
    out: Box<dyn Write + Send>,
}

impl ConsoleOut {
    /// Output to `out`, recorded in `console`.
    pub fn new(console: Console, out: Box<dyn Write + Send>) -> ConsoleOut {
        ConsoleOut { console, out }
    }
}

impl Write for ConsoleOut {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut tail = self.console.tail.lock().unwrap_or_else(|e| e.into_inner());
        tail.extend(buf);
        let excess = tail.len().saturating_sub(TAIL_BYTES);
        tail.drain(..excess);
        if !self.console.panicked.load(Ordering::Relaxed) {
            let (a, b) = tail.as_slices();
            let joined = [a, b].concat();
            let from = joined.len().saturating_sub(buf.len() + PANIC_MARK.len());
            if joined[from..]
                .windows(PANIC_MARK.len())
                .any(|w| w == PANIC_MARK)
            {
                self.console.panicked.store(true, Ordering::Relaxed);
            }
        }
        drop(tail);
        // A closed stdout must not stop the machine.
        let _ = self.out.write_all(buf);
        let _ = self.out.flush();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = self.out.flush();
        Ok(())
    }
}

impl Console {
    /// The last `n` non-empty console lines.
    pub fn last_lines(&self, n: usize) -> String {
        let tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        let text: Vec<u8> = tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&text);
        let lines: Vec<&str> = text
            .lines()
            .map(|l| l.trim_end_matches('\r'))
            .filter(|l| !l.trim().is_empty())
            .collect();
        lines[lines.len().saturating_sub(n)..].join("\n    ")
    }

    /// Whether the kernel printed "Kernel panic - not syncing".
    pub fn panicked(&self) -> bool {
        self.panicked.load(Ordering::Relaxed)
    }

    /// The output recorded (its last bytes) and whether the kernel
    /// panicked: a checkpoint keeps them for the messages of the run that
    /// restores it.
    pub(super) fn save(&self, w: &mut StateWriter) {
        let tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        w.bytes(&tail.iter().copied().collect::<Vec<_>>());
        w.bool(self.panicked());
    }

    /// Reads back what [`Console::save`] wrote.
    pub(super) fn restore(&self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        let bytes = r.bytes(TAIL_BYTES)?;
        let panicked = r.bool()?;
        let mut tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        *tail = bytes.iter().copied().collect();
        self.panicked.store(panicked, Ordering::Relaxed);
        Ok(())
    }

    pub(super) fn panic_line(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        let text: Vec<u8> = tail.iter().copied().collect();
        String::from_utf8_lossy(&text)
            .lines()
            .find(|l| l.contains("Kernel panic"))
            .map(|l| l.trim().to_string())
            .unwrap_or_default()
    }
}
