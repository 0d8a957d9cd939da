//! A guest's process tree under one deterministic scheduler.
//!
//! `fork` forks the emulator: each guest process is an emulator process on
//! the host, modelling the machine on its own. Left to the host, they would
//! race: which of a parent and its child reaches a pipe, a `waitpid` or the
//! end first would change from run to run, and with it the statistics. So
//! the processes of a tree take turns, as a conservative parallel
//! simulator's partitions do: exactly one runs guest code at a time (it
//! holds the turn), and the turn goes to the process that is earliest in
//! simulated time. The choice depends only on simulated time (ties go to
//! the process created first), so every run of the same inputs makes the
//! same choices.
//!
//! * A process that runs gives the turn up once it is [`QUANTUM_NS`] past
//!   the earliest other process, when every thread of it waits (it is then
//!   *blocked* and out of the choice until something wakes it), after a
//!   system call while another process waits for a descriptor (so a write
//!   to a pipe wakes its reader at the write's time), and when it exits.
//! * What one process does to another goes through the table in shared
//!   memory: a child's exit wakes its parent at the exit's time, with its
//!   wait status and `SIGCHLD`; a signal sent to a member is queued in its
//!   slot and taken when it next runs. Host signals do not carry them, since
//!   they arrive at host times.
//! * When every process is blocked, only the host can end the wait (a
//!   terminal, a peer outside): each in turn polls its descriptors for a
//!   short host time and passes the turn on.
//! * A process that dies without giving the turn back (killed from
//!   outside) is noticed by the others, which wait with a timeout, and is
//!   taken out as killed.
//!
//! The table lives in an anonymous shared mapping made before the first
//! fork, which every descendant inherits.

use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering::SeqCst};

mod member;

/// The guest pid of the process the command line starts: guest pids are
/// the tree's own (as in a pid namespace), never the host's, which change
/// from run to run.
pub(crate) const FIRST_PID: i32 = 100;

/// The parent pid the first process sees: its parent is outside the
/// guest's world (no process of the guest has this pid).
pub(crate) const FIRST_PARENT_PID: i32 = FIRST_PID - 1;

/// How far (simulated ns) a running process may get ahead of the earliest
/// other one before it gives the turn up.
pub(crate) const QUANTUM_NS: u64 = 100_000;

/// The most processes of a tree alive at once (slots are reused once a
/// process is waited for).
const MAX_SLOTS: usize = 4096;

/// The processes whose figures the tree keeps one by one (beyond them, in
/// its totals only).
const MAX_RECORDS: usize = 65536;

/// How long (host ms) a process waiting for the turn sleeps before it
/// checks that the holder is still alive.
const LIVENESS_MS: i64 = 200;

/// How long (host ms) a process polls its descriptors when the whole tree
/// is blocked.
const STUCK_POLL_MS: i32 = 10;

const NONE: u32 = u32::MAX;

/// The states of a slot.
const FREE: u32 = 0;
const RUNNABLE: u32 = 1;
const BLOCKED: u32 = 2;
/// Exited, not yet waited for (a zombie).
const EXITED: u32 = 3;
/// Waited for, or exited with no parent to wait: free for reuse.
const REAPED: u32 = 4;

/// What a blocked process waits for (bits of `Slot::waits`).
pub(crate) mod waits {
    /// A descriptor, or anything another process's system call may change.
    pub const IO: u32 = 1;
    /// A child's exit.
    pub const CHILD: u32 = 2;
    /// Its `vfork` child's `execve` or exit.
    pub const VFORK: u32 = 4;
}

