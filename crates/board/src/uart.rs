//! An NS16550A UART (byte registers, `reg-shift` 0, as QEMU `virt`).
//!
//! | offset | read | write |
//! |---|---|---|
//! | 0 | RBR (DLL if LCR.DLAB) | THR (DLL if LCR.DLAB) |
//! | 1 | IER (DLM if LCR.DLAB) | IER (DLM if LCR.DLAB) |
//! | 2 | IIR | FCR |
//! | 3 | LCR | LCR |
//! | 4 | MCR | MCR |
//! | 5 | LSR | - |
//! | 6 | MSR | - |
//! | 7 | SCR | SCR |
//!
//! Transmission is instantaneous: a byte written to THR goes to the output
//! sink at once, so THR and the transmitter are always empty (LSR.THRE and
//! LSR.TEMT always set) and the THRE interrupt re-arms after every write.
//! Received bytes come from an [`InputQueue`]; the receive FIFO (16 bytes,
//! or 1 with FIFOs off) is refilled from it whenever the guest reads RBR or
//! the board polls, so input is never overrun: it waits in the queue. The
//! divisor latch and line settings are kept but do not change the timing.
//! With data below the FIFO trigger level IIR reports a character timeout
//! at once rather than after four character times.

use crate::device::{Device, FdtNode, Wires};
use crate::guest_mem::GuestMemory;
use crate::input::InputQueue;
use rvnvmm_checkpoint::{CheckpointError, Checkpointable, StateReader, StateWriter};
use std::collections::VecDeque;
use std::io::Write;
use vm_fdt::{FdtWriter, FdtWriterResult};

/// Bytes of the UART's register window.
pub const UART_SIZE: u64 = 0x100;
/// The input clock the device tree announces (QEMU's 3.6864 MHz).
pub const UART_CLOCK_HZ: u32 = 3_686_400;

const IER_RDI: u8 = 0x01;
const IER_THRI: u8 = 0x02;
const IER_MSI: u8 = 0x08;
const IIR_NONE: u8 = 0x01;
const IIR_MSI: u8 = 0x00;
const IIR_THRI: u8 = 0x02;
const IIR_RDI: u8 = 0x04;
const IIR_TIMEOUT: u8 = 0x0c;
const IIR_FIFO: u8 = 0xc0;
const FCR_ENABLE: u8 = 0x01;
const FCR_CLEAR_RX: u8 = 0x02;
const LCR_DLAB: u8 = 0x80;
const MCR_LOOP: u8 = 0x10;
const LSR_DR: u8 = 0x01;
const LSR_THRE: u8 = 0x20;
const LSR_TEMT: u8 = 0x40;
/// CTS, DSR and DCD asserted, RI not: a terminal is connected.
const MSR_CONNECTED: u8 = 0xb0;
const FIFO_BYTES: usize = 16;
/// Output is passed on at a newline, or once this much is held.
const OUT_CHUNK: usize = 1024;

/// The UART's state.
pub struct Uart {
    input: InputQueue,
    out: Box<dyn Write + Send>,
    out_buf: Vec<u8>,
    rx: VecDeque<u8>,
    ier: u8,
    /// The guest has enabled the receive interrupt once: from then on the
    /// FIFO is refilled only while it is enabled (see `poll_input`).
    rx_gated: bool,
    fcr: u8,
    lcr: u8,
    mcr: u8,
    scr: u8,
    dll: u8,
    dlm: u8,
    thr_ipending: bool,
    msr_delta: u8,
}

impl std::fmt::Debug for Uart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Uart")
            .field("rx", &self.rx)
            .field("ier", &self.ier)
            .field("lcr", &self.lcr)
            .finish_non_exhaustive()
    }
}

impl Uart {
    /// A UART writing to `out` and reading from `input`, in its reset state.
    pub fn new(out: Box<dyn Write + Send>, input: InputQueue) -> Uart {
        Uart {
            input,
            out,
            out_buf: Vec::new(),
            rx: VecDeque::new(),
            ier: 0,
            rx_gated: false,
            fcr: 0,
            lcr: 0,
            mcr: 0,
            scr: 0,
            dll: 0,
            dlm: 0,
            thr_ipending: false,
            msr_delta: 0,
        }
    }

