//! A shadow call stack, kept while a persistence trace is recorded so that
//! a fence or flush inside a library can be named by the program's call
//! site (`rvnvmm crashtest --explore`).
//!
//! Calls and returns are recognised as the ISA's return-address-stack hints
//! say (the unprivileged spec, `jalr`): a jump that links `x1` or `x5` is a
//! call; a `jalr` through `x1` or `x5` that links neither is a return. A
//! return goes back to the innermost frame with its target, so a `longjmp`
//! or an unwound exception, which skip frames, leave it right from the
//! next return on; a return to no frame (a coroutine switch) changes
//! nothing.

/// Frames kept at most: the outermost are dropped beyond it.
const MAX_FRAMES: usize = 64;

/// The return addresses of the calls in progress, the outermost first.
#[derive(Clone, Debug, Default)]
pub struct CallStack {
    frames: Vec<u64>,
}

/// Whether `r` is a link register (`ra` or `t0`).
#[inline]
pub(crate) fn is_link(r: u8) -> bool {
    r == 1 || r == 5
}

impl CallStack {
    /// A call that returns to `ret`.
    pub fn call(&mut self, ret: u64) {
        if self.frames.len() == MAX_FRAMES {
            self.frames.remove(0);
        }
        self.frames.push(ret);
    }

    /// A return to `target`.
    pub fn ret(&mut self, target: u64) {
        if let Some(i) = self.frames.iter().rposition(|&r| r == target) {
            self.frames.truncate(i);
        }
    }

    /// The return addresses, the outermost first.
    pub fn frames(&self) -> &[u64] {
        &self.frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_returns_nest_and_a_skipped_frame_is_dropped() {
        let mut s = CallStack::default();
        s.call(0x104);
        s.call(0x208);
        s.call(0x30c);
        assert_eq!(s.frames(), [0x104, 0x208, 0x30c]);
        s.ret(0x30c);
        assert_eq!(s.frames(), [0x104, 0x208]);
        // A longjmp back to the outermost caller's frame: the next return
        // there drops what it skipped.
        s.call(0x410);
        s.ret(0x104);
        assert!(s.frames().is_empty());
        // A return to no frame changes nothing.
        s.call(0x104);
        s.ret(0x999);
        assert_eq!(s.frames(), [0x104]);
    }

    #[test]
    fn the_outermost_frames_go_beyond_the_bound() {
        let mut s = CallStack::default();
        for i in 0..(MAX_FRAMES as u64 + 3) {
            s.call(i);
        }
        assert_eq!(s.frames().len(), MAX_FRAMES);
        assert_eq!(s.frames()[0], 3);
        assert!(is_link(1) && is_link(5) && !is_link(0) && !is_link(2));
    }
}
