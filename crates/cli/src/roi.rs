//! `rvnvmm boot`'s run control (`rvnvmm_runctl` driving the board machine,
//! `docs/regions-of-interest.md`): how a fast-forward or a sampled boot
//! starts, and the pauses of a sampled one. The markers, the snapshots and
//! the JSON are the run control's.

use rvnvmm_board::machine::{Machine, MachineError};
use rvnvmm_runctl::{FastForward, RunControl, Sampling};

/// The run control of a boot: its snapshots keep the statistics JSON.
pub type BootControl = RunControl<serde_json::Value>;

/// Sets `m` to the functional model, which it must be able to leave: an
/// error for a machine without a timing model.
pub fn functional_until_timing(m: &mut Machine) -> Result<(), MachineError> {
    m.set_timing(false)?;
    if m.any_memsys_mut().is_none() {
        return Err(MachineError::NoTimingModel);
    }
    Ok(())
}

/// Goes on in the functional model until the guest's first `switch
/// timing` marker (`boot --fast-forward marker`), with `ctl`'s bookkeeping
/// (of a restored checkpoint, or new).
pub fn fast_forward_to_marker(ctl: &mut BootControl, m: &mut Machine) -> Result<(), MachineError> {
    functional_until_timing(m)?;
    ctl.fast_forward(m, FastForward::Marker);
    Ok(())
}

/// Samples the boot by `plan` (`boot --sample`): it starts in the
/// functional model, and the machine pauses at each of the sampler's
/// points ([`sample_point`]).
pub fn sample(m: &mut Machine, plan: Sampling) -> Result<BootControl, MachineError> {
    functional_until_timing(m)?;
    let mut ctl = BootControl::new();
    ctl.sample(m, plan);
    sample_point(&mut ctl, m);
    Ok(ctl)
}

/// At a pause of a sampled boot: acts on the sampler's points reached
/// (model switches, windows) and pauses the machine at the next.
pub fn sample_point(ctl: &mut BootControl, m: &mut Machine) {
    if ctl.is_sampled() {
        ctl.check_points(m);
        m.set_pause_at(ctl.next_sample_point());
    }
}
