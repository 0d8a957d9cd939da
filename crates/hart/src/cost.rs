//! The in-order core's cycle costs: a cost per instruction class, a stall
//! when an instruction uses the result of the load just before it, and a
//! penalty for each taken branch or jump. Costs within a block are summed
//! once, when the block is decoded; only taken branches add at run time.

use rvnvmm_isa::{CostClass, Insn, Op};

/// Cycles per instruction class: the machine config's `[core]` itself.
pub use rvnvmm_config::CoreCosts;

/// The static cost of `ins`, given the instruction before it in the
/// block (for the load-use stall). Conditional branches and indirect
/// jumps pay `branch_taken` at run time, when taken.
pub fn cost(costs: &CoreCosts, ins: &Insn, prev: Option<&Insn>) -> u32 {
    let class = match ins.op.cost_class() {
        CostClass::Mul => costs.mul,
        CostClass::Clmul => costs.clmul,
        CostClass::Div => costs.div,
        CostClass::Fdiv => costs.fdiv,
        CostClass::Jal => costs.alu.saturating_add(costs.branch_taken),
        CostClass::Fpu => costs.fpu,
        CostClass::Alu | CostClass::Load | CostClass::Store => costs.alu,
    };
    let stall = match prev {
        Some(p) if is_load(p.op) && p.rd != 0 && reads(ins, p.rd) => costs.load_use,
        _ => 0,
    };
    // Saturating: the config bounds every cost (`MAX_COST_CYCLES`), but a
    // cost table built in code is not validated.
    class.saturating_add(stall)
}

/// The shared unit of an SMT core `ins` needs, and for how many cycles
/// (its class cost: the iterative units are busy for the whole operation).
pub(crate) fn smt_unit(costs: &CoreCosts, ins: &Insn) -> (crate::smt::Unit, u64) {
    use crate::smt::Unit;
    let class = u64::from(cost(costs, ins, None));
    let unit = match ins.op.cost_class() {
        CostClass::Mul | CostClass::Clmul | CostClass::Div => Unit::MulDiv,
        CostClass::Fdiv => Unit::FpDiv,
        CostClass::Load | CostClass::Store => Unit::Memory,
        CostClass::Alu | CostClass::Fpu | CostClass::Jal => Unit::None,
    };
    (unit, class)
}

/// Loads (integer, FP and `lr`): the load-use stall follows them.
fn is_load(op: Op) -> bool {
    op.cost_class() == CostClass::Load
}

/// Whether `ins` may read register number `r` (either register file: a
/// slight over-approximation that costs at most a stall).
fn reads(ins: &Insn, r: u8) -> bool {
    use Op::*;
    match ins.op {
        Lui | Auipc | Jal => false,
        _ => ins.rs1 == r || ins.rs2 == r || ins.rs3 == r,
    }
}

/// Cumulative costs of a block: entry `i` is the cost of its first `i`
/// instructions. With the config's bound on every cost the sums stay
/// below 2^21 (64 instructions of at most 3 x 10_000 cycles); they
/// saturate rather than wrap for a table beyond it.
pub(crate) fn prefix(costs: &CoreCosts, insns: &[Insn]) -> Box<[u32]> {
    let mut out = Vec::with_capacity(insns.len() + 1);
    let mut sum = 0u32;
    out.push(0);
    for (k, ins) in insns.iter().enumerate() {
        sum = sum.saturating_add(cost(costs, ins, k.checked_sub(1).map(|p| &insns[p])));
        out.push(sum);
    }
    out.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    use rvnvmm_isa::decode;

    #[test]
    fn classes_load_use_and_jumps() {
        let c = CoreCosts {
            alu: 1,
            mul: 4,
            clmul: 3,
            div: 30,
            fpu: 3,
            fdiv: 20,
            load_use: 2,
            branch_taken: 1,
            ..CoreCosts::default()
        };
        let ld_a0 = decode(0x0005_3503); // ld a0, 0(a0)
        let add_a1 = decode(0x00a5_85b3); // add a1, a1, a0
        let mul = decode(0x02b5_0533); // mul a0, a0, a1
        let div = decode(0x02b5_4533); // div a0, a0, a1
        let fadd = decode(0x02b5_7553); // fadd.d fa0, fa0, fa1
        let j = decode(0x0000_006f); // jal zero, 0
        assert_eq!(cost(&c, &add_a1, Some(&ld_a0)), 1 + 2);
        assert_eq!(cost(&c, &add_a1, None), 1);
        assert_eq!(cost(&c, &mul, None), 4);
        assert_eq!(cost(&c, &div, None), 30);
        assert_eq!(cost(&c, &fadd, None), 3);
        assert_eq!(cost(&c, &decode(0x04c5_f553), None), 3); // fadd.h
        assert_eq!(cost(&c, &decode(0x1cc5_8553), None), 20); // fdiv.h
        assert_eq!(cost(&c, &decode(0x5c05_f553), None), 20); // fsqrt.h
        assert_eq!(cost(&c, &decode(0x4045_f553), None), 3); // fround.s
        assert_eq!(cost(&c, &decode(0xc285_9553), None), 3); // fcvtmod.w.d
        assert_eq!(cost(&c, &decode(0xf010_0553), None), 1); // fli.s: a move
        assert_eq!(cost(&c, &decode(0xe405_8553), None), 1); // fmv.x.h
        let flh_a0 = decode(0x0005_1507); // flh fa0, 0(a0)
        assert_eq!(cost(&c, &fadd, Some(&flh_a0)), 3 + 2, "flh is a load");
        assert_eq!(cost(&c, &j, None), 2);
        assert_eq!(cost(&c, &decode(0x0ac5a533), None), 3); // clmulr a0,a1,a2
        assert_eq!(cost(&c, &decode(0x20c5a533), None), 1); // sh1add a0,a1,a2
        assert_eq!(cost(&c, &decode(0x0ec5d533), None), 1); // czero.eqz a0,a1,a2
        assert_eq!(&*prefix(&c, &[ld_a0, add_a1, mul]), &[0, 1, 4, 8]);
        assert_eq!(
            &*prefix(&CoreCosts::FUNCTIONAL, &[ld_a0, add_a1, mul]),
            &[0, 1, 2, 3]
        );
    }

    #[test]
    fn costs_beyond_the_config_bound_saturate_instead_of_wrapping() {
        let ld_a0 = decode(0x0005_3503); // ld a0, 0(a0)
        let div = decode(0x02b5_4533); // div a0, a0, a1 (reads a0: a load-use)
        let huge = CoreCosts {
            div: u32::MAX,
            ..CoreCosts::default()
        };
        assert_eq!(cost(&huge, &div, Some(&ld_a0)), u32::MAX);
        let p = prefix(&huge, &[ld_a0, div, div, div]);
        assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
        assert_eq!(*p.last().unwrap(), u32::MAX);
        // At the bound, a whole block sums exactly, far below 2^32.
        let bound = rvnvmm_config::MAX_COST_CYCLES as u32;
        let most = CoreCosts {
            alu: bound,
            load_use: bound,
            branch_taken: bound,
            ..CoreCosts::default()
        };
        let jal = decode(0x0000_006f);
        let block = [jal; crate::MAX_BLOCK_INSNS];
        assert_eq!(
            u64::from(*prefix(&most, &block).last().unwrap()),
            2 * rvnvmm_config::MAX_COST_CYCLES * crate::MAX_BLOCK_INSNS as u64
        );
    }
}
