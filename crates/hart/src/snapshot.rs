//! A hart's architectural state in a checkpoint (`rvnvmm_checkpoint`):
//! registers, privilege, CSRs, PMP, the `lr` reservation, the counters the
//! guest sees and the event counters. Decoded code, the software TLBs and
//! their bookkeeping are derived state: a restored hart starts without
//! them and refills them as it runs.

use crate::pmp::{Pmp, PMP_ENTRIES};
use crate::privileged::PrivState;
use crate::{Hart, HartStats, Priv, Trap};
use rvnvmm_checkpoint::{CheckpointError, Checkpointable, StateReader, StateWriter};
use std::sync::atomic::Ordering::Relaxed;

impl Checkpointable for PrivState {
    fn save(&self, w: &mut StateWriter) {
        for v in self.fields() {
            w.u64(*v);
        }
    }

    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        for v in self.fields_mut() {
            *v = r.u64()?;
        }
        Ok(())
    }
}

impl PrivState {
    /// Every field, in a fixed order (the checkpoint's).
    fn fields(&self) -> [&u64; 23] {
        [
            &self.mstatus,
            &self.medeleg,
            &self.mideleg,
            &self.mie,
            &self.mip,
            &self.mtvec,
            &self.stvec,
            &self.mepc,
            &self.sepc,
            &self.mcause,
            &self.scause,
            &self.mtval,
            &self.stval,
            &self.mscratch,
            &self.sscratch,
            &self.satp,
            &self.mcounteren,
            &self.scounteren,
            &self.menvcfg,
            &self.senvcfg,
            &self.stimecmp,
            &self.mcycle_offset,
            &self.minstret_offset,
        ]
    }

    fn fields_mut(&mut self) -> [&mut u64; 23] {
        [
            &mut self.mstatus,
            &mut self.medeleg,
            &mut self.mideleg,
            &mut self.mie,
            &mut self.mip,
            &mut self.mtvec,
            &mut self.stvec,
            &mut self.mepc,
            &mut self.sepc,
            &mut self.mcause,
            &mut self.scause,
            &mut self.mtval,
            &mut self.stval,
            &mut self.mscratch,
            &mut self.sscratch,
            &mut self.satp,
            &mut self.mcounteren,
            &mut self.scounteren,
            &mut self.menvcfg,
            &mut self.senvcfg,
            &mut self.stimecmp,
            &mut self.mcycle_offset,
            &mut self.minstret_offset,
        ]
    }
}

impl Checkpointable for Pmp {
    fn save(&self, w: &mut StateWriter) {
        w.bytes(&self.raw_cfg());
        w.u64s(&self.raw_addr());
    }

    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        let cfg: [u8; PMP_ENTRIES] = r
            .bytes(PMP_ENTRIES)?
            .try_into()
            .map_err(|_| r.malformed("PMP configuration of another size"))?;
        let mut addr = [0u64; PMP_ENTRIES];
        r.u64s_into(&mut addr, "PMP address registers")?;
        self.set_raw(cfg, addr);
        Ok(())
    }
}

impl Checkpointable for HartStats {
    fn save(&self, w: &mut StateWriter) {
        let a = &self.atomics;
        let s = &self.sbi_calls;
        w.u64s(&[
            self.flush_insns,
            self.tlb_refills,
            self.exceptions,
            self.interrupts,
            a.amos,
            a.lr,
            a.sc,
            a.sc_failures,
            a.stall_cycles,
            s.ipi,
            s.rfence,
            s.timer,
            s.hsm,
            s.other,
            self.memory_stall_cycles,
            self.issue_wait_cycles,
            self.unit_wait_cycles,
        ]);
    }

    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        let mut v = [0u64; 17];
        r.u64s_into(&mut v, "hart counters")?;
        let [flush_insns, tlb_refills, exceptions, interrupts, amos, lr, sc, sc_failures, stall_cycles, ipi, rfence, timer, hsm, other, memory_stall_cycles, issue_wait_cycles, unit_wait_cycles] =
            v;
        *self = HartStats {
            flush_insns,
            tlb_refills,
            exceptions,
            interrupts,
            atomics: crate::AtomicStats {
                amos,
                lr,
                sc,
                sc_failures,
                stall_cycles,
            },
            sbi_calls: crate::SbiCalls {
                ipi,
                rfence,
                timer,
                hsm,
                other,
            },
            memory_stall_cycles,
            issue_wait_cycles,
            unit_wait_cycles,
        };
        Ok(())
    }
}

fn priv_code(p: Priv) -> u8 {
    p as u8
}

