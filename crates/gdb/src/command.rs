//! Parsing of the packets gdb sends into [`Command`]s.

use rvnvmm_hart::debug::WatchKind;

/// A thread as gdb names it in `H`, `T` and `vCont`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadRef {
    /// `-1`: every thread.
    All,
    /// `0`: any thread.
    Any,
    /// One thread.
    Id(u64),
}

/// What a `vCont` action asks of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `c`/`C`: continue.
    Continue,
    /// `s`/`S`: one instruction.
    Step,
    /// `t`: stay stopped.
    Stop,
}

/// A breakpoint or watchpoint of a `Z`/`z` packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// `Z0` software or `Z1` hardware breakpoint (the same here).
    Break,
    /// `Z2`/`Z3`/`Z4` watchpoint.
    Watch(WatchKind),
}

/// A request from gdb.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `qSupported`.
    Supported,
    /// `QStartNoAckMode`.
    NoAck,
    /// `?`: why the target stopped.
    StopReason,
    /// `g`.
    ReadRegisters,
    /// `G`: the registers' bytes.
    WriteRegisters(Vec<u8>),
    /// `p n`.
    ReadRegister(u32),
    /// `P n=v`: the value's bytes.
    WriteRegister(u32, Vec<u8>),
    /// `m addr,len`.
    ReadMemory(u64, u64),
    /// `M addr,len:hex` and `X addr,len:binary`: the bytes.
    WriteMemory(u64, Vec<u8>),
    /// `c`, `s`, `vCont;...`: per thread actions, the default last
    /// (`None`: every other thread).
    Resume(Vec<(Action, Option<u64>)>),
    /// `vCont?`.
    ResumeActions,
    /// `Z`: insert a point at an address of a length.
    Insert(Point, u64, u64),
    /// `z`: remove it.
    Remove(Point, u64, u64),
    /// `qfThreadInfo`.
    FirstThreads,
    /// `qsThreadInfo`.
    MoreThreads,
    /// `Hg`/`Hc` (the operation letter, the thread).
    SetThread(u8, ThreadRef),
    /// `T thread`: is it alive.
    ThreadAlive(u64),
    /// `qC`.
    CurrentThread,
    /// `qAttached`.
    Attached,
    /// `qXfer:features:read:annex:offset,length`.
    Features(String, u64, u64),
    /// `k`, `vKill`.
    Kill,
    /// `D`.
    Detach,
    /// Anything else: answered with the empty packet.
    Unsupported,
}

/// Parses a packet's data; `None` if it is malformed.
pub fn parse(data: &[u8]) -> Option<Command> {
    let (&first, rest) = data.split_first()?;
    let text = std::str::from_utf8(rest).ok();
    Some(match first {
        b'?' => Command::StopReason,
        b'g' => Command::ReadRegisters,
        b'G' => Command::WriteRegisters(unhex(text?)?),
        b'p' => Command::ReadRegister(u32::from_str_radix(text?, 16).ok()?),
        b'P' => {
            let (n, v) = text?.split_once('=')?;
            Command::WriteRegister(u32::from_str_radix(n, 16).ok()?, unhex(v)?)
        }
        b'm' => {
            let (a, l) = text?.split_once(',')?;
            Command::ReadMemory(num(a)?, num(l)?)
        }
        b'M' => {
            let (al, v) = text?.split_once(':')?;
            let (a, l) = al.split_once(',')?;
            let bytes = unhex(v)?;
            (bytes.len() as u64 == num(l)?).then_some(())?;
            Command::WriteMemory(num(a)?, bytes)
        }
        b'X' => {
            let colon = rest.iter().position(|&b| b == b':')?;
            let al = std::str::from_utf8(&rest[..colon]).ok()?;
            let (a, l) = al.split_once(',')?;
            let bytes = rest[colon + 1..].to_vec();
            (bytes.len() as u64 == num(l)?).then_some(())?;
            Command::WriteMemory(num(a)?, bytes)
        }
        // A resume address is not supported by gdb for RISC-V; ignore it.
        b'c' | b'C' => Command::Resume(vec![(Action::Continue, None)]),
        b's' | b'S' => Command::Resume(vec![(Action::Step, None)]),
        b'Z' | b'z' => {
            let mut parts = text?.split(',');
            let point = match parts.next()? {
                "0" | "1" => Point::Break,
                "2" => Point::Watch(WatchKind::Write),
                "3" => Point::Watch(WatchKind::Read),
                "4" => Point::Watch(WatchKind::Access),
                _ => return Some(Command::Unsupported),
            };
            let addr = num(parts.next()?)?;
            let kind = num(parts.next()?.split(';').next()?)?;
            if first == b'Z' {
                Command::Insert(point, addr, kind)
            } else {
                Command::Remove(point, addr, kind)
            }
        }
        b'H' => {
            let text = text?;
            let op = *text.as_bytes().first()?;
            Command::SetThread(op, thread_ref(&text[1..])?)
        }
        b'T' => Command::ThreadAlive(num(text?)?),
        b'k' => Command::Kill,
        b'D' => Command::Detach,
        b'q' | b'Q' | b'v' => return parse_named(std::str::from_utf8(data).ok()?),
        _ => Command::Unsupported,
    })
}

