//! The run control against a fake machine: one hart, one cycle an
//! instruction in the functional model, two in the timing one, at 1 GHz.

use super::*;

#[derive(Default)]
struct Fake {
    insns: u64,
    cycles: u64,
    timed: bool,
    /// No timing model to switch to.
    functional_only: bool,
    resets: u32,
    names: Vec<(u64, Vec<u8>)>,
}

impl Fake {
    fn timed() -> Fake {
        Fake {
            timed: true,
            ..Fake::default()
        }
    }

    fn run(&mut self, n: u64) {
        self.insns += n;
        self.cycles += if self.timed { 2 * n } else { n };
    }
}

impl Controlled for Fake {
    type Stats = u64;

    fn instructions(&self) -> u64 {
        self.insns
    }

    fn hart_time_ns(&self) -> u64 {
        self.cycles
    }

    fn switch_model(&mut self, to: Model) -> Result<bool, String> {
        let timed = to == Model::Timing;
        if timed && self.functional_only {
            return Err("no timing model".into());
        }
        Ok(std::mem::replace(&mut self.timed, timed) != timed)
    }

    fn reset_stats(&mut self) -> ResetPoint {
        self.resets += 1;
        ResetPoint {
            instructions: self.insns,
            sim_time_ns: self.cycles,
        }
    }

    fn stats(&mut self) -> u64 {
        self.insns
    }

    fn read_guest_string(&mut self, addr: u64, max: usize) -> Option<Vec<u8>> {
        let (_, name) = self.names.iter().find(|(a, _)| *a == addr)?;
        Some(name[..name.len().min(max)].to_vec())
    }

    fn sample_counters(&mut self) -> SampleCounters {
        SampleCounters {
            instructions: self.insns,
            cycles: self.cycles,
            ..SampleCounters::default()
        }
    }

    fn cycles_to_ns(&self, cycles: u64) -> u64 {
        cycles
    }
}

#[test]
fn a_fast_forward_to_the_marker_switches_and_resets_there() {
    let (mut m, mut ctl) = (Fake::timed(), RunControl::new());
    ctl.fast_forward(&mut m, FastForward::Marker);
    assert!(!m.timed && ctl.fast_forwarding_to_marker());
    m.run(100);
    ctl.marker(&mut m, MarkerOp::SwitchModel, SWITCH_TO_TIMING);
    assert!(m.timed && !ctl.fast_forwarding_to_marker());
    let here = ResetPoint {
        instructions: 100,
        sim_time_ns: 100,
    };
    assert_eq!(ctl.reset_point(), Some(here));
    assert_eq!(
        ctl.switches(),
        [ModelSwitch {
            to: Model::Timing,
            instructions: 100,
            sim_time_ns: 100
        }]
    );
    // A second `switch timing` changes nothing.
    ctl.marker(&mut m, MarkerOp::SwitchModel, SWITCH_TO_TIMING);
    assert_eq!((ctl.switches().len(), m.resets), (1, 1));
}

#[test]
fn points_by_instruction_count_come_exactly_at_it() {
    let (mut m, mut ctl) = (Fake::timed(), RunControl::<u64>::new());
    ctl.fast_forward(&mut m, FastForward::Insns(50));
    ctl.reset_stats_at(30);
    assert_eq!(ctl.next_exact_point(), Some(30));
    m.run(30);
    ctl.check_points(&mut m);
    assert_eq!((m.resets, m.timed), (1, false));
    assert_eq!(ctl.next_exact_point(), Some(50));
    m.run(20);
    ctl.check_points(&mut m);
    assert_eq!((m.resets, m.timed), (2, true));
    assert_eq!(ctl.next_exact_point(), None);
    assert_eq!(ctl.reset_point().map(|p| p.instructions), Some(50));
}

#[test]
fn dumps_are_named_by_the_guest_or_numbered() {
    let (mut m, mut ctl) = (Fake::default(), RunControl::new());
    m.names.push((0x1000, b"phase".to_vec()));
    m.names.push((0x2000, vec![b'x'; 1000]));
    m.run(7);
    ctl.marker(&mut m, MarkerOp::DumpStats, 0x1000);
    ctl.marker(&mut m, MarkerOp::DumpStats, 0);
    ctl.marker(&mut m, MarkerOp::DumpStats, 0x3000); // unreadable
    ctl.marker(&mut m, MarkerOp::DumpStats, 0x2000);
    let names: Vec<&str> = ctl.snapshots().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(&names[..3], ["phase", "snapshot2", "snapshot3"]);
    assert_eq!(names[3].len(), MAX_NAME_BYTES);
    assert_eq!(ctl.snapshots()[0].stats, 7);
}

#[test]
fn what_the_machine_cannot_do_is_ignored_and_the_rest_handed_back() {
    let mut m = Fake {
        functional_only: true,
        ..Fake::default()
    };
    let mut ctl = RunControl::<u64>::new();
    assert_eq!(
        ctl.marker(&mut m, MarkerOp::SwitchModel, SWITCH_TO_TIMING),
        None
    );
    assert_eq!(ctl.marker(&mut m, MarkerOp::SwitchModel, 7), None);
    assert_eq!(ctl.marker(&mut m, MarkerOp::Unknown(9), 0), None);
    assert!(ctl.switches().is_empty() && !m.timed);
    assert_eq!(
        ctl.marker(&mut m, MarkerOp::Exit, 0x1_03),
        Some(MarkerAction::Exit(3))
    );
    assert_eq!(
        ctl.marker(&mut m, MarkerOp::Checkpoint, 0),
        Some(MarkerAction::Checkpoint)
    );
}

#[test]
fn a_sampled_run_leaves_the_model_to_the_sampler() {
    let (mut m, mut ctl) = (Fake::timed(), RunControl::<u64>::new());
    ctl.sample(&mut m, Sampling::new(100, 10, 0).unwrap());
    assert!(!m.timed);
    ctl.marker(&mut m, MarkerOp::SwitchModel, SWITCH_TO_TIMING);
    assert!(!m.timed && ctl.switches().is_empty());
    // The window is the last 10 instructions of each period.
    assert_eq!(ctl.next_sample_point(), Some(90));
    m.run(90);
    ctl.check_points(&mut m);
    assert!(m.timed);
    m.run(10);
    ctl.check_points(&mut m);
    assert!(!m.timed);
    let s = ctl.sampling_outcome(100, 1_000_000_000).unwrap();
    assert_eq!(s.windows.len(), 1);
    assert_eq!((s.windows[0].instructions, s.windows[0].cycles), (10, 20));
    assert!(
        ctl.switches().is_empty(),
        "sampling's switches are its windows"
    );
}
