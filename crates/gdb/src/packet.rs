//! Packet framing of the GDB remote serial protocol: `$data#cc` with a
//! two-digit hex checksum, `+`/`-` acknowledgements, `}` escapes and the
//! interrupt byte 0x03.

/// Something received from gdb.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incoming {
    /// A packet whose checksum matched: its data, escapes undone.
    Packet(Vec<u8>),
    /// A packet whose checksum did not match (to be refused with `-`).
    Corrupt,
    /// The interrupt byte (gdb's Ctrl-C).
    Interrupt,
}

/// The modulo-256 sum of `data`.
pub fn checksum(data: &[u8]) -> u8 {
    data.iter().fold(0u8, |sum, &b| sum.wrapping_add(b))
}

/// `data` framed as a packet, with the characters the protocol reserves
/// escaped.
pub fn frame(data: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(data.len() + 4);
    for &b in data {
        if matches!(b, b'$' | b'#' | b'}' | b'*') {
            body.push(b'}');
            body.push(b ^ 0x20);
        } else {
            body.push(b);
        }
    }
    let mut out = Vec::with_capacity(body.len() + 4);
    out.push(b'$');
    out.extend_from_slice(&body);
    out.extend_from_slice(format!("#{:02x}", checksum(&body)).as_bytes());
    out
}

/// Splits a byte stream from gdb into packets, acknowledgements dropped.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    /// Appends bytes received.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Takes the interrupt bytes out of what arrived while the machine ran
    /// (gdb sends nothing else then); whether there was one.
    pub fn take_interrupt(&mut self) -> bool {
        let before = self.buf.len();
        self.buf.retain(|&b| b != 0x03);
        self.buf.len() != before
    }

    /// The next complete item, if one has arrived.
    pub fn next_item(&mut self) -> Option<Incoming> {
        loop {
            let first = *self.buf.first()?;
            match first {
                0x03 => {
                    self.buf.remove(0);
                    return Some(Incoming::Interrupt);
                }
                b'$' => break,
                // Acknowledgements and noise between packets.
                _ => {
                    self.buf.remove(0);
                }
            }
        }
        let hash = self.buf.iter().position(|&b| b == b'#')?;
        if self.buf.len() < hash + 3 {
            return None;
        }
        let body = self.buf[1..hash].to_vec();
        let sum = std::str::from_utf8(&self.buf[hash + 1..hash + 3])
            .ok()
            .and_then(|s| u8::from_str_radix(s, 16).ok());
        self.buf.drain(..hash + 3);
        if sum != Some(checksum(&body)) {
            return Some(Incoming::Corrupt);
        }
        Some(Incoming::Packet(unescape(&body)))
    }
}

/// Undoes `}` escapes (the checksum covers the escaped form).
fn unescape(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut bytes = body.iter();
    while let Some(&b) = bytes.next() {
        if b == b'}' {
            if let Some(&e) = bytes.next() {
                out.push(e ^ 0x20);
            }
        } else {
            out.push(b);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_with_checksum_and_escapes() {
        assert_eq!(frame(b"OK"), b"$OK#9a");
        let escaped = b"a}\x03b";
        let expected = [
            &b"$"[..],
            escaped,
            format!("#{:02x}", checksum(escaped)).as_bytes(),
        ]
        .concat();
        assert_eq!(frame(b"a#b"), expected);
    }

    #[test]
    fn decodes_packets_acks_and_interrupts() {
        let mut d = Decoder::default();
        d.push(b"+$g#67");
        d.push(b"\x03$m10");
        assert_eq!(d.next_item(), Some(Incoming::Packet(b"g".to_vec())));
        assert_eq!(d.next_item(), Some(Incoming::Interrupt));
        assert_eq!(d.next_item(), None);
        d.push(b",4#");
        assert_eq!(d.next_item(), None);
        d.push(b"2e");
        assert_eq!(d.next_item(), Some(Incoming::Packet(b"m10,4".to_vec())));
        d.push(b"+\x03");
        assert!(d.take_interrupt());
        assert!(!d.take_interrupt());
    }

    #[test]
    fn refuses_a_bad_checksum_and_unescapes() {
        let mut d = Decoder::default();
        d.push(b"$g#00");
        assert_eq!(d.next_item(), Some(Incoming::Corrupt));
        let framed = frame(b"X0,1:}");
        d.push(&framed);
        assert_eq!(d.next_item(), Some(Incoming::Packet(b"X0,1:}".to_vec())));
    }
}