    /// Back to the reset state; queued input and the sinks are kept.
    pub fn reset(&mut self) {
        self.flush();
        let input = self.input.clone();
        let out = std::mem::replace(&mut self.out, Box::new(std::io::sink()));
        *self = Uart::new(out, input);
    }

    /// Whether the driver enabled the received-data interrupt (IER.RDI):
    /// Linux does once the console is opened, after the FIFO resets of its
    /// probe and start-up, which drop what the FIFO held. A host that must
    /// not lose input typed (or piped) early holds it back until then.
    pub fn rx_interrupt_enabled(&self) -> bool {
        self.ier & IER_RDI != 0
    }

    fn fifo_enabled(&self) -> bool {
        self.fcr & FCR_ENABLE != 0
    }

    fn loopback(&self) -> bool {
        self.mcr & MCR_LOOP != 0
    }

    fn rx_capacity(&self) -> usize {
        if self.fifo_enabled() {
            FIFO_BYTES
        } else {
            1
        }
    }

    fn rx_trigger(&self) -> usize {
        if !self.fifo_enabled() {
            return 1;
        }
        [1, 4, 8, 14][usize::from(self.fcr >> 6)]
    }

    /// Moves queued input into the receive FIFO (not in loopback mode, where
    /// the line is disconnected).
    ///
    /// Once a driver has enabled the receive interrupt, input waits in the
    /// queue while it is disabled: a port being closed or (re)opened does
    /// not read, and Linux's start-up sequence clears the FIFO and reads
    /// RBR to discard, which would lose typed-ahead bytes.
    pub fn poll_input(&mut self) {
        if self.loopback() || (self.rx_gated && self.ier & IER_RDI == 0) {
            return;
        }
        let room = self.rx_capacity().saturating_sub(self.rx.len());
        if room > 0 {
            self.rx.extend(self.input.pop(room));
        }
    }

    /// Passes held output on to the sink.
    pub fn flush(&mut self) {
        if !self.out_buf.is_empty() {
            // A closed host stdout must not stop the guest.
            let _ = self.out.write_all(&self.out_buf);
            let _ = self.out.flush();
            self.out_buf.clear();
        }
    }

    fn transmit(&mut self, byte: u8) {
        if self.loopback() {
            if self.rx.len() < self.rx_capacity() {
                self.rx.push_back(byte);
            }
        } else {
            self.out_buf.push(byte);
            if byte == b'\n' || self.out_buf.len() >= OUT_CHUNK {
                self.flush();
            }
        }
        // Sent at once: THR is empty again.
        self.thr_ipending = true;
    }

    /// The interrupt identification (IIR bits 3:0), by priority.
    fn ident(&self) -> u8 {
        if self.ier & IER_RDI != 0 && !self.rx.is_empty() {
            if self.rx.len() >= self.rx_trigger() {
                IIR_RDI
            } else {
                IIR_TIMEOUT
            }
        } else if self.ier & IER_THRI != 0 && self.thr_ipending {
            IIR_THRI
        } else if self.ier & IER_MSI != 0 && self.msr_delta != 0 {
            IIR_MSI
        } else {
            IIR_NONE
        }
    }

    /// The interrupt line (to the PLIC).
    pub fn irq(&self) -> bool {
        self.ident() != IIR_NONE
    }

    /// MSR's status nibble (bits 7:4).
    fn modem_status(&self) -> u8 {
        if self.loopback() {
            // DTR→DSR, RTS→CTS, OUT1→RI, OUT2→DCD.
            let m = self.mcr;
            ((m & 1) << 5) | ((m & 2) << 3) | ((m & 4) << 4) | ((m & 8) << 4)
        } else {
            MSR_CONNECTED
        }
    }

    fn set_mcr(&mut self, value: u8) {
        let before = self.modem_status();
        self.mcr = value & 0x1f;
        let after = self.modem_status();
        let changed = before ^ after;
        // DCTS, DDSR, TERI (RI falling), DDCD.
        self.msr_delta |= (changed >> 4) & 0x0b;
        if before & 0x40 != 0 && after & 0x40 == 0 {
            self.msr_delta |= 0x04;
        }
    }