/// The packets named by a word: `q...`, `Q...`, `v...`.
fn parse_named(text: &str) -> Option<Command> {
    Some(if text.starts_with("qSupported") {
        Command::Supported
    } else if text == "QStartNoAckMode" {
        Command::NoAck
    } else if text == "qfThreadInfo" {
        Command::FirstThreads
    } else if text == "qsThreadInfo" {
        Command::MoreThreads
    } else if text == "qC" {
        Command::CurrentThread
    } else if text.starts_with("qAttached") {
        Command::Attached
    } else if let Some(rest) = text.strip_prefix("qXfer:features:read:") {
        let (annex, range) = rest.split_once(':')?;
        let (off, len) = range.split_once(',')?;
        Command::Features(annex.to_string(), num(off)?, num(len)?)
    } else if text == "vCont?" {
        Command::ResumeActions
    } else if let Some(actions) = text.strip_prefix("vCont;") {
        let mut parsed = Vec::new();
        for a in actions.split(';') {
            let (act, thread) = match a.split_once(':') {
                Some((act, t)) => match thread_ref(t)? {
                    ThreadRef::Id(id) => (act, Some(id)),
                    _ => (act, None),
                },
                None => (a, None),
            };
            let action = match act.as_bytes().first()? {
                b'c' | b'C' => Action::Continue,
                b's' | b'S' => Action::Step,
                b't' => Action::Stop,
                _ => return None,
            };
            parsed.push((action, thread));
        }
        Command::Resume(parsed)
    } else if text.starts_with("vKill") {
        Command::Kill
    } else {
        Command::Unsupported
    })
}

/// A thread id: hex, or `-1`/`0`. A `pPID.TID` form names the thread.
fn thread_ref(text: &str) -> Option<ThreadRef> {
    let text = match text.strip_prefix('p') {
        Some(t) => t.split_once('.').map_or(t, |(_, tid)| tid),
        None => text,
    };
    Some(match text {
        "-1" => ThreadRef::All,
        "0" => ThreadRef::Any,
        t => ThreadRef::Id(num(t)?),
    })
}

/// A hex number.
fn num(text: &str) -> Option<u64> {
    u64::from_str_radix(text, 16).ok()
}

/// Hex pairs as bytes.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Bytes as hex pairs.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_register_and_memory_packets() {
        assert_eq!(parse(b"p20"), Some(Command::ReadRegister(0x20)));
        assert_eq!(
            parse(b"P1=0100000000000000"),
            Some(Command::WriteRegister(1, vec![1, 0, 0, 0, 0, 0, 0, 0]))
        );
        assert_eq!(parse(b"m10078,8"), Some(Command::ReadMemory(0x10078, 8)));
        assert_eq!(
            parse(b"M2000,2:abcd"),
            Some(Command::WriteMemory(0x2000, vec![0xab, 0xcd]))
        );
        assert_eq!(
            parse(b"X2000,2:#}"),
            Some(Command::WriteMemory(0x2000, b"#}".to_vec()))
        );
        // A length that does not match the data is malformed.
        assert_eq!(parse(b"M2000,3:abcd"), None);
        assert_eq!(parse(b"pzz"), None);
    }

    #[test]
    fn parses_points_and_resumes() {
        assert_eq!(
            parse(b"Z0,10078,2"),
            Some(Command::Insert(Point::Break, 0x10078, 2))
        );
        assert_eq!(
            parse(b"z2,4000,8"),
            Some(Command::Remove(Point::Watch(WatchKind::Write), 0x4000, 8))
        );
        assert_eq!(parse(b"Z9,0,0"), Some(Command::Unsupported));
        assert_eq!(
            parse(b"vCont;s:p1.2;c"),
            Some(Command::Resume(vec![
                (Action::Step, Some(2)),
                (Action::Continue, None)
            ]))
        );
        assert_eq!(
            parse(b"c"),
            Some(Command::Resume(vec![(Action::Continue, None)]))
        );
        assert_eq!(parse(b"vCont?"), Some(Command::ResumeActions));
    }

    #[test]
    fn parses_threads_and_queries() {
        assert_eq!(
            parse(b"Hg-1"),
            Some(Command::SetThread(b'g', ThreadRef::All))
        );
        assert_eq!(
            parse(b"Hc2a"),
            Some(Command::SetThread(b'c', ThreadRef::Id(0x2a)))
        );
        assert_eq!(parse(b"T3"), Some(Command::ThreadAlive(3)));
        assert_eq!(
            parse(b"qXfer:features:read:target.xml:0,ffb"),
            Some(Command::Features("target.xml".into(), 0, 0xffb))
        );
        assert_eq!(
            parse(b"qSupported:multiprocess+;swbreak+"),
            Some(Command::Supported)
        );
        assert_eq!(parse(b"vKill;1"), Some(Command::Kill));
        assert_eq!(parse(b"qTStatus"), Some(Command::Unsupported));
    }

    #[test]
    fn hex_round_trips() {
        assert_eq!(unhex(&hex(&[0, 0x7f, 0xff])), Some(vec![0, 0x7f, 0xff]));
        assert_eq!(unhex("abc"), None);
    }
}