#[repr(C)]
struct Slot {
    /// Bumped when the turn passes to this slot (a futex word).
    go: AtomicU32,
    state: AtomicU32,
    /// The guest's pid of it, and the host's.
    pid: AtomicI32,
    host_pid: AtomicI32,
    /// The parent's slot, `NONE` for the root or an orphan.
    parent: AtomicU32,
    /// Creation order in the tree (the root is 0), and the parent's
    /// (`u64::MAX`: none).
    seq: AtomicU64,
    parent_seq: AtomicU64,
    /// RUNNABLE: the simulated time it can run from.
    ready_ns: AtomicU64,
    /// BLOCKED: its time when it blocked, what it waits for, and the
    /// earliest time something may have ended the wait (`u64::MAX`: none).
    since_ns: AtomicU64,
    waits: AtomicU32,
    woken_ns: AtomicU64,
    /// Guest signals sent to it by members (bit n-1 = signal n), and the
    /// last sender's pid.
    signals: AtomicU64,
    sender: AtomicI32,
    /// EXITED: its wait status and figures.
    status: AtomicI32,
    start_ns: AtomicU64,
    exit_ns: AtomicU64,
    insns: AtomicU64,
    cpu_ns: AtomicU64,
    /// The program's name, NUL-padded.
    name: [AtomicU64; 4],
    /// Its `vfork` child's slot while it waits for it, else `NONE`.
    vfork_child: AtomicU32,
}

/// An exited process's figures.
#[repr(C)]
struct Record {
    seq: AtomicU64,
    parent_seq: AtomicU64,
    status: AtomicI32,
    insns: AtomicU64,
    cpu_ns: AtomicU64,
    start_ns: AtomicU64,
    end_ns: AtomicU64,
    name: [AtomicU64; 4],
}

#[repr(C)]
struct Shared {
    /// The slot holding the turn.
    turn: AtomicU32,
    /// Slots ever used (the others are FREE).
    used: AtomicU32,
    next_seq: AtomicU64,
    /// The next guest pid or tid (processes and threads share them).
    next_pid: AtomicI32,
    /// Slots neither EXITED nor REAPED nor FREE.
    live: AtomicU32,
    slots: [Slot; MAX_SLOTS],
    /// Records kept, and the totals of every exited process.
    records_len: AtomicU32,
    exited: AtomicU64,
    exited_insns: AtomicU64,
    exited_cpu_ns: AtomicU64,
    records: [Record; MAX_RECORDS],
}

/// One member's handle on its tree.
pub(crate) struct Family {
    shared: &'static Shared,
    me: u32,
    /// The simulated time past which this member gives the turn up.
    horizon_ns: u64,
}

/// A member's exit figures, for the tree's statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberStats {
    /// Creation order in the tree (the root is 0).
    pub seq: u64,
    /// The parent's `seq`.
    pub parent: Option<u64>,
    pub program: String,
    /// The wait status (`WEXITSTATUS`/`WTERMSIG` encoding).
    pub status: i32,
    pub instructions: u64,
    pub cpu_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A process tree's figures: totals over every process, and each one's
/// (the first [`MAX_RECORDS`] to exit).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeStats {
    pub count: u64,
    pub instructions: u64,
    pub cpu_ns: u64,
    /// In creation order.
    pub members: Vec<MemberStats>,
}

/// What a pid is to the tree ([`Family::lookup`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemberState {
    Live,
    /// Exited, not yet waited for.
    Zombie,
    /// Waited for, or ended without a parent to wait.
    Gone,
}

/// A child reported by [`Family::exited_child`].
pub(crate) struct ExitedChild {
    pub pid: i32,
    pub host_pid: i32,
    pub status: i32,
    pub cpu_ns: u64,
}

/// What [`Family::exited_child`] found.
pub(crate) enum ChildWait {
    Exited(ExitedChild),
    /// Matching children live, none has exited.
    Running,
    /// No child matches.
    NoChild,
}

/// The wait status of a process that exited with `code`.
pub(crate) fn exit_status(code: i32) -> i32 {
    (code & 0xff) << 8
}

/// The wait status of a process killed by `sig`.
pub(crate) fn killed_status(sig: i32) -> i32 {
    sig & 0x7f
}

fn futex_wait(word: &AtomicU32, val: u32, ms: i64) {
    let ts = libc::timespec {
        tv_sec: ms / 1000,
        tv_nsec: (ms % 1000) * 1_000_000,
    };
    // SAFETY: `word` is a live u32 in shared memory; `ts` outlives the call.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            val,
            &ts as *const libc::timespec,
        );
    }
}

fn futex_wake(word: &AtomicU32) {
    // SAFETY: `word` is a live u32 in shared memory.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX);
    }
}