    /// A load at `offset`; any width reads the byte register at `offset`.
    pub fn load(&mut self, offset: u64) -> u64 {
        let dlab = self.lcr & LCR_DLAB != 0;
        let v = match offset {
            0 if dlab => self.dll,
            0 => {
                let b = self.rx.pop_front().unwrap_or(0);
                self.poll_input();
                b
            }
            1 if dlab => self.dlm,
            1 => self.ier,
            2 => {
                let id = self.ident();
                if id == IIR_THRI {
                    self.thr_ipending = false;
                }
                let fifo = if self.fifo_enabled() { IIR_FIFO } else { 0 };
                id | fifo
            }
            3 => self.lcr,
            4 => self.mcr,
            5 => {
                let dr = if self.rx.is_empty() { 0 } else { LSR_DR };
                dr | LSR_THRE | LSR_TEMT
            }
            6 => {
                let v = self.modem_status() | self.msr_delta;
                self.msr_delta = 0;
                v
            }
            7 => self.scr,
            _ => 0,
        };
        u64::from(v)
    }

    /// A store at `offset`; any width writes the low byte.
    pub fn store(&mut self, offset: u64, value: u64) {
        let v = value as u8;
        let dlab = self.lcr & LCR_DLAB != 0;
        match offset {
            0 if dlab => self.dll = v,
            0 => self.transmit(v),
            1 if dlab => self.dlm = v,
            1 => {
                let changed = (self.ier ^ v) & IER_THRI;
                self.ier = v & 0x0f;
                if self.ier & IER_RDI != 0 {
                    self.rx_gated = true;
                    self.poll_input();
                }
                if changed != 0 {
                    // THR is always empty: enabling THRI raises it at once.
                    self.thr_ipending = self.ier & IER_THRI != 0;
                }
            }
            2 => {
                if (self.fcr ^ v) & FCR_ENABLE != 0 || v & FCR_CLEAR_RX != 0 {
                    // Bytes from the host go back to the queue: input is
                    // never lost (the loopback's own bytes are).
                    let unread: Vec<u8> = self.rx.drain(..).collect();
                    if !self.loopback() {
                        self.input.unread(&unread);
                    }
                }
                // Bits 1 and 2 clear the FIFOs and read back as 0.
                self.fcr = v & 0xc9;
                self.poll_input();
            }
            3 => self.lcr = v,
            4 => self.set_mcr(v),
            7 => self.scr = v,
            _ => {}
        }
    }

    /// The divisor latch (DLM:DLL).
    pub fn divisor(&self) -> u16 {
        u16::from_le_bytes([self.dll, self.dlm])
    }
}

impl Drop for Uart {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The registers and the receive FIFO. Output is passed on before a
/// checkpoint (`Board::flush`), so none is held; the input queue is the
/// machine's.
impl Checkpointable for Uart {
    fn save(&self, w: &mut StateWriter) {
        w.bytes(&self.rx.iter().copied().collect::<Vec<_>>());
        for b in [
            self.ier,
            self.fcr,
            self.lcr,
            self.mcr,
            self.scr,
            self.dll,
            self.dlm,
            self.msr_delta,
        ] {
            w.u8(b);
        }
        w.bool(self.rx_gated);
        w.bool(self.thr_ipending);
        w.bytes(&self.out_buf);
    }

    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        let rx = r.bytes(FIFO_BYTES)?;
        self.rx = rx.iter().copied().collect();
        for b in [
            &mut self.ier,
            &mut self.fcr,
            &mut self.lcr,
            &mut self.mcr,
            &mut self.scr,
            &mut self.dll,
            &mut self.dlm,
            &mut self.msr_delta,
        ] {
            *b = r.u8()?;
        }
        self.rx_gated = r.bool()?;
        self.thr_ipending = r.bool()?;
        self.out_buf = r.bytes(OUT_CHUNK)?.to_vec();
        Ok(())
    }
}