fn priv_of(code: u8, r: &StateReader<'_>) -> Result<Priv, CheckpointError> {
    match code {
        0 => Ok(Priv::User),
        1 => Ok(Priv::Supervisor),
        3 => Ok(Priv::Machine),
        c => Err(r.malformed(format!("privilege level {c}"))),
    }
}

/// The hart's architectural state. The core it runs on (its clock) is the
/// machine's to save; the configuration (ISA, costs) is the restoring
/// machine's.
impl Checkpointable for Hart {
    fn save(&self, w: &mut StateWriter) {
        w.bool(self.full_system);
        w.u64s(&self.x);
        w.u64s(&self.f);
        w.u64(self.pc);
        w.u8(self.fflags);
        w.u8(self.frm);
        w.u64(self.instret);
        w.u8(priv_code(self.prv));
        w.opt_u64(self.page_table);
        let (reserved, value) = match self.reservation {
            Some((a, v)) => (Some(a), v),
            None => (None, 0),
        };
        w.opt_u64(reserved);
        w.u64(value);
        w.u64(self.last_trap.cause);
        w.u64(self.last_trap.tval);
        w.u64(self.lines.time.load(Relaxed));
        self.csrs.save(w);
        self.pmp.save(w);
        self.stats.save(w);
    }

    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        let full_system = r.bool()?;
        self.set_full_system(full_system);
        r.u64s_into(&mut self.x, "integer registers")?;
        if self.x[0] != 0 {
            return Err(r.malformed("x0 is not zero"));
        }
        r.u64s_into(&mut self.f, "FP registers")?;
        self.pc = r.u64()?;
        self.fflags = r.u8()?;
        self.frm = r.u8()?;
        self.instret = r.u64()?;
        let code = r.u8()?;
        self.prv = priv_of(code, r)?;
        self.page_table = r.opt_u64()?;
        let reserved = r.opt_u64()?;
        let value = r.u64()?;
        self.reservation = reserved.map(|a| (a, value));
        let cause = r.u64()?;
        let tval = r.u64()?;
        self.last_trap = Trap::new(cause, tval);
        self.lines.time.store(r.u64()?, Relaxed);
        self.csrs.restore(r)?;
        self.pmp.restore(r)?;
        self.stats.restore(r)?;
        self.sync_tlb_context();
        self.event_at = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HartConfig;
    use rvnvmm_checkpoint::Sections;

    #[test]
    fn a_hart_reads_back_as_it_was() {
        let mut h = Hart::new(HartConfig::default());
        h.set_full_system(true);
        h.x[5] = 55;
        h.f[3] = 0x4000;
        h.pc = 0x8000_1234;
        h.fflags = 3;
        h.frm = 2;
        h.instret = 999;
        h.prv = Priv::Supervisor;
        h.page_table = Some(0x8100_0000);
        h.reservation = Some((0x8000_0040, 7));
        h.csrs.satp = 8 << 60 | 0x81000;
        h.csrs.stimecmp = 1234;
        h.csrs.minstret_offset = 17;
        h.pmp.write_addr(0, 0x2000_0000);
        h.pmp.write_cfg_reg(0, 0x0f);
        h.stats.interrupts = 12;
        h.stats.sbi_calls.timer = 4;
        let mut s = Sections::new();
        s.save("hart0", &h);

        let mut back = Hart::new(HartConfig::default());
        s.restore("hart0", &mut back).unwrap();
        assert!(back.full_system());
        assert_eq!(back.x, h.x);
        assert_eq!(back.f, h.f);
        assert_eq!((back.pc, back.fflags, back.frm), (h.pc, 3, 2));
        assert_eq!((back.instret, back.prv), (999, Priv::Supervisor));
        assert_eq!(back.page_table, h.page_table);
        assert_eq!(back.reservation, h.reservation);
        assert_eq!(back.csrs.fields(), h.csrs.fields());
        assert_eq!(back.pmp.cfg_reg(0), h.pmp.cfg_reg(0));
        assert_eq!(back.pmp.addr(0), 0x2000_0000);
        assert_eq!(back.stats, h.stats);

        // A section cut short is an error, not a panic.
        let bytes = s.get("hart0").unwrap();
        for cut in [0, 1, 100, bytes.len() - 1] {
            let mut t = Sections::new();
            t.insert("hart0", bytes[..cut].to_vec());
            let mut h = Hart::new(HartConfig::default());
            assert!(t.restore("hart0", &mut h).is_err(), "cut at {cut}");
        }
    }
}