/// Whether host process `pid` has ended (a zombie counts as ended).
fn host_process_ended(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: pidfd_open takes integers; the descriptor is closed below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    if fd < 0 {
        return std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    }
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one pollfd alive for the call; `fd` was opened here.
    let ended = unsafe { libc::poll(&mut p, 1, 0) } > 0;
    // SAFETY: `fd` was opened here and nothing else holds it.
    unsafe { libc::close(fd) };
    ended
}

impl Family {
    /// The tree of a process about to fork for the first time: it is the
    /// root (guest pid `pid`), holding the turn, at `now_ns`; the guest
    /// pids and tids from `next_pid` on are free.
    pub(crate) fn create(
        pid: i32,
        next_pid: i32,
        now_ns: u64,
        name: &str,
    ) -> std::io::Result<Family> {
        let size = std::mem::size_of::<Shared>();
        // SAFETY: a fresh anonymous shared mapping; zeroed memory is a valid
        // `Shared` (all atomics 0: slots FREE, turn 0).
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the mapping is never unmapped, so it lives as long as the
        // emulator (and its forks, which inherit it).
        let shared: &'static Shared = unsafe { &*(p as *const Shared) };
        // Orphans of the tree are reparented to the root, which reaps them.
        // SAFETY: prctl with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        let f = Family {
            shared,
            me: 0,
            horizon_ns: u64::MAX,
        };
        shared.next_pid.store(next_pid, SeqCst);
        // SAFETY: getpid has no preconditions.
        f.init_slot(0, NONE, pid, unsafe { libc::getpid() }, now_ns, name);
        shared.turn.store(0, SeqCst);
        Ok(f)
    }

    fn slot(&self, k: u32) -> &'static Slot {
        &self.shared.slots[k as usize]
    }

    fn used(&self) -> u32 {
        self.shared.used.load(SeqCst)
    }

    fn init_slot(&self, k: u32, parent: u32, pid: i32, host_pid: i32, now_ns: u64, name: &str) {
        let s = self.slot(k);
        s.pid.store(pid, SeqCst);
        s.host_pid.store(host_pid, SeqCst);
        s.parent.store(parent, SeqCst);
        s.seq
            .store(self.shared.next_seq.fetch_add(1, SeqCst), SeqCst);
        let parent_seq = if parent == NONE {
            u64::MAX
        } else {
            self.slot(parent).seq.load(SeqCst)
        };
        s.parent_seq.store(parent_seq, SeqCst);
        s.ready_ns.store(now_ns, SeqCst);
        s.since_ns.store(now_ns, SeqCst);
        s.waits.store(0, SeqCst);
        s.woken_ns.store(u64::MAX, SeqCst);
        s.signals.store(0, SeqCst);
        s.sender.store(0, SeqCst);
        s.status.store(0, SeqCst);
        s.start_ns.store(now_ns, SeqCst);
        s.exit_ns.store(0, SeqCst);
        s.insns.store(0, SeqCst);
        s.cpu_ns.store(0, SeqCst);
        s.vfork_child.store(NONE, SeqCst);
        Self::store_name(s, name);
        s.state.store(RUNNABLE, SeqCst);
        self.shared.live.fetch_add(1, SeqCst);
        if k >= self.used() {
            self.shared.used.store(k + 1, SeqCst);
        }
    }

    fn store_name(s: &Slot, name: &str) {
        Self::store_words(&s.name, name);
    }

    fn store_words(words: &[AtomicU64; 4], name: &str) {
        let mut b = [0u8; 32];
        let n = name.len().min(31);
        b[..n].copy_from_slice(&name.as_bytes()[..n]);
        for (k, w) in words.iter().enumerate() {
            w.store(
                u64::from_le_bytes(b[k * 8..k * 8 + 8].try_into().unwrap()),
                SeqCst,
            );
        }
    }

    fn load_name(s: &Slot) -> String {
        Self::load_words(&s.name)
    }

    fn load_words(words: &[AtomicU64; 4]) -> String {
        let mut b = Vec::with_capacity(32);
        for w in words {
            b.extend_from_slice(&w.load(SeqCst).to_le_bytes());
        }
        let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..n]).into_owned()
    }

    /// A slot and guest pid for a child about to be forked at `now_ns`;
    /// `None` when the tree is full.
    pub(crate) fn add_child(&mut self, now_ns: u64) -> Option<(u32, i32)> {
        let used = self.used();
        let k = (0..used)
            .find(|&k| matches!(self.slot(k).state.load(SeqCst), FREE | REAPED))
            .or_else(|| ((used as usize) < MAX_SLOTS).then_some(used))?;
        let name = Self::load_name(self.slot(self.me));
        let pid = self.alloc_pid();
        self.init_slot(k, self.me, pid, 0, now_ns, &name);
        self.horizon_ns = self.horizon_ns.min(now_ns.saturating_add(QUANTUM_NS));
        Some((k, pid))
    }

    /// A new guest pid or tid, the next in the tree's order.
    pub(crate) fn alloc_pid(&self) -> i32 {
        self.shared.next_pid.fetch_add(1, SeqCst)
    }

    /// The fork of child `k` failed: its slot is free again.
    pub(crate) fn drop_child(&self, k: u32) {
        self.slot(k).state.store(FREE, SeqCst);
        self.shared.live.fetch_sub(1, SeqCst);
    }

    /// The host process of child `k` is `host_pid`.
    pub(crate) fn set_child_pid(&self, k: u32, host_pid: i32) {
        self.slot(k).host_pid.store(host_pid, SeqCst);
    }

    /// In the forked child: this process is slot `k`; waits for its turn.
    pub(crate) fn become_child(&mut self, k: u32) {
        self.me = k;
        self.horizon_ns = u64::MAX;
        self.wait_turn();
    }

    /// Whether another member of the tree is alive.
    pub(crate) fn others_live(&self) -> bool {
        let live = self.shared.live.load(SeqCst);
        let me_live = matches!(self.slot(self.me).state.load(SeqCst), RUNNABLE | BLOCKED);
        live > u32::from(me_live)
    }

    /// The simulated time past which this member should give the turn up.
    pub(crate) fn horizon_ns(&self) -> u64 {
        self.horizon_ns
    }

    /// The members that could run next, as (time, seq, slot), but `except`.
    fn candidates(&self, except: u32) -> impl Iterator<Item = (u64, u64, u32)> + '_ {
        (0..self.used())
            .filter(move |&k| k != except)
            .filter_map(|k| {
                let s = self.slot(k);
                let at = match s.state.load(SeqCst) {
                    RUNNABLE => s.ready_ns.load(SeqCst),
                    BLOCKED => match s.woken_ns.load(SeqCst) {
                        u64::MAX => return None,
                        w => w.max(s.since_ns.load(SeqCst)),
                    },
                    _ => return None,
                };
                Some((at, s.seq.load(SeqCst), k))
            })
    }

    /// After taking the turn: how far this member may run.
    fn set_horizon(&mut self) {
        self.horizon_ns = self
            .candidates(self.me)
            .map(|(at, _, _)| at)
            .min()
            .map_or(u64::MAX, |at| at.saturating_add(QUANTUM_NS));
    }

    /// Waits until this member holds the turn (taking out a holder that
    /// died without passing it).
    fn wait_turn(&mut self) {
        let me = self.me;
        loop {
            let go = self.slot(me).go.load(SeqCst);
            let holder = self.shared.turn.load(SeqCst);
            if holder == me {
                break;
            }
            futex_wait(&self.slot(me).go, go, LIVENESS_MS);
            if self.slot(me).go.load(SeqCst) == go {
                self.check_holder(holder);
            }
        }
        self.set_horizon();
    }

    /// If `holder` still holds the turn but its host process has ended,
    /// takes it out (killed) and passes the turn on.
    fn check_holder(&mut self, holder: u32) {
        if holder == NONE || holder as usize >= MAX_SLOTS {
            return;
        }
        let pid = self.slot(holder).host_pid.load(SeqCst);
        if !host_process_ended(pid) {
            return;
        }
        if self
            .shared
            .turn
            .compare_exchange(holder, self.me, SeqCst, SeqCst)
            .is_err()
        {
            return;
        }
        let s = self.slot(holder);
        if matches!(s.state.load(SeqCst), RUNNABLE | BLOCKED) {
            let at = s.ready_ns.load(SeqCst).max(s.since_ns.load(SeqCst));
            self.mark_exited(holder, killed_status(libc::SIGKILL), at);
        }
        // This member is not necessarily one that can run: pass the turn on.
        self.pass_turn();
    }

    /// Passes the turn to the earliest member that can run, this one
    /// included (then it keeps it); when none can, round the blocked ones.
    fn pass_turn(&mut self) {
        let me = self.me;
        let next = self
            .candidates(NONE)
            .min()
            .map(|(_, _, k)| k)
            .or_else(|| self.next_blocked_after(me));
        match next {
            Some(k) if k == me => {
                self.shared.turn.store(me, SeqCst);
            }
            Some(k) => self.hand_to(k),
            // No member lives: nobody takes the turn.
            None => self.shared.turn.store(NONE, SeqCst),
        }
    }

    /// The next blocked member after `k` in slot order, round the table.
    fn next_blocked_after(&self, k: u32) -> Option<u32> {
        let used = self.used();
        (1..=used)
            .map(|d| (k + d) % used.max(1))
            .find(|&j| self.slot(j).state.load(SeqCst) == BLOCKED)
    }

    fn hand_to(&self, k: u32) {
        self.shared.turn.store(k, SeqCst);
        let s = self.slot(k);
        s.go.fetch_add(1, SeqCst);
        futex_wake(&s.go);
    }

    /// Gives the turn up, able to run again from `ready_ns`; returns once
    /// it holds the turn again.
    pub(crate) fn yield_ready(&mut self, ready_ns: u64) {
        let s = self.slot(self.me);
        s.ready_ns.store(ready_ns, SeqCst);
        s.state.store(RUNNABLE, SeqCst);
        self.pass_turn();
        self.wait_turn();
    }

    /// Every thread waits (for `what`, [`waits`]), since `since_ns`: gives
    /// the turn up until something may have ended the wait. Returns the
    /// simulated time it was woken at (`None`: it polled while the whole
    /// tree was blocked, and `poll(ms)`, its host poll of its descriptors,
    /// found one ready, or nothing woke it).
    pub(crate) fn yield_blocked(
        &mut self,
        since_ns: u64,
        what: u32,
        mut poll: impl FnMut(i32) -> bool,
    ) -> Option<u64> {
        let me = self.me;
        let s = self.slot(me);
        s.since_ns.store(since_ns, SeqCst);
        s.waits.store(what, SeqCst);
        // Woken while it ran (a signal it sent itself is its own business).
        s.woken_ns.store(u64::MAX, SeqCst);
        s.state.store(BLOCKED, SeqCst);
        if self.candidates(NONE).next().is_none() {
            // The whole tree waits: only the host can end it.
            if poll(STUCK_POLL_MS) {
                s.state.store(RUNNABLE, SeqCst);
                s.ready_ns.store(since_ns, SeqCst);
                return None;
            }
            match self.next_blocked_after(me) {
                Some(k) if k != me => {
                    self.slot(k).woken_ns.store(u64::MAX, SeqCst);
                    self.hand_to(k);
                }
                _ => {
                    s.state.store(RUNNABLE, SeqCst);
                    return None;
                }
            }
        } else {
            self.pass_turn();
        }
        self.wait_turn();
        let s = self.slot(me);
        let woken = s.woken_ns.load(SeqCst);
        s.state.store(RUNNABLE, SeqCst);
        s.woken_ns.store(u64::MAX, SeqCst);
        (woken != u64::MAX).then(|| woken.max(since_ns))
    }

    /// A system call made at `now_ns` may have readied what another member
    /// waits for: every member blocked on a descriptor is to look again.
    /// Whether one is (then the caller should give the turn up).
    pub(crate) fn wake_io_waiters(&self, now_ns: u64) -> bool {
        let mut any = false;
        for k in 0..self.used() {
            let s = self.slot(k);
            if k != self.me
                && s.state.load(SeqCst) == BLOCKED
                && s.waits.load(SeqCst) & waits::IO != 0
            {
                s.woken_ns.fetch_min(now_ns, SeqCst);
                any = true;
            }
        }
        any
    }

    fn wake(&self, k: u32, at_ns: u64) {
        let s = self.slot(k);
        if s.state.load(SeqCst) == BLOCKED {
            s.woken_ns.fetch_min(at_ns, SeqCst);
        }
    }

    fn mark_exited(&self, k: u32, status: i32, at_ns: u64) {
        let s = self.slot(k);
        s.status.store(status, SeqCst);
        s.exit_ns.store(at_ns, SeqCst);
        self.record(s);
        let parent = s.parent.load(SeqCst);
        let parent_lives =
            parent != NONE && matches!(self.slot(parent).state.load(SeqCst), RUNNABLE | BLOCKED);
        s.state
            .store(if parent_lives { EXITED } else { REAPED }, SeqCst);
        self.shared.live.fetch_sub(1, SeqCst);
        if parent_lives {
            let p = self.slot(parent);
            p.signals.fetch_or(1 << (libc::SIGCHLD - 1), SeqCst);
            p.sender.store(s.pid.load(SeqCst), SeqCst);
            if p.vfork_child.load(SeqCst) == k {
                p.vfork_child.store(NONE, SeqCst);
            }
            self.wake(parent, at_ns);
        }
        // Its children are orphans now: nobody waits for them.
        for j in 0..self.used() {
            let c = self.slot(j);
            if c.parent.load(SeqCst) == k && c.state.load(SeqCst) != FREE {
                c.parent.store(NONE, SeqCst);
                if c.state.load(SeqCst) == EXITED {
                    c.state.store(REAPED, SeqCst);
                }
            }
        }
    }

    /// This member's guest has ended with wait status `status` at `at_ns`:
    /// records its figures, tells its parent and passes the turn on.
    pub(crate) fn leave(&mut self, status: i32, at_ns: u64, insns: u64, cpu_ns: u64, name: &str) {
        let me = self.me;
        let s = self.slot(me);
        if !matches!(s.state.load(SeqCst), RUNNABLE | BLOCKED) {
            return;
        }
        Self::store_name(s, name);
        s.insns.store(insns, SeqCst);
        s.cpu_ns.store(cpu_ns, SeqCst);
        self.mark_exited(me, status, at_ns);
        if self.shared.live.load(SeqCst) == 0 {
            // The last one: nobody takes the turn, and the root may be
            // waiting for the end.
            self.shared.turn.store(NONE, SeqCst);
            let root = self.slot(0);
            root.go.fetch_add(1, SeqCst);
            futex_wake(&root.go);
        } else {
            self.pass_turn();
        }
    }

    /// The root, after it left: waits until every member has exited.
    pub(crate) fn wait_all(&mut self) {
        let root = self.slot(0);
        while self.shared.live.load(SeqCst) > 0 {
            let go = root.go.load(SeqCst);
            let holder = self.shared.turn.load(SeqCst);
            if self.shared.live.load(SeqCst) == 0 {
                break;
            }
            futex_wait(&root.go, go, LIVENESS_MS);
            if root.go.load(SeqCst) == go {
                self.check_holder(holder);
            }
            if self.shared.turn.load(SeqCst) == self.me && self.shared.live.load(SeqCst) > 0 {
                // Handed the turn by a takeover with nobody runnable.
                self.pass_turn();
            }
        }
    }

    /// Keeps the figures of a member that has exited.
    fn record(&self, s: &Slot) {
        let sh = self.shared;
        sh.exited.fetch_add(1, SeqCst);
        sh.exited_insns.fetch_add(s.insns.load(SeqCst), SeqCst);
        sh.exited_cpu_ns.fetch_add(s.cpu_ns.load(SeqCst), SeqCst);
        let n = sh.records_len.load(SeqCst) as usize;
        if n >= MAX_RECORDS {
            return;
        }
        let r = &sh.records[n];
        r.seq.store(s.seq.load(SeqCst), SeqCst);
        r.parent_seq.store(s.parent_seq.load(SeqCst), SeqCst);
        r.status.store(s.status.load(SeqCst), SeqCst);
        r.insns.store(s.insns.load(SeqCst), SeqCst);
        r.cpu_ns.store(s.cpu_ns.load(SeqCst), SeqCst);
        r.start_ns.store(s.start_ns.load(SeqCst), SeqCst);
        r.end_ns.store(s.exit_ns.load(SeqCst), SeqCst);
        for (a, b) in r.name.iter().zip(&s.name) {
            a.store(b.load(SeqCst), SeqCst);
        }
        sh.records_len.store(n as u32 + 1, SeqCst);
    }

    /// The tree's figures once every member has exited.
    pub(crate) fn summary(&self) -> TreeStats {
        let sh = self.shared;
        let n = (sh.records_len.load(SeqCst) as usize).min(MAX_RECORDS);
        let mut members: Vec<MemberStats> = sh.records[..n]
            .iter()
            .map(|r| {
                let parent = r.parent_seq.load(SeqCst);
                MemberStats {
                    seq: r.seq.load(SeqCst),
                    parent: (parent != u64::MAX).then_some(parent),
                    program: Self::load_words(&r.name),
                    status: r.status.load(SeqCst),
                    instructions: r.insns.load(SeqCst),
                    cpu_ns: r.cpu_ns.load(SeqCst),
                    start_ns: r.start_ns.load(SeqCst),
                    end_ns: r.end_ns.load(SeqCst),
                }
            })
            .collect();
        members.sort_by_key(|m| m.seq);
        TreeStats {
            count: sh.exited.load(SeqCst),
            instructions: sh.exited_insns.load(SeqCst),
            cpu_ns: sh.exited_cpu_ns.load(SeqCst),
            members,
        }
    }

    /// A child of this member matching `pid` (-1 or below, or 0: any;
    /// else its guest pid) that has exited, oldest first; with `reap`, it is
    /// waited for (its slot freed, its host process reaped).
    pub(crate) fn exited_child(&self, pid: i32, reap: bool) -> ChildWait {
        let mut running = false;
        let mut best: Option<(u64, u32)> = None;
        for k in 0..self.used() {
            let s = self.slot(k);
            if s.parent.load(SeqCst) != self.me || (pid > 0 && s.pid.load(SeqCst) != pid) {
                continue;
            }
            match s.state.load(SeqCst) {
                RUNNABLE | BLOCKED => running = true,
                EXITED => {
                    let seq = s.seq.load(SeqCst);
                    if best.is_none_or(|(b, _)| seq < b) {
                        best = Some((seq, k));
                    }
                }
                _ => {}
            }
        }
        let Some((_, k)) = best else {
            return if running {
                ChildWait::Running
            } else {
                ChildWait::NoChild
            };
        };
        let s = self.slot(k);
        let child = ExitedChild {
            pid: s.pid.load(SeqCst),
            host_pid: s.host_pid.load(SeqCst),
            status: s.status.load(SeqCst),
            cpu_ns: s.cpu_ns.load(SeqCst),
        };
        if reap {
            s.state.store(REAPED, SeqCst);
            s.parent.store(NONE, SeqCst);
            let mut st = 0;
            // The host process has told its end and is about to exit.
            // SAFETY: `st` outlives the call.
            unsafe { libc::waitpid(child.host_pid, &mut st, 0) };
        }
        ChildWait::Exited(child)
    }

    /// Reaps every exited child at once (the parent ignores `SIGCHLD`, so
    /// its children do not become zombies).
    pub(crate) fn reap_all_children(&self) {
        while let ChildWait::Exited(_) = self.exited_child(-1, true) {}
    }

    /// The live member other than this one of guest pid `pid`.
    fn member(&self, pid: i32) -> Option<u32> {
        (0..self.used()).find(|&k| {
            let s = self.slot(k);
            k != self.me
                && s.pid.load(SeqCst) == pid
                && matches!(s.state.load(SeqCst), RUNNABLE | BLOCKED)
        })
    }

    /// The slot that holds (or last held) guest pid `pid`.
    fn slot_of(&self, pid: i32) -> Option<u32> {
        (0..self.used()).rev().find(|&k| {
            let s = self.slot(k);
            s.state.load(SeqCst) != FREE && s.pid.load(SeqCst) == pid
        })
    }

    /// The host pid of the member of guest pid `pid` that is alive.
    pub(crate) fn host_pid_of(&self, pid: i32) -> Option<i32> {
        let k = self.slot_of(pid)?;
        let s = self.slot(k);
        matches!(s.state.load(SeqCst), RUNNABLE | BLOCKED).then(|| s.host_pid.load(SeqCst))
    }

    /// The guest pid of the live member whose host pid is `host_pid`.
    pub(crate) fn guest_pid_of(&self, host_pid: i32) -> Option<i32> {
        (0..self.used())
            .map(|k| self.slot(k))
            .find(|s| {
                matches!(s.state.load(SeqCst), RUNNABLE | BLOCKED)
                    && s.host_pid.load(SeqCst) == host_pid
            })
            .map(|s| s.pid.load(SeqCst))
    }

    /// What the tree knows of guest pid `pid` (the latest process of it),
    /// if it was ever a member other than this one.
    pub(crate) fn lookup(&self, pid: i32) -> Option<MemberState> {
        let k = self.slot_of(pid).filter(|&k| k != self.me)?;
        Some(match self.slot(k).state.load(SeqCst) {
            RUNNABLE | BLOCKED => MemberState::Live,
            EXITED => MemberState::Zombie,
            _ => MemberState::Gone,
        })
    }

    /// The guest's parent pid: the parent's; 1 (init) for an orphan;
    /// [`FIRST_PARENT_PID`] for the first process.
    pub(crate) fn parent_pid(&self) -> i32 {
        match self.slot(self.me).parent.load(SeqCst) {
            NONE if self.me == 0 => FIRST_PARENT_PID,
            NONE => 1,
            p => self.slot(p).pid.load(SeqCst),
        }
    }

    /// Sends guest signal `sig` from `sender` at `now_ns` to the member
    /// of guest pid `pid`; `false` if there is none such.
    pub(crate) fn signal(&self, pid: i32, sig: i32, sender: i32, now_ns: u64) -> bool {
        let Some(k) = self.member(pid) else {
            return false;
        };
        if sig != 0 {
            let s = self.slot(k);
            s.signals.fetch_or(1 << (sig - 1), SeqCst);
            s.sender.store(sender, SeqCst);
            self.wake(k, now_ns);
        }
        true
    }

    /// Kills every other live member at `at_ns` (the machine stops).
    fn kill_others(&self, at_ns: u64) {
        for k in 0..self.used() {
            let s = self.slot(k);
            if k != self.me && matches!(s.state.load(SeqCst), RUNNABLE | BLOCKED) {
                // SAFETY: kill takes integers; the pid is the tree's.
                unsafe { libc::kill(s.host_pid.load(SeqCst), libc::SIGKILL) };
                self.mark_exited(k, killed_status(libc::SIGKILL), at_ns);
            }
        }
    }

    /// The live members (this one included) in host process group
    /// `pgid` (`None`: all), by guest pid.
    pub(crate) fn group_pids(&self, pgid: Option<i32>) -> Vec<i32> {
        (0..self.used())
            .map(|k| self.slot(k))
            .filter(|s| matches!(s.state.load(SeqCst), RUNNABLE | BLOCKED))
            // SAFETY: getpgid takes an integer.
            .filter(|s| pgid.is_none_or(|g| unsafe { libc::getpgid(s.host_pid.load(SeqCst)) } == g))
            .map(|s| s.pid.load(SeqCst))
            .collect()
    }

    /// The signals members sent to this one since it last looked (bit n-1
    /// = signal n), and the last sender.
    pub(crate) fn take_signals(&self) -> (u64, i32) {
        let s = self.slot(self.me);
        if s.signals.load(SeqCst) == 0 {
            return (0, 0);
        }
        (s.signals.swap(0, SeqCst), s.sender.load(SeqCst))
    }

    /// This member vforked child `k`: it waits until the child execs or
    /// exits, from `now_ns`; returns the time it goes on from.
    pub(crate) fn wait_vfork(&mut self, k: u32, now_ns: u64) -> u64 {
        self.slot(self.me).vfork_child.store(k, SeqCst);
        let mut at = now_ns;
        while self.slot(self.me).vfork_child.load(SeqCst) == k {
            match self.yield_blocked(at, waits::VFORK, |_| false) {
                Some(t) => at = at.max(t),
                None => break,
            }
        }
        at
    }

    /// This member replaced its program (`execve`) at `now_ns`: a parent
    /// waiting for it since its `vfork` goes on.
    pub(crate) fn exec_done(&self, now_ns: u64) {
        let parent = self.slot(self.me).parent.load(SeqCst);
        if parent != NONE && self.slot(parent).vfork_child.load(SeqCst) == self.me {
            self.slot(parent).vfork_child.store(NONE, SeqCst);
            self.wake(parent, now_ns);
        }
    }
}