/// On the board: one interrupt line, its level pushed after every access,
/// poll and reset.
impl Device for Uart {
    fn name(&self) -> &'static str {
        "UART"
    }

    fn size(&self) -> u64 {
        UART_SIZE
    }

    fn irq_count(&self) -> usize {
        1
    }

    fn load(&mut self, offset: u64, _size: u64, wires: &mut Wires<'_>) -> Option<u64> {
        // Reads have side effects too (RBR, IIR).
        let v = Uart::load(self, offset);
        wires.set_irq(0, self.irq());
        Some(v)
    }

    fn store(&mut self, offset: u64, _size: u64, value: u64, wires: &mut Wires<'_>) -> bool {
        Uart::store(self, offset, value);
        wires.set_irq(0, self.irq());
        true
    }

    /// Pulls console input into the FIFO and passes output on.
    fn tick(&mut self, _mem: &mut dyn GuestMemory, wires: &mut Wires<'_>) {
        self.poll_input();
        Uart::flush(self);
        wires.set_irq(0, self.irq());
    }

    fn reset(&mut self, wires: &mut Wires<'_>) {
        Uart::reset(self);
        wires.set_irq(0, self.irq());
    }

    fn flush(&mut self) {
        Uart::flush(self);
    }

    fn save(&self, w: &mut StateWriter) -> Result<(), CheckpointError> {
        Checkpointable::save(self, w);
        Ok(())
    }

    fn restore(
        &mut self,
        r: &mut StateReader<'_>,
        wires: &mut Wires<'_>,
    ) -> Result<(), CheckpointError> {
        Checkpointable::restore(self, r)?;
        wires.set_irq(0, self.irq());
        Ok(())
    }

    fn fdt_name(&self) -> &'static str {
        "serial"
    }

    fn fdt_node(&self, w: &mut FdtWriter, node: &FdtNode<'_>) -> FdtWriterResult<()> {
        w.property_string("compatible", "ns16550a")?;
        node.reg(w)?;
        w.property_u32("clock-frequency", UART_CLOCK_HZ)?;
        node.interrupts(w)
    }

    fn fdt_alias(&self) -> Option<&'static str> {
        Some("serial0")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A sink the test can read back.
    #[derive(Clone, Default)]
    pub struct Captured(pub Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn uart() -> (Uart, Captured, InputQueue) {
        let out = Captured::default();
        let input = InputQueue::new();
        (Uart::new(Box::new(out.clone()), input.clone()), out, input)
    }

    #[test]
    fn echo_input_to_output() {
        let (mut u, out, input) = uart();
        u.store(2, 0x07); // FIFOs on, cleared.
        input.push(b"hi\n");
        u.poll_input();
        let mut echoed = Vec::new();
        while u.load(5) & u64::from(LSR_DR) != 0 {
            let b = u.load(0);
            echoed.push(b as u8);
            u.store(0, b);
        }
        assert_eq!(echoed, b"hi\n");
        assert_eq!(out.0.lock().unwrap().as_slice(), b"hi\n");
        assert_eq!(u.load(0), 0, "empty RBR reads 0");
    }

    #[test]
    fn typed_ahead_input_survives_a_port_restart() {
        let (mut u, _, input) = uart();
        u.store(2, 0x07);
        u.store(1, u64::from(IER_RDI)); // a driver takes the port
        input.push(b"ab");
        u.poll_input();
        assert_eq!(u.load(5) & 1, 1, "in the FIFO");
        // Linux closes and reopens it: IER off, FIFO cleared, RBR read to
        // discard, then the receive interrupt back on.
        u.store(1, 0);
        u.store(2, 0x07);
        u.poll_input();
        assert_eq!(u.load(5) & 1, 0, "nothing offered while the port is closed");
        assert_eq!(u.load(0), 0);
        u.store(1, u64::from(IER_RDI));
        assert_eq!(u.load(0), u64::from(b'a'));
        assert_eq!(u.load(0), u64::from(b'b'));
    }

    #[test]
    fn output_is_held_until_newline_or_flush() {
        let (mut u, out, _) = uart();
        u.store(0, u64::from(b'a'));
        assert!(out.0.lock().unwrap().is_empty());
        u.flush();
        assert_eq!(out.0.lock().unwrap().as_slice(), b"a");
        u.store(0, u64::from(b'b'));
        drop(u);
        assert_eq!(out.0.lock().unwrap().as_slice(), b"ab");
    }

    #[test]
    fn receive_interrupts_follow_ier_and_the_trigger_level() {
        let (mut u, _, input) = uart();
        assert_eq!(u.load(2), 0x01);
        input.push(b"abcde");
        u.poll_input();
        assert!(!u.irq(), "RDI not enabled");
        assert_eq!(u.load(5) & 1, 1);
        u.store(1, u64::from(IER_RDI));
        assert!(u.irq());
        assert_eq!(u.load(2), 0x04, "FIFOs off: one byte is the trigger");
        // FIFO on, trigger 4: five bytes, then one below the level.
        u.store(2, 0x41);
        assert_eq!(u.load(2), 0xc4);
        u.load(0);
        u.load(0);
        assert_eq!(u.load(2), 0xcc, "three left: character timeout");
        u.load(0);
        u.load(0);
        u.load(0);
        assert_eq!(u.load(2), 0xc1);
        assert!(!u.irq());
    }

    #[test]
    fn thre_interrupt_rearms_on_write_and_clears_on_iir_read() {
        let (mut u, out, _) = uart();
        u.store(1, u64::from(IER_THRI));
        assert!(u.irq());
        assert_eq!(u.load(2), 0x02);
        assert!(!u.irq(), "reading IIR cleared it");
        assert_eq!(u.load(2), 0x01);
        u.store(0, u64::from(b'x'));
        assert!(u.irq(), "the byte left at once");
        u.store(1, 0);
        assert!(!u.irq());
        // Linux's UART_BUG_THRE probe: re-enabling THRI raises it again.
        u.store(1, u64::from(IER_THRI));
        assert_eq!(u.load(2), 0x02);
        assert_eq!(u.load(5), 0x60);
        u.flush();
        assert_eq!(out.0.lock().unwrap().as_slice(), b"x");
    }

    #[test]
    fn divisor_latch_and_scratch() {
        let (mut u, out, _) = uart();
        u.store(3, 0x83);
        u.store(0, 0x01);
        u.store(1, 0x02);
        assert_eq!(u.divisor(), 0x0201);
        assert_eq!(u.load(0), 0x01);
        assert_eq!(u.load(1), 0x02);
        u.store(3, 0x03);
        assert_eq!(u.load(1), 0, "IER untouched by the DLM write");
        assert_eq!(u.load(3), 0x03);
        u.store(7, 0x5a);
        assert_eq!(u.load(7), 0x5a);
        u.flush();
        assert!(
            out.0.lock().unwrap().is_empty(),
            "DLL writes are not output"
        );
    }

    #[test]
    fn loopback_returns_output_and_modem_lines() {
        let (mut u, out, input) = uart();
        input.push(b"q");
        assert_eq!(u.load(6), u64::from(MSR_CONNECTED));
        u.store(4, u64::from(MCR_LOOP | 0x0a)); // OUT2 and RTS.
        assert_eq!(
            u.load(6) & 0xf0,
            0x90,
            "Linux's loopback check: DCD and CTS"
        );
        u.store(0, u64::from(b'z'));
        assert_eq!(u.load(0), u64::from(b'z'));
        u.store(4, 0);
        u.poll_input();
        assert_eq!(u.load(0), u64::from(b'q'), "the line is back");
        u.flush();
        assert!(out.0.lock().unwrap().is_empty());
    }

    #[test]
    fn modem_status_interrupt() {
        let (mut u, _, _) = uart();
        u.store(1, u64::from(IER_MSI));
        assert!(!u.irq());
        u.store(4, u64::from(MCR_LOOP));
        assert!(u.irq(), "CTS/DSR/DCD dropped");
        assert_eq!(u.load(2), 0x00);
        assert_eq!(u.load(6) & 0x0f, 0x0b);
        assert!(!u.irq(), "reading MSR clears the deltas");
    }

    #[test]
    fn a_checkpoint_restores_registers_and_the_receive_fifo() {
        use rvnvmm_checkpoint::Sections;
        let (mut u, _, input) = uart();
        u.store(2, 0x01); // FCR: FIFO on
        u.store(1, 0x01); // IER: received data
        u.store(3, 0x03); // LCR: 8N1
        u.store(7, 0x5a); // SCR
        input.push(b"ab");
        u.poll_input();
        let mut s = Sections::new();
        s.save("uart", &u);
        let (mut back, _, _) = uart();
        s.restore("uart", &mut back).unwrap();
        assert_eq!(format!("{back:?}"), format!("{u:?}"));
        assert_eq!(back.irq(), u.irq());
        assert_eq!(back.load(7), 0x5a);
        assert_eq!(back.load(0), u64::from(b'a'));
        assert_eq!(back.load(0), u64::from(b'b'));
    }
}
